//! Pruning: sign-ups never verified ([`PruneUnverified`]), the limits'
//! usage rows past every limit's window and the throttles' counters whose
//! window ended ([`PruneUsage`]), each hourly on the node holding its job's
//! lease.
//!
//! Sign-ups never verified (issue 31): a customer's own account
//! whose address was not proven within [`UNVERIFIED_FOR`] is removed, unless
//! it holds anything (money, a ledger entry, a purchase, a key, a funding
//! account or payment: the store checks, in the deleting statement). Runs
//! hourly on whichever node holds the job's lease.

use billpay_store::SharedStore;
use billpay_store::clock::{lagos_today, now_ms, rfc3339};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How long a sign-up may stay unverified.
pub const UNVERIFIED_FOR: Duration = Duration::from_secs(7 * 24 * 60 * 60);
const JOB: &str = "prune-unverified";
const EVERY: Duration = Duration::from_secs(60 * 60);

#[derive(Clone)]
pub struct PruneUnverified {
    store: SharedStore,
}

impl PruneUnverified {
    pub fn new(store: SharedStore) -> Self {
        PruneUnverified { store }
    }

    /// One pass: the accounts removed.
    pub async fn run_once(&self) -> billpay_store::StoreResult<u64> {
        let cutoff = rfc3339(now_ms() - UNVERIFIED_FOR.as_millis() as i64);
        let pruned = self.store.prune_unverified(&cutoff).await?;
        if pruned > 0 {
            tracing::info!(pruned, "removed sign-ups never verified");
        }
        Ok(pruned)
    }

    /// Every hour on the node holding the job's lease, until `shutdown`.
    pub async fn run(self, holder: String, shutdown: Arc<Notify>) {
        let lease = EVERY + Duration::from_secs(60);
        loop {
            match self.store.take_job_lease(JOB, &holder, lease).await {
                Ok(true) => {
                    if let Err(e) = self.run_once().await {
                        tracing::warn!(error = %e, "pruning unverified sign-ups failed");
                    }
                }
                Ok(false) => tracing::debug!("another node prunes unverified sign-ups"),
                Err(e) => tracing::warn!(error = %e, "pruning unverified sign-ups: no lease"),
            }
            tokio::select! {
                _ = tokio::time::sleep(EVERY) => {}
                _ = shutdown.notified() => return,
            }
        }
    }
}

const USAGE_JOB: &str = "prune-usage";

/// Pruning the limits' usage rows (issue 32): the day's and the recipients'
/// rows older than the 30-day window and the day before it
/// (`limits::USAGE_DAYS_KEPT` Lagos days kept), the hourly counts older
/// than 2 hours (`limits::USAGE_HOURS_KEPT`); and the throttles' counters
/// whose window has ended (`ThrottleStore::prune_throttles`). No limit or
/// throttle reads what goes, so they answer as before. Runs hourly on
/// whichever node holds the job's lease.
#[derive(Clone)]
pub struct PruneUsage {
    store: SharedStore,
}

impl PruneUsage {
    pub fn new(store: SharedStore) -> Self {
        PruneUsage { store }
    }

    /// One pass: the rows removed.
    pub async fn run_once(&self) -> billpay_store::StoreResult<u64> {
        let (before_day, before_hour) =
            billpay_store::limits::usage_prune_bounds(lagos_today(), now_ms());
        let usage = self.store.prune_usage(&before_day, before_hour).await?;
        let throttles = self.store.prune_throttles(now_ms()).await?;
        let pruned = usage + throttles;
        if pruned > 0 {
            tracing::info!(
                pruned,
                before_day,
                throttles,
                "removed usage rows past every limit's window and ended throttle windows"
            );
        }
        Ok(pruned)
    }

    /// Every hour on the node holding the job's lease, until `shutdown`.
    pub async fn run(self, holder: String, shutdown: Arc<Notify>) {
        let lease = EVERY + Duration::from_secs(60);
        loop {
            match self.store.take_job_lease(USAGE_JOB, &holder, lease).await {
                Ok(true) => {
                    if let Err(e) = self.run_once().await {
                        tracing::warn!(error = %e, "pruning usage rows failed");
                    }
                }
                Ok(false) => tracing::debug!("another node prunes usage rows"),
                Err(e) => tracing::warn!(error = %e, "pruning usage rows: no lease"),
            }
            tokio::select! {
                _ = tokio::time::sleep(EVERY) => {}
                _ = shutdown.notified() => return,
            }
        }
    }
}
