//! When a schedule's runs fall due (issue 50): every day, week or month from
//! its start, counted in Lagos time (WAT, no daylight saving), each run's time
//! computed from the start and its number — never from the run before — so a
//! short month does not move the runs after it.
//!
//! A monthly run keeps the start's day of the month; a month without that day
//! (a start on the 31st in April, on the 29th–31st in February) runs on its
//! last day, and the month after is back on the start's day.

use crate::clock::LAGOS;
use time::{Date, Duration, Month, OffsetDateTime};

/// How often a schedule runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    Day,
    Week,
    Month,
}

impl Every {
    pub const ALL: [Every; 3] = [Every::Day, Every::Week, Every::Month];

    pub fn as_str(self) -> &'static str {
        match self {
            Every::Day => "day",
            Every::Week => "week",
            Every::Month => "month",
        }
    }

    /// "daily", "weekly", "monthly": what a person reads.
    pub fn adverb(self) -> &'static str {
        match self {
            Every::Day => "daily",
            Every::Week => "weekly",
            Every::Month => "monthly",
        }
    }
}

impl std::str::FromStr for Every {
    type Err = String;
    fn from_str(s: &str) -> Result<Every, String> {
        Every::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| "must be day, week or month".to_owned())
    }
}

impl std::fmt::Display for Every {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The Unix ms run `n` (1: the start) of a schedule starting at `start_ms` falls due.
pub fn due_at(start_ms: i64, every: Every, n: u64) -> i64 {
    let start = OffsetDateTime::from_unix_timestamp_nanos(i128::from(start_ms) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .to_offset(LAGOS);
    let steps = n.saturating_sub(1);
    let at = match every {
        Every::Day => start + Duration::days(steps as i64),
        Every::Week => start + Duration::weeks(steps as i64),
        Every::Month => start.replace_date(months_after(start.date(), steps)),
    };
    (at.unix_timestamp_nanos() / 1_000_000) as i64
}

/// The last run due at `now_ms`, counting from run `first` (which is due):
/// the run to make now; those between `first` and it were missed.
pub fn latest_due(start_ms: i64, every: Every, first: u64, now_ms: i64) -> u64 {
    let mut n = first;
    while due_at(start_ms, every, n + 1) <= now_ms {
        n += 1;
    }
    n
}

/// The first run due at or after `now_ms`, counting from `first` (a resumed
/// schedule's next run: what fell due while it was paused is not made).
pub fn next_due(start_ms: i64, every: Every, first: u64, now_ms: i64) -> u64 {
    let mut n = first;
    while due_at(start_ms, every, n) < now_ms {
        n += 1;
    }
    n
}

/// `day`'s day of the month, `months` later, or that month's last day.
fn months_after(day: Date, months: u64) -> Date {
    let index = i64::from(day.year()) * 12 + i64::from(u8::from(day.month())) - 1 + months as i64;
    let year = index.div_euclid(12) as i32;
    let month = Month::try_from((index.rem_euclid(12) + 1) as u8).unwrap_or(Month::January);
    let last = month.length(year);
    Date::from_calendar_date(year, month, day.day().min(last)).unwrap_or(day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{parse_rfc3339_ms, rfc3339};

    fn run(start: &str, every: Every, n: u64) -> String {
        rfc3339(due_at(parse_rfc3339_ms(start).unwrap(), every, n))
    }

    #[test]
    fn days_and_weeks_step_from_the_start() {
        let start = "2026-11-29T08:00:00.000+00:00";
        assert_eq!(run(start, Every::Day, 1), start);
        assert_eq!(run(start, Every::Day, 2), "2026-11-30T08:00:00.000+00:00");
        assert_eq!(run(start, Every::Week, 3), "2026-12-13T08:00:00.000+00:00");
    }

    #[test]
    fn the_31st_runs_on_a_shorter_months_last_day_then_on_the_31st_again() {
        // 09:00 in Lagos on 31 January 2027
        let start = "2027-01-31T08:00:00.000+00:00";
        assert_eq!(run(start, Every::Month, 2), "2027-02-28T08:00:00.000+00:00");
        assert_eq!(run(start, Every::Month, 3), "2027-03-31T08:00:00.000+00:00");
        assert_eq!(run(start, Every::Month, 4), "2027-04-30T08:00:00.000+00:00");
        assert_eq!(
            run(start, Every::Month, 13),
            "2028-01-31T08:00:00.000+00:00"
        );
        assert_eq!(
            run(start, Every::Month, 14),
            "2028-02-29T08:00:00.000+00:00"
        );
    }

    #[test]
    fn months_are_counted_in_lagos_not_utc() {
        // 00:30 on 1 December in Lagos is 23:30 on 30 November UTC: the run
        // stays on the 1st of each month, Lagos time.
        let start = "2026-11-30T23:30:00.000+00:00";
        assert_eq!(run(start, Every::Month, 2), "2026-12-31T23:30:00.000+00:00");
        assert_eq!(run(start, Every::Month, 3), "2027-01-31T23:30:00.000+00:00");
    }

    #[test]
    fn a_late_runner_makes_only_the_last_run_due() {
        let start = parse_rfc3339_ms("2026-11-01T08:00:00.000+00:00").unwrap();
        let now = parse_rfc3339_ms("2026-11-04T09:00:00.000+00:00").unwrap();
        assert_eq!(latest_due(start, Every::Day, 1, now), 4);
        assert_eq!(latest_due(start, Every::Week, 1, now), 1);
        assert_eq!(next_due(start, Every::Day, 1, now), 5);
    }
}
