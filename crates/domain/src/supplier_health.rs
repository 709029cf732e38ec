//! A supplier's health (issue 47): its definite failures and timeouts in a
//! row, and the back-off that follows too many of them. The rules are here,
//! pure; the store keeps each supplier's record in one row every node shares
//! (`supplier_health`), the fulfilment worker records each answer, and the
//! routes skip a supplier that is backing off.
//!
//! - Healthy: fewer than [`HealthRules::failures`] failures in a row.
//! - The failure that reaches it starts a back-off of [`HealthRules::backoff`]:
//!   the supplier is skipped until it ends (an "episode" of being down).
//! - Then the first purchase that takes the probe ([`SupplierHealth::take_probe`],
//!   one at a time, for [`HealthRules::probe_lease`]) is the test: delivered,
//!   the supplier is healthy again; failed, the back-off starts again, twice as
//!   long each time, at most [`HealthRules::backoff_max`].
//! - Any delivery makes it healthy (a late answer of a purchase sent before the
//!   back-off says it works again).

use std::time::Duration;

/// The catalogue code of a plan's expected cost at a supplier, in Naira
/// (`codes = { acme = { plan = "1", cost = "245.50" } }`, written by
/// `catalogue sync --apply` or by hand): the cheapest route's known cost.
pub const EXPECTED_COST: &str = "cost";

/// The expected cost the codes name, if any (a malformed one is none).
pub fn expected_cost(codes: &crate::catalogue::SupplierCodes) -> Option<crate::Kobo> {
    crate::Kobo::parse_naira(codes.get(EXPECTED_COST)?).ok()
}

/// How many of a supplier's last errors are kept.
pub const LAST_ERRORS: usize = 5;
/// The longest error message kept (characters).
const MESSAGE_MAX: usize = 200;

/// When a supplier is skipped and for how long (`[routing]`'s settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthRules {
    /// Definite failures or timeouts in a row that make it unhealthy.
    pub failures: u32,
    /// The first back-off; each failed probe doubles it.
    pub backoff: Duration,
    /// The longest back-off.
    pub backoff_max: Duration,
    /// How long one probe is the only purchase sent to it (after that,
    /// another purchase may probe: the first one's node may have died).
    pub probe_lease: Duration,
}

impl Default for HealthRules {
    fn default() -> Self {
        HealthRules {
            failures: 3,
            backoff: Duration::from_secs(60),
            backoff_max: Duration::from_secs(30 * 60),
            probe_lease: Duration::from_secs(120),
        }
    }
}

impl HealthRules {
    /// The `nth` back-off in a row (1 = the first): doubled each time, capped.
    pub fn backoff(&self, nth: u32) -> Duration {
        let doubled = 2u32.checked_pow(nth.saturating_sub(1)).unwrap_or(u32::MAX);
        self.backoff
            .checked_mul(doubled)
            .unwrap_or(self.backoff_max)
            .min(self.backoff_max)
    }
}

/// One error a supplier gave, for people.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HealthError {
    /// When (Unix ms).
    pub at_ms: i64,
    pub message: String,
}

/// What a supplier's answer says about its health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// It delivered.
    Delivered,
    /// A definite failure, a timeout or no answer: a message for people.
    Failure(String),
}

/// Where a supplier is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthState {
    Healthy,
    /// Skipped until then (Unix ms).
    BackingOff {
        until_ms: i64,
    },
    /// One purchase is testing it, until then at most (Unix ms): skipped by others.
    Probing {
        until_ms: i64,
    },
    /// The back-off is over: the next purchase is the probe.
    ProbeDue,
}

impl HealthState {
    /// Whether a purchase may be sent to it (a probe due included).
    pub fn usable(self) -> bool {
        matches!(self, HealthState::Healthy | HealthState::ProbeDue)
    }

    /// In a word, for people and `--json`.
    pub fn name(self) -> &'static str {
        match self {
            HealthState::Healthy => "healthy",
            HealthState::BackingOff { .. } => "backing off",
            HealthState::Probing { .. } | HealthState::ProbeDue => "probing",
        }
    }
}

/// A change the owner is told of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// It became unhealthy: its `episode`th time.
    Down { episode: u32 },
    /// It came back from its `episode`th time.
    Back { episode: u32 },
}

