//! How many supplier requeries callbacks may cause (hardening finding 7: a
//! stranger posting callbacks must not make billpay hammer its supplier).
//! A purchase is rechecked at most once at a time and at most once per
//! [`Limits::min_interval`]; a callback inside it is coalesced (the recheck
//! that ran or runs answers it). The endpoint as a whole has at most
//! [`Limits::max_in_flight`] rechecks running, and remembers at most
//! [`Limits::max_tracked`] purchases (pruned of those past their interval);
//! past either bound a callback is dropped. Nothing is lost by either: the
//! fulfilment worker requeries every purchase still processing on its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use std::time::Instant;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

#[derive(Debug, Clone)]
pub struct Limits {
    /// Between two rechecks of one purchase (counted from the first's start).
    pub min_interval: Duration,
    /// Rechecks running at once, all purchases together.
    pub max_in_flight: usize,
    /// Purchases remembered (a few dozen bytes each).
    pub max_tracked: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            min_interval: Duration::from_secs(30),
            max_in_flight: 16,
            max_tracked: 10_000,
        }
    }
}

/// Why a callback causes no recheck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A recheck of this purchase is running or ran within the interval.
    Coalesced,
    /// [`Limits::max_in_flight`] rechecks are running.
    Busy,
    /// [`Limits::max_tracked`] purchases were rechecked within the interval.
    Full,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::Coalesced => "a recheck of it is running or recent",
            Refused::Busy => "too many rechecks running",
            Refused::Full => "too many purchases rechecked recently",
        })
    }
}

pub struct RecheckGuard {
    limits: Limits,
    in_flight: Arc<Semaphore>,
    recent: Mutex<HashMap<String, Recent>>,
}

struct Recent {
    started: Instant,
    running: bool,
}

/// Leave to recheck one purchase; dropping it marks the recheck done.
pub struct Permit {
    guard: Arc<RecheckGuard>,
    code: String,
    _slot: OwnedSemaphorePermit,
}

impl RecheckGuard {
    pub fn new(limits: Limits) -> RecheckGuard {
        RecheckGuard {
            in_flight: Arc::new(Semaphore::new(limits.max_in_flight)),
            recent: Mutex::default(),
            limits,
        }
    }

    /// Leave to recheck `code` now, or why not.
    pub fn admit(self: &Arc<Self>, code: &str) -> Result<Permit, Refused> {
        self.admit_at(code, Instant::now())
    }

    /// [`admit`](Self::admit) at the moment `now` (tests choose it).
    fn admit_at(self: &Arc<Self>, code: &str, now: Instant) -> Result<Permit, Refused> {
        let interval = self.limits.min_interval;
        let holds = |r: &Recent| r.running || now.duration_since(r.started) < interval;
        let mut recent = self.recent.lock().expect("never poisoned");
        if let Some(last) = recent.get(code) {
            if holds(last) {
                return Err(Refused::Coalesced);
            }
        } else if recent.len() >= self.limits.max_tracked {
            recent.retain(|_, r| holds(r));
            if recent.len() >= self.limits.max_tracked {
                return Err(Refused::Full);
            }
        }
        let slot = self
            .in_flight
            .clone()
            .try_acquire_owned()
            .map_err(|_| Refused::Busy)?;
        recent.insert(
            code.to_owned(),
            Recent {
                started: now,
                running: true,
            },
        );
        Ok(Permit {
            guard: self.clone(),
            code: code.to_owned(),
            _slot: slot,
        })
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut recent = self.guard.recent.lock().expect("never poisoned");
        if let Some(entry) = recent.get_mut(&self.code) {
            entry.running = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERVAL: Duration = Duration::from_secs(30);

    fn guard(max_in_flight: usize, max_tracked: usize) -> Arc<RecheckGuard> {
        Arc::new(RecheckGuard::new(Limits {
            min_interval: INTERVAL,
            max_in_flight,
            max_tracked,
        }))
    }

    #[test]
    fn one_recheck_per_purchase_at_a_time_and_per_interval() {
        let (guard, start) = (guard(16, 100), Instant::now());
        let first = guard.admit_at("BP1", start).unwrap();
        assert_eq!(guard.admit_at("BP1", start).err(), Some(Refused::Coalesced));
        assert!(
            guard.admit_at("BP2", start).is_ok(),
            "another purchase is not held up"
        );
        drop(first);
        let soon = start + INTERVAL - Duration::from_millis(1);
        assert_eq!(
            guard.admit_at("BP1", soon).err(),
            Some(Refused::Coalesced),
            "done, but inside the interval"
        );
        assert!(
            guard.admit_at("BP1", start + INTERVAL).is_ok(),
            "the interval is over"
        );
    }

    #[test]
    fn a_recheck_longer_than_the_interval_still_holds_its_purchase() {
        let (guard, start) = (guard(16, 100), Instant::now());
        let running = guard.admit_at("BP1", start).unwrap();
        let later = start + 2 * INTERVAL;
        assert_eq!(guard.admit_at("BP1", later).err(), Some(Refused::Coalesced));
        drop(running);
        assert!(guard.admit_at("BP1", later).is_ok());
    }

    #[test]
    fn the_endpoint_has_a_bound_on_rechecks_running() {
        let (guard, start) = (guard(2, 100), Instant::now());
        let running = [
            guard.admit_at("BP1", start).unwrap(),
            guard.admit_at("BP2", start).unwrap(),
        ];
        assert_eq!(guard.admit_at("BP3", start).err(), Some(Refused::Busy));
        drop(running);
        assert!(guard.admit_at("BP3", start).is_ok(), "a slot is free again");
    }

    #[test]
    fn memory_is_bounded_and_pruned_of_what_is_past_its_interval() {
        let (guard, start) = (guard(16, 3), Instant::now());
        for code in ["BP1", "BP2", "BP3"] {
            drop(guard.admit_at(code, start).unwrap());
        }
        assert_eq!(guard.admit_at("BP4", start).err(), Some(Refused::Full));
        assert_eq!(guard.recent.lock().unwrap().len(), 3);
        assert!(
            guard.admit_at("BP4", start + INTERVAL).is_ok(),
            "the old ones were pruned"
        );
        assert_eq!(guard.recent.lock().unwrap().len(), 1);
    }
}
