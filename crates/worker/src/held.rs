//! Purchases held for review (docs/limits.md) never wait in silence: a
//! periodic pass tells each one's customer that it is held and until when
//! (once: the notice's cause names the purchase), and cancels and refunds
//! one that no owner reviewed within the review window — the promise the
//! notice and the receipt make.
//!
//! Every worker node runs the pass: the outbox's unique cause makes the
//! notice once, and a rejection changes only a purchase still held (under
//! its row's lock), so two nodes cancelling one refund it once.

use crate::fulfilment::{Outcome, settle};
use billpay_store::clock::{now_ms, parse_rfc3339_ms, rfc3339};
use billpay_store::{NewLogEntry, SharedStore, StoreResult, Transaction, work};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How long a held purchase waits for an owner by default: a day.
pub const DEFAULT_HELD_REVIEW: Duration = Duration::from_secs(24 * 3600);

/// Held purchases looked at in one pass (oldest first); more wait for the next.
const PER_PASS: u32 = 500;

/// What a purchase nobody reviewed in time tells its customer (after
/// "Transaction failed: ").
pub const NOT_REVIEWED: &str = "it was held for review and not reviewed in time";

/// The log line's actor for what the service decides by itself.
pub const SERVICE: &str = "billpay";

#[derive(Clone)]
pub struct HeldReview {
    store: SharedStore,
    /// How long a held purchase waits for an owner before it is refunded.
    window: Duration,
}

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Held purchases still waiting (each customer's notice queued once).
    pub waiting: usize,
    /// Refunded: no owner reviewed them in the window.
    pub expired: usize,
}

impl HeldReview {
    pub fn new(store: SharedStore, window: Duration) -> Self {
        HeldReview { store, window }
    }

    /// When `tx`, held, is refunded if nobody reviews it (RFC 3339).
    pub fn deadline(placed: &str, window: Duration) -> Option<String> {
        let placed = parse_rfc3339_ms(placed)?;
        Some(rfc3339(placed + window.as_millis() as i64))
    }

    /// One pass over the held purchases.
    pub async fn run_once(&self) -> StoreResult<Pass> {
        let mut pass = Pass::default();
        for tx in self.store.held_purchases(PER_PASS).await? {
            let Some(until) = Self::deadline(&tx.created_at, self.window) else {
                tracing::warn!(code = tx.code, "held purchase with an unreadable time");
                continue;
            };
            if parse_rfc3339_ms(&until).is_some_and(|at| at <= now_ms()) {
                pass.expired += usize::from(self.expire(&tx).await?);
            } else {
                self.store.notice_purchase_held(&tx.code, &until).await?;
                pass.waiting += 1;
            }
        }
        Ok(pass)
    }

    /// Fails and refunds `tx` as an owner's rejection would, with the
    /// service's line in the log; `false` when it was decided meanwhile.
    async fn expire(&self, tx: &Transaction) -> StoreResult<bool> {
        let (code, fin) = settle(tx, Outcome::Failed(NOT_REVIEWED));
        let log = NewLogEntry {
            actor: SERVICE.to_owned(),
            action: "transaction.reject".to_owned(),
            subject: code.clone(),
            after: Some("rejected".to_owned()),
            reason: Some(format!(
                "not reviewed within {} of being held",
                spoken(self.window)
            )),
            ..NewLogEntry::default()
        };
        let rejected = self
            .store
            .write((code, fin, log), |tx, (code, fin, log)| {
                Box::pin(work::reject_held_logged(tx, code, fin, log))
            })
            .await?;
        if rejected {
            tracing::info!(
                code = tx.code,
                "held purchase not reviewed in time: refunded"
            );
        }
        Ok(rejected)
    }

    /// A pass every `every` until `shutdown`; a failed pass is logged and
    /// tried again next time.
    pub async fn run(self, every: Duration, shutdown: Arc<Notify>) {
        let mut ticks = tokio::time::interval(every);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                _ = shutdown.notified() => return,
            }
            if let Err(e) = self.run_once().await {
                tracing::warn!(error = %e, "the held-purchases pass failed");
            }
        }
    }
}

/// A window as a person reads it: `24 h`, `90 min`, `45 s`.
fn spoken(window: Duration) -> String {
    match window.as_secs() {
        s if s >= 3600 && s % 3600 == 0 => format!("{} h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_is_the_placing_time_plus_the_window() {
        let day = Duration::from_secs(86_400);
        let until = HeldReview::deadline("2026-11-29T10:00:00Z", day).unwrap();
        assert_eq!(
            parse_rfc3339_ms(&until),
            parse_rfc3339_ms("2026-11-30T10:00:00Z")
        );
        assert_eq!(HeldReview::deadline("yesterday", day), None);
    }

    #[test]
    fn windows_are_spoken_in_their_largest_whole_unit() {
        assert_eq!(spoken(Duration::from_secs(86_400)), "24 h");
        assert_eq!(spoken(Duration::from_secs(5_400)), "90 min");
        assert_eq!(spoken(Duration::from_secs(45)), "45 s");
    }
}
