//! Retry schedule (Standard Webhooks style).

use std::time::Duration;

const MINUTE: u64 = 60;
const HOUR: u64 = 60 * MINUTE;

/// Delay before each retry: after the 1st failed attempt wait 5 s, after the
/// 2nd 5 min, then 30 min, 2 h, 5 h, 10 h and 10 h. Eight attempts in all
/// (one plus seven retries), spread over about 27.6 hours.
pub const RETRY_SCHEDULE: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * MINUTE),
    Duration::from_secs(30 * MINUTE),
    Duration::from_secs(2 * HOUR),
    Duration::from_secs(5 * HOUR),
    Duration::from_secs(10 * HOUR),
    Duration::from_secs(10 * HOUR),
];

/// How long to wait before the next attempt, given how many attempts have
/// failed so far.
///
/// `retry_delay(1)` (after the first failed attempt) is 5 s, ...,
/// `retry_delay(7)` is 10 h, and `retry_delay(8)` is `None`: give up.
/// `retry_delay(0)` is also `None`, since nothing has failed yet.
pub fn retry_delay(failed_attempts: u32) -> Option<Duration> {
    let index = usize::try_from(failed_attempts.checked_sub(1)?).ok()?;
    RETRY_SCHEDULE.get(index).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_values() {
        let expected = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];
        for (i, secs) in expected.into_iter().enumerate() {
            assert_eq!(RETRY_SCHEDULE[i], Duration::from_secs(secs));
        }
    }

    #[test]
    fn delay_after_each_failure() {
        assert_eq!(retry_delay(0), None);
        assert_eq!(retry_delay(1), Some(Duration::from_secs(5)));
        assert_eq!(retry_delay(2), Some(Duration::from_secs(5 * 60)));
        assert_eq!(retry_delay(3), Some(Duration::from_secs(30 * 60)));
        assert_eq!(retry_delay(4), Some(Duration::from_secs(2 * 3600)));
        assert_eq!(retry_delay(5), Some(Duration::from_secs(5 * 3600)));
        assert_eq!(retry_delay(6), Some(Duration::from_secs(10 * 3600)));
        assert_eq!(retry_delay(7), Some(Duration::from_secs(10 * 3600)));
        assert_eq!(retry_delay(8), None);
        assert_eq!(retry_delay(u32::MAX), None);
    }
}
