//! The customers' low-balance notice (issue 30): a periodic pass over the
//! accounts whose owner set a low-balance mark on the dashboard's
//! Notifications page. Edge-triggered by the store (`watch_low_balances`):
//! one notice when the balance is under the mark, none again until it has
//! been back at or above it. The purchase path does nothing for it.
//!
//! Every worker node runs the pass; the store's conditional UPDATE and the
//! outbox's unique cause make a notice once per episode however many do.

use billpay_store::{SharedStore, StoreResult};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Customers told in one write; more wait for the next pass.
const PER_PASS: u32 = 500;

#[derive(Clone)]
pub struct LowBalance {
    store: SharedStore,
}

impl LowBalance {
    pub fn new(store: SharedStore) -> Self {
        LowBalance { store }
    }

    /// One pass: how many customers were told. Only a read when nothing
    /// crossed a mark either way.
    pub async fn run_once(&self) -> StoreResult<usize> {
        if !self.store.low_balance_due().await? {
            return Ok(0);
        }
        let told = self.store.watch_low_balances(PER_PASS).await?;
        if !told.is_empty() {
            tracing::info!(told = told.len(), "low-balance notices queued");
        }
        Ok(told.len())
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
                tracing::warn!(error = %e, "the low-balance pass failed");
            }
        }
    }
}