/// One supplier's record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SupplierHealth {
    pub supplier: String,
    /// Definite failures and timeouts in a row.
    pub failures: u32,
    /// Back-offs in a row (the next one's length).
    pub backoffs: u32,
    /// While unhealthy: the end of its back-off (Unix ms); `None`: healthy.
    pub backoff_until_ms: Option<i64>,
    /// A probe in flight until then (Unix ms).
    pub probe_until_ms: Option<i64>,
    /// How many times it became unhealthy.
    pub episodes: u32,
    /// When it last became unhealthy, and last came back (Unix ms).
    pub down_at_ms: Option<i64>,
    pub back_at_ms: Option<i64>,
    /// The last few errors, oldest first.
    pub last_errors: Vec<HealthError>,
}

impl SupplierHealth {
    pub fn new(supplier: &str) -> SupplierHealth {
        SupplierHealth {
            supplier: supplier.to_owned(),
            ..SupplierHealth::default()
        }
    }

    pub fn state(&self, now_ms: i64) -> HealthState {
        match (self.backoff_until_ms, self.probe_until_ms) {
            (None, _) => HealthState::Healthy,
            (Some(until_ms), _) if now_ms < until_ms => HealthState::BackingOff { until_ms },
            (Some(_), Some(until_ms)) if now_ms < until_ms => HealthState::Probing { until_ms },
            _ => HealthState::ProbeDue,
        }
    }

    /// Records one answer at `now_ms`; answers the change the owner is told of.
    pub fn record(
        &mut self,
        answer: &Answer,
        rules: &HealthRules,
        now_ms: i64,
    ) -> Option<Transition> {
        match answer {
            Answer::Delivered => {
                self.failures = 0;
                self.backoffs = 0;
                self.probe_until_ms = None;
                self.backoff_until_ms.take()?;
                self.back_at_ms = Some(now_ms);
                Some(Transition::Back {
                    episode: self.episodes,
                })
            }
            Answer::Failure(message) => {
                self.failures = self.failures.saturating_add(1);
                self.last_errors.push(HealthError {
                    at_ms: now_ms,
                    message: for_people(message),
                });
                let extra = self.last_errors.len().saturating_sub(LAST_ERRORS);
                self.last_errors.drain(..extra);
                match self.state(now_ms) {
                    HealthState::Healthy if self.failures >= rules.failures.max(1) => {
                        self.backoffs = 1;
                        self.back_off(rules, now_ms);
                        self.episodes = self.episodes.saturating_add(1);
                        self.down_at_ms = Some(now_ms);
                        Some(Transition::Down {
                            episode: self.episodes,
                        })
                    }
                    // The probe (or a purchase after the back-off) failed: longer.
                    HealthState::Probing { .. } | HealthState::ProbeDue => {
                        self.backoffs = self.backoffs.saturating_add(1);
                        self.back_off(rules, now_ms);
                        None
                    }
                    // Counted; a purchase sent before the back-off does not lengthen it.
                    HealthState::Healthy | HealthState::BackingOff { .. } => None,
                }
            }
        }
    }

    fn back_off(&mut self, rules: &HealthRules, now_ms: i64) {
        let length = rules.backoff(self.backoffs).as_millis() as i64;
        self.backoff_until_ms = Some(now_ms.saturating_add(length));
        self.probe_until_ms = None;
    }

    /// Takes the probe when one is due: this purchase is the test, alone
    /// for the rules' probe lease.
    pub fn take_probe(&mut self, rules: &HealthRules, now_ms: i64) -> bool {
        if self.state(now_ms) != HealthState::ProbeDue {
            return false;
        }
        let lease = rules.probe_lease.as_millis() as i64;
        self.probe_until_ms = Some(now_ms.saturating_add(lease));
        true
    }
}

