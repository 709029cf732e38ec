//! How many supplier requeries callbacks may cause (hardening finding 7: a
//! stranger posting callbacks must not make billpay hammer its supplier),
//! without ever losing the last word (issue 27: a supplier's "cancelled" 5 s
//! after its "completed" must still be heard).
//!
//! A purchase is rechecked at most once at a time and at most once per
//! [`Limits::min_interval`] (counted from a recheck's start). A callback
//! while one runs or inside the interval is coalesced into **one pending
//! recheck**, run when the interval ends (or, for a recheck longer than it,
//! as soon as it is done): however many callbacks come meanwhile, one more
//! recheck, never none and never more. So a steady stream of callbacks for
//! one purchase costs one requery per interval, and the last of them is
//! still answered by a requery that starts after it.
//!
//! The endpoint as a whole has at most [`Limits::max_in_flight`] rechecks
//! running, and remembers at most [`Limits::max_tracked`] purchases (pruned
//! of those past their interval with nothing pending); a new purchase past
//! either bound is dropped (the fulfilment worker requeries every purchase
//! still processing, and watches successful ones for a reversal, on its own).
//! The callback endpoint admits here only request ids that name a purchase
//! sent to that supplier, so ids of nothing cannot fill the table.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

#[derive(Debug, Clone)]
pub struct Limits {
    /// Between two rechecks of one purchase (counted from the first's start).
    pub min_interval: Duration,
    /// Rechecks running at once, all purchases together.
    pub max_in_flight: usize,
    /// Purchases remembered (a few dozen bytes each, and for those with a
    /// recheck pending or running, one task).
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

/// What became of a callback the guard took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// A recheck starts now.
    Now,
    /// A recheck runs or ran within the interval: one more is pending, run
    /// when the interval ends.
    Pending,
}

/// Why a callback causes no recheck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A recheck of this purchase is already pending (it will answer this one too).
    Coalesced,
    /// [`Limits::max_in_flight`] rechecks are running.
    Busy,
    /// [`Limits::max_tracked`] purchases were rechecked within the interval.
    Full,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::Coalesced => "a recheck of it is already pending",
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
    /// One more recheck after this one (at most one).
    pending: bool,
}

impl Recent {
    /// Whether a callback now is answered by this purchase's current or
    /// pending recheck rather than a new one.
    fn holds(&self, now: Instant, interval: Duration) -> bool {
        self.running || self.pending || now.duration_since(self.started) < interval
    }
}

/// Leave to recheck one purchase now (its share of [`Limits::max_in_flight`]).
struct Permit {
    code: String,
    slot: OwnedSemaphorePermit,
}

impl RecheckGuard {
    pub fn new(limits: Limits) -> RecheckGuard {
        RecheckGuard {
            in_flight: Arc::new(Semaphore::new(limits.max_in_flight)),
            recent: Mutex::default(),
            limits,
        }
    }

    /// A callback asks to recheck `code`: `recheck()` runs in the background
    /// now, or once more after the current one's interval (pending), or the
    /// callback is refused. Never more than one recheck of `code` at a time
    /// and per interval, and never more than one pending.
    pub fn request<R, F>(self: &Arc<Self>, code: &str, recheck: R) -> Result<Admitted, Refused>
    where
        R: Fn() -> F + Send + Sync + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let permit = match self.admit_at(code, Instant::now())? {
            Admission::Now(permit) => permit,
            Admission::Pending => return Ok(Admitted::Pending),
        };
        let guard = self.clone();
        tokio::spawn(async move {
            let Permit { code, slot } = permit;
            let mut slot = Some(slot);
            loop {
                // In a task of its own: a panic in it still ends this recheck.
                let _ = tokio::spawn(recheck()).await;
                drop(slot.take());
                let Some(until) = guard.done(&code) else {
                    break;
                };
                tokio::time::sleep_until(until).await;
                if !guard.take_pending(&code, Instant::now()) {
                    break;
                }
                let next = guard.in_flight.clone().acquire_owned().await;
                slot = Some(next.expect("the semaphore is never closed"));
            }
        });
        Ok(Admitted::Now)
    }

    /// [`request`](Self::request)'s decision at the moment `now` (tests choose it).
    fn admit_at(self: &Arc<Self>, code: &str, now: Instant) -> Result<Admission, Refused> {
        let interval = self.limits.min_interval;
        let mut recent = self.recent.lock().expect("never poisoned");
        if let Some(last) = recent.get_mut(code) {
            if last.holds(now, interval) {
                if last.pending {
                    return Err(Refused::Coalesced);
                }
                last.pending = true;
                return Ok(Admission::Pending);
            }
        } else if recent.len() >= self.limits.max_tracked {
            recent.retain(|_, r| r.holds(now, interval));
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
                pending: false,
            },
        );
        Ok(Admission::Now(Permit {
            code: code.to_owned(),
            slot,
        }))
    }

    /// A recheck of `code` is done: when its interval ends (when a pending
    /// one may run), or `None` if the entry is gone.
    fn done(&self, code: &str) -> Option<Instant> {
        let mut recent = self.recent.lock().expect("never poisoned");
        let entry = recent.get_mut(code)?;
        entry.running = false;
        Some(entry.started + self.limits.min_interval)
    }

    /// The interval of `code` is over: its pending recheck, if any, starts
    /// now (`true`), holding the purchase as a new recheck.
    fn take_pending(&self, code: &str, now: Instant) -> bool {
        let mut recent = self.recent.lock().expect("never poisoned");
        match recent.get_mut(code) {
            Some(entry) if entry.pending && !entry.running => {
                *entry = Recent {
                    started: now,
                    running: true,
                    pending: false,
                };
                true
            }
            _ => false,
        }
    }
}

