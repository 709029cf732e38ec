//! Wall-clock helpers: unix milliseconds for scheduling, RFC 3339 with an
//! explicit `+00:00` offset for everything stored and sent to clients, and
//! Lagos days (what people count in: the UIs, the sales report).

use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

/// Lagos time (WAT): UTC+1 all year, no daylight saving.
pub const LAGOS: UtcOffset = match UtcOffset::from_hms(1, 0, 0) {
    Ok(offset) => offset,
    Err(_) => panic!("a valid offset"),
};

/// Today's date in Lagos.
pub fn lagos_today() -> Date {
    OffsetDateTime::now_utc().to_offset(LAGOS).date()
}

/// The Lagos day of a stored time (RFC 3339, as written by [`rfc3339`]).
pub fn lagos_day_of(text: &str) -> Option<Date> {
    let at = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some(at.to_offset(LAGOS).date())
}

/// Midnight starting a Lagos day, as stored times are written (UTC, fixed
/// width): `2026-11-25` → `2026-11-24T23:00:00.000+00:00`.
pub fn lagos_day_start(day: Date) -> String {
    let utc = PrimitiveDateTime::new(day, Time::MIDNIGHT).assume_offset(LAGOS);
    rfc3339((utc.unix_timestamp_nanos() / 1_000_000) as i64)
}

/// The Lagos date at a Unix millisecond.
pub fn lagos_date_at(ms: i64) -> Date {
    OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .to_offset(LAGOS)
        .date()
}

pub fn now_ms() -> i64 {
    (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

/// `2026-11-22T01:51:22.123+00:00`: fixed width, so it also sorts as text.
pub fn rfc3339(ms: i64) -> String {
    let at = OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    at.format(format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]+00:00"
    ))
    .expect("fixed format always formats")
}

/// Unix ms of an RFC 3339 time (as written by [`rfc3339`]).
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let at = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some((at.unix_timestamp_nanos() / 1_000_000) as i64)
}

pub fn now_rfc3339() -> String {
    rfc3339(now_ms())
}

/// A new reference code or event id: `prefix` + Unix ms + 48 random bits in
/// hex. Unique (two codes in one millisecond collide with odds of 1 in 2^48),
/// sortable by time, not guessable.
pub fn new_code(prefix: &str) -> String {
    use rand::Rng;
    let suffix: u64 = rand::rng().random_range(0..1 << 48);
    format!("{prefix}{}{suffix:012X}", now_ms())
}

#[cfg(test)]
mod tests {
    #[test]
    fn codes_are_unique_and_prefixed() {
        let codes: std::collections::HashSet<String> =
            (0..10_000).map(|_| super::new_code("BP")).collect();
        assert_eq!(codes.len(), 10_000);
        assert!(
            codes
                .iter()
                .all(|c| c.starts_with("BP") && c.len() == 2 + 13 + 12)
        );
    }

    #[test]
    fn lagos_days_start_at_23_utc() {
        let day = time::macros::date!(2026 - 11 - 25);
        assert_eq!(super::lagos_day_start(day), "2026-11-24T23:00:00.000+00:00");
    }

    #[test]
    fn a_stored_time_falls_in_its_lagos_day() {
        let day = |text| super::lagos_day_of(text).unwrap().to_string();
        assert_eq!(day("2026-11-24T22:59:59.999+00:00"), "2026-11-24");
        assert_eq!(day("2026-11-24T23:00:00.000+00:00"), "2026-11-25");
        assert!(super::lagos_day_of("not a time").is_none());
    }

    #[test]
    fn formats_with_offset() {
        assert_eq!(
            super::rfc3339(1_795_312_282_123),
            "2026-11-22T01:51:22.123+00:00"
        );
    }
}