/// A message as kept: one line, at most 200 characters, and no URL's query
/// or credentials (a supplier's error may quote the URL it called).
pub fn for_people(message: &str) -> String {
    let words = message.split_whitespace().map(|word| {
        match (word.contains("://"), word.find(['?', '@'])) {
            (true, Some(cut)) => format!("{}…", &word[..cut]),
            _ => word.to_owned(),
        }
    });
    let line = words.collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(MESSAGE_MAX) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    fn fail(health: &mut SupplierHealth, now: i64) -> Option<Transition> {
        let rules = HealthRules::default();
        health.record(&Answer::Failure("refused".into()), &rules, now)
    }

    #[test]
    fn three_failures_in_a_row_back_off_and_a_delivery_between_starts_again() {
        let rules = HealthRules::default();
        let mut h = SupplierHealth::new("acme");
        assert_eq!(fail(&mut h, 0), None);
        assert_eq!(fail(&mut h, 1), None);
        h.record(&Answer::Delivered, &rules, 2);
        assert_eq!((h.failures, h.state(2)), (0, HealthState::Healthy));
        assert_eq!(fail(&mut h, 3), None);
        assert_eq!(fail(&mut h, 4), None);
        assert_eq!(fail(&mut h, 5), Some(Transition::Down { episode: 1 }));
        assert_eq!(h.state(6), HealthState::BackingOff { until_ms: 5 + MIN });
        assert!(!h.state(6).usable());
        // A late failure during the back-off is counted, not lengthening it.
        assert_eq!(fail(&mut h, 7), None);
        assert_eq!((h.failures, h.backoff_until_ms), (4, Some(5 + MIN)));
    }

    #[test]
    fn after_the_back_off_one_probe_at_a_time_and_each_failed_probe_doubles_it() {
        let rules = HealthRules::default();
        let mut h = SupplierHealth::new("acme");
        for at in 0..3 {
            fail(&mut h, at);
        }
        let end = 2 + MIN;
        assert!(!h.take_probe(&rules, end - 1), "still backing off");
        assert_eq!(h.state(end), HealthState::ProbeDue);
        assert!(h.take_probe(&rules, end));
        assert!(!h.take_probe(&rules, end + 1), "one probe at a time");
        assert_eq!(h.state(end + 1).name(), "probing");
        assert_eq!(fail(&mut h, end + 10), None);
        assert_eq!(h.backoff_until_ms, Some(end + 10 + 2 * MIN), "doubled");
        let end = end + 10 + 2 * MIN;
        assert!(h.take_probe(&rules, end));
        fail(&mut h, end);
        assert_eq!(h.backoff_until_ms, Some(end + 4 * MIN));
        // A probe whose node died: another may take it after the lease.
        let end = end + 4 * MIN;
        assert!(h.take_probe(&rules, end));
        assert!(h.take_probe(&rules, end + rules.probe_lease.as_millis() as i64));
        let back = h.record(&Answer::Delivered, &rules, end + 1);
        assert_eq!(back, Some(Transition::Back { episode: 1 }));
        assert_eq!(h.state(end + 1), HealthState::Healthy);
        assert_eq!((h.failures, h.backoffs, h.probe_until_ms), (0, 0, None));
        // The next episode starts from the first back-off again.
        for at in 0..3 {
            fail(&mut h, end + 2 + at);
        }
        assert_eq!(h.episodes, 2);
        assert_eq!(h.backoff_until_ms, Some(end + 4 + MIN));
    }

    #[test]
    fn the_back_off_grows_to_its_cap() {
        let rules = HealthRules::default();
        let secs = |n| rules.backoff(n).as_secs();
        assert_eq!([secs(1), secs(2), secs(3), secs(6)], [60, 120, 240, 1800]);
        assert_eq!(secs(40), 1800);
    }

    #[test]
    fn the_last_five_errors_are_kept_for_people() {
        let rules = HealthRules::default();
        let mut h = SupplierHealth::new("acme");
        for at in 0..7 {
            let message = format!("error {at}: GET https://x.test/a?key=SECRET failed");
            h.record(&Answer::Failure(message), &rules, at);
        }
        let kept: Vec<_> = h.last_errors.iter().map(|e| e.at_ms).collect();
        assert_eq!(kept, [2, 3, 4, 5, 6]);
        assert_eq!(
            h.last_errors[4].message,
            "error 6: GET https://x.test/a… failed"
        );
        assert_eq!(for_people(&"x".repeat(300)).chars().count(), 201);
        assert_eq!(for_people("a\n  b"), "a b");
    }
}