/// What [`RecheckGuard::admit_at`] decided for a callback it takes.
enum Admission {
    Now(Permit),
    Pending,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const INTERVAL: Duration = Duration::from_secs(30);

    fn guard(max_in_flight: usize, max_tracked: usize) -> Arc<RecheckGuard> {
        guard_every(INTERVAL, max_in_flight, max_tracked)
    }

    fn guard_every(interval: Duration, in_flight: usize, tracked: usize) -> Arc<RecheckGuard> {
        Arc::new(RecheckGuard::new(Limits {
            min_interval: interval,
            max_in_flight: in_flight,
            max_tracked: tracked,
        }))
    }

    fn now(admission: Result<Admission, Refused>) -> Permit {
        match admission {
            Ok(Admission::Now(permit)) => permit,
            Ok(Admission::Pending) => panic!("pending, not now"),
            Err(refused) => panic!("refused: {refused}"),
        }
    }

    fn pending(admission: Result<Admission, Refused>) -> bool {
        matches!(admission, Ok(Admission::Pending))
    }

    /// The end of a recheck, as `request`'s task does it.
    fn finish(guard: &RecheckGuard, permit: Permit) {
        guard.done(&permit.code);
    }

    #[test]
    fn one_recheck_at_a_time_and_per_interval_and_one_pending_after_it() {
        let (guard, start) = (guard(16, 100), Instant::now());
        let first = now(guard.admit_at("BP1", start));
        assert!(
            pending(guard.admit_at("BP1", start)),
            "the last word is kept"
        );
        assert_eq!(
            guard.admit_at("BP1", start).err(),
            Some(Refused::Coalesced),
            "one pending, never more"
        );
        now(guard.admit_at("BP2", start)); // another purchase is not held up
        finish(&guard, first);
        let soon = start + INTERVAL - Duration::from_millis(1);
        assert_eq!(guard.admit_at("BP1", soon).err(), Some(Refused::Coalesced));
        assert!(guard.take_pending("BP1", start + INTERVAL));
        assert!(pending(guard.admit_at("BP1", start + INTERVAL)));
    }

    #[test]
    fn a_recheck_longer_than_the_interval_still_holds_its_purchase() {
        let (guard, start) = (guard(16, 100), Instant::now());
        let running = now(guard.admit_at("BP1", start));
        let later = start + 2 * INTERVAL;
        assert!(pending(guard.admit_at("BP1", later)));
        assert_eq!(guard.done("BP1"), Some(start + INTERVAL), "already over");
        drop(running);
        assert!(
            guard.take_pending("BP1", later),
            "its pending one runs at once"
        );
        assert!(!guard.take_pending("BP1", later), "once");
    }

    #[test]
    fn without_a_pending_one_a_purchase_is_free_after_its_interval() {
        let (guard, start) = (guard(16, 100), Instant::now());
        finish(&guard, now(guard.admit_at("BP1", start)));
        assert!(!guard.take_pending("BP1", start + INTERVAL));
        now(guard.admit_at("BP1", start + INTERVAL));
    }

    #[test]
    fn the_endpoint_has_a_bound_on_rechecks_running() {
        let (guard, start) = (guard(2, 100), Instant::now());
        let running = [
            now(guard.admit_at("BP1", start)),
            now(guard.admit_at("BP2", start)),
        ];
        assert_eq!(guard.admit_at("BP3", start).err(), Some(Refused::Busy));
        assert!(!guard.recent.lock().unwrap().contains_key("BP3"));
        drop(running);
        now(guard.admit_at("BP3", start)); // a slot is free again
    }

    #[test]
    fn memory_is_bounded_and_pruned_of_what_is_past_its_interval() {
        let (guard, start) = (guard(16, 3), Instant::now());
        for code in ["BP1", "BP2", "BP3"] {
            finish(&guard, now(guard.admit_at(code, start)));
        }
        assert!(pending(guard.admit_at("BP3", start)));
        assert_eq!(guard.admit_at("BP4", start).err(), Some(Refused::Full));
        assert_eq!(guard.recent.lock().unwrap().len(), 3);
        now(guard.admit_at("BP4", start + INTERVAL)); // the old ones were pruned
        let kept = guard.recent.lock().unwrap();
        assert_eq!(kept.len(), 2, "BP3 has a recheck pending: kept");
        assert!(kept.contains_key("BP3"));
    }

    #[tokio::test]
    async fn callbacks_during_a_recheck_cause_exactly_one_more_after_the_interval() {
        let interval = Duration::from_millis(200);
        let guard = guard_every(interval, 16, 100);
        let runs = Arc::new(AtomicUsize::new(0));
        let recheck = {
            let runs = runs.clone();
            move || {
                let runs = runs.clone();
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                }
            }
        };
        assert_eq!(guard.request("BP1", recheck.clone()), Ok(Admitted::Now));
        // "completed", then "cancelled" 5 s later (here: within the interval).
        assert_eq!(guard.request("BP1", recheck.clone()), Ok(Admitted::Pending));
        for _ in 0..10 {
            assert_eq!(
                guard.request("BP1", recheck.clone()),
                Err(Refused::Coalesced)
            );
        }
        tokio::time::sleep(interval / 2).await;
        assert_eq!(runs.load(Ordering::SeqCst), 1, "not before the interval");
        tokio::time::sleep(interval).await;
        assert_eq!(runs.load(Ordering::SeqCst), 2, "the pending one ran");
        tokio::time::sleep(2 * interval).await;
        assert_eq!(runs.load(Ordering::SeqCst), 2, "and only one");
        assert_eq!(guard.in_flight.available_permits(), 16);
        assert_eq!(guard.request("BP1", recheck), Ok(Admitted::Now));
    }
}
