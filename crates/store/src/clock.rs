//! Wall-clock helpers: unix milliseconds for scheduling, RFC 3339 with an
//! explicit `+00:00` offset for everything shown to people and clients.

use time::OffsetDateTime;
use time::macros::format_description;

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
    fn formats_with_offset() {
        assert_eq!(
            super::rfc3339(1_795_312_282_123),
            "2026-11-22T01:51:22.123+00:00"
        );
    }
}
