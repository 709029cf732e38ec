//! Display helpers every UI shares: money as `₦1,500.25`, and times in Lagos
//! time (WAT, UTC+1 all year): the one place a stored time (RFC 3339, UTC)
//! becomes text a person reads — a page's full form ([`lagos_time`]), a
//! table's short one ([`short_time`], its column saying WAT) and a CSV's or
//! the CLI's ([`sortable_time`], its header or its `WAT` saying the zone).

use billpay_store::clock::LAGOS;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

/// The one money formatter (`billpay_domain::naira`), here beside the times.
pub use billpay_domain::naira;

/// A stored time in Lagos; `None` when it is not RFC 3339.
fn in_lagos(rfc3339: &str) -> Option<OffsetDateTime> {
    let at = OffsetDateTime::parse(rfc3339, &Rfc3339).ok()?;
    Some(at.to_offset(LAGOS))
}

/// Formats a stored time in Lagos with `format`; text that is no time is
/// shown as it is.
fn lagos_with(
    rfc3339: &str,
    format: &[time::format_description::BorrowedFormatItem<'_>],
) -> String {
    in_lagos(rfc3339)
        .and_then(|at| at.format(format).ok())
        .unwrap_or_else(|| rfc3339.to_owned())
}

/// `2026-11-25T19:15:42.123+00:00` → `25 Nov 2026, 20:15 WAT`.
pub fn lagos_time(rfc3339: &str) -> String {
    lagos_with(
        rfc3339,
        format_description!("[day padding:none] [month repr:short] [year], [hour]:[minute] WAT"),
    )
}

/// `2026-11-25T19:15:42.123+00:00` → `25 Nov 20:15` (Lagos time; the year
/// is added when it is not this year's: `1 Jan 2025 00:30`).
pub fn short_time(rfc3339: &str) -> String {
    let this_year = OffsetDateTime::now_utc().to_offset(LAGOS).year();
    short_time_in(rfc3339, this_year)
}

fn short_time_in(rfc3339: &str, this_year: i32) -> String {
    match in_lagos(rfc3339) {
        Some(at) if at.year() == this_year => lagos_with(
            rfc3339,
            format_description!("[day padding:none] [month repr:short] [hour]:[minute]"),
        ),
        Some(_) => lagos_with(
            rfc3339,
            format_description!("[day padding:none] [month repr:short] [year] [hour]:[minute]"),
        ),
        None => rfc3339.to_owned(),
    }
}

/// `2026-11-25T19:15:42.123+00:00` → `2026-11-25 20:15:42` (Lagos time):
/// fixed width and sortable, for a CSV (under a header that says
/// `(Lagos, WAT)`) and the CLI's columns.
pub fn sortable_time(rfc3339: &str) -> String {
    lagos_with(
        rfc3339,
        format_description!("[year]-[month]-[day] [hour]:[minute]:[second]"),
    )
}

/// `2026-11-25T19:15:42.123+00:00` → `2026-11-25T20:15` (Lagos time): a
/// `datetime-local` input's value.
pub fn lagos_input(rfc3339: &str) -> String {
    lagos_with(
        rfc3339,
        format_description!("[year]-[month]-[day]T[hour]:[minute]"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_times_are_lagos_times() {
        // 19:15 UTC is 20:15 in Lagos; 23:30 UTC is already the next day there
        assert_eq!(short_time("2026-11-25T19:15:42.123+00:00"), "25 Nov 20:15");
        assert_eq!(
            short_time_in("2026-12-31T23:30:00.000+00:00", 2027),
            "1 Jan 00:30"
        );
        // another year's time says its year
        assert_eq!(
            short_time_in("2025-03-01T08:05:00.000+00:00", 2026),
            "1 Mar 2025 09:05"
        );
    }

    #[test]
    fn full_and_sortable_times_are_lagos_times() {
        assert_eq!(
            lagos_time("2026-11-25T19:15:42.123+00:00"),
            "25 Nov 2026, 20:15 WAT"
        );
        assert_eq!(
            sortable_time("2026-11-25T23:59:59.999+00:00"),
            "2026-11-26 00:59:59"
        );
        // what is not a time is shown as it is, never dropped
        assert_eq!(lagos_time("soon"), "soon");
        assert_eq!(short_time(""), "");
    }
}
