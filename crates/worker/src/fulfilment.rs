//! Takes every `processing` transaction to a final status.
//!
//! Never fulfilled twice: before the supplier is first asked, the transaction
//! is marked `submitted`; after a crash a submitted one is requeried, never
//! re-bought. Never refunded on a guess: a pending answer, a timeout or an
//! error leaves it `processing` and it is requeried with backoff.
//!
//! A claimed transaction is leased. The lease is short and renewed (a
//! heartbeat) while the worker is still on it, however long the supplier
//! takes; so after a crash the transactions that were in flight are picked
//! up again within one lease, not minutes later.

use crate::claim_loop::{LoopSettings, claim_loop, run_all};
use billpay_domain::TxStatus;
use billpay_store::clock::now_ms;
use billpay_store::{Finalization, SharedStore, StoreResult, Transaction};
use billpay_supplier::{Order, Supplier, SupplierStatus};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Debug, Clone)]
pub struct FulfilmentSettings {
    /// How long a claimed transaction is ours before another worker may take
    /// it, unless renewed: `run` renews the leases of what it is still
    /// processing every third of this. After a crash, in-flight transactions
    /// wait at most this long before they are picked up again.
    pub lease: Duration,
    /// An answer slower than this counts as unknown (requery later).
    pub supplier_timeout: Duration,
    /// Transactions in flight at once.
    pub concurrency: usize,
    /// Requery delays after each unknown or pending answer (the last repeats).
    pub requery_backoff: Vec<Duration>,
}

impl Default for FulfilmentSettings {
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(10),
            supplier_timeout: Duration::from_secs(60),
            concurrency: 256,
            requery_backoff: [1, 5, 15, 30, 60, 120, 300]
                .map(Duration::from_secs)
                .to_vec(),
        }
    }
}

#[derive(Clone)]
pub struct Fulfilment {
    store: SharedStore,
    supplier: Arc<dyn Supplier>,
    settings: Arc<FulfilmentSettings>,
}

impl Fulfilment {
    pub fn new(
        store: SharedStore,
        supplier: Arc<dyn Supplier>,
        settings: FulfilmentSettings,
    ) -> Self {
        Self {
            store,
            supplier,
            settings: Arc::new(settings),
        }
    }

    /// Claims what is due and processes it to the end; returns how many were claimed.
    pub async fn run_once(&self) -> StoreResult<usize> {
        let claimed = self
            .store
            .claim_fulfilments(self.settings.concurrency as u32, self.settings.lease)
            .await?;
        Ok(run_all(claimed, |tx| {
            let this = self.clone();
            async move { this.process(tx).await }
        })
        .await)
    }

    /// Runs until `shutdown` is notified (`notify_waiters`); `wake` is
    /// notified on each new purchase. In-flight supplier calls may finish and
    /// record for 10 s after shutdown (their leases still renewed); what does
    /// not finish is requeried after restart.
    pub async fn run(self, wake: Arc<Notify>, shutdown: Arc<Notify>) {
        let in_flight: InFlight = Arc::default();
        let heartbeat = tokio::spawn(renew_leases(
            self.store.clone(),
            in_flight.clone(),
            self.settings.lease,
        ));
        let settings = LoopSettings {
            concurrency: self.settings.concurrency,
            idle_poll: Duration::from_millis(250),
            drain: Duration::from_secs(10),
        };
        let claim = |free: u32| {
            let store = self.store.clone();
            let lease = self.settings.lease;
            async move {
                store
                    .claim_fulfilments(free, lease)
                    .await
                    .unwrap_or_else(|e| {
                        tracing::error!(error = %e, "claiming fulfilments failed");
                        Vec::new()
                    })
            }
        };
        let start = |tx: Transaction| {
            // Still being processed here (its lease lapsed while, say, the
            // database was busy): the task on it carries on; never twice.
            let mine = Held::take(&in_flight, &tx.code)?;
            let this = self.clone();
            Some(async move {
                this.process(tx).await;
                drop(mine);
            })
        };
        claim_loop(settings, Some(wake), shutdown, claim, start).await;
        heartbeat.abort();
    }

    async fn process(&self, tx: Transaction) {
        if let Err(e) = self.try_process(&tx).await {
            tracing::error!(code = %tx.code, error = %e, "fulfilment step failed; will retry after the lease");
        }
    }

    async fn try_process(&self, tx: &Transaction) -> StoreResult<()> {
        let order = Order {
            reference_code: tx.code.clone(),
            product: tx.product,
            provider: tx.provider.clone(),
            recipient: tx.recipient.clone(),
            amount: tx.amount,
            details: tx.details.clone(),
        };
        let mut answer = if tx.submitted {
            self.ask(self.supplier.requery(&order)).await
        } else {
            self.store.mark_submitted(&tx.code).await?;
            self.ask(self.supplier.purchase(&order)).await
        };
        if answer == Ok(SupplierStatus::Unknown) {
            // The supplier never received it (we crashed before it arrived): buy now.
            answer = self.ask(self.supplier.purchase(&order)).await;
        }
        match answer {
            Ok(SupplierStatus::Delivered { result }) => {
                self.finish(
                    tx,
                    TxStatus::Successful,
                    "Transaction successful".into(),
                    result,
                )
                .await
            }
            Ok(SupplierStatus::Failed { reason }) => {
                let message = format!(
                    "Transaction failed: {reason}. Your wallet has been refunded {} Naira.",
                    tx.amount
                );
                self.finish(tx, TxStatus::Failed, message, json!({})).await
            }
            Ok(SupplierStatus::Pending | SupplierStatus::Unknown) => {
                self.requery_later(tx, "supplier pending").await
            }
            Err(reason) => self.requery_later(tx, &reason).await,
        }
    }

    async fn ask(
        &self,
        call: impl Future<Output = Result<SupplierStatus, billpay_supplier::SupplierError>>,
    ) -> Result<SupplierStatus, String> {
        match tokio::time::timeout(self.settings.supplier_timeout, call).await {
            Ok(Ok(status)) => Ok(status),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("supplier timed out".into()),
        }
    }

    async fn requery_later(&self, tx: &Transaction, note: &str) -> StoreResult<()> {
        let backoff = &self.settings.requery_backoff;
        let delay = backoff[(tx.attempts as usize).min(backoff.len() - 1)];
        tracing::info!(code = %tx.code, note, ?delay, "outcome not final; requery later");
        self.store.reschedule(&tx.code, delay, note).await
    }

    async fn finish(
        &self,
        tx: &Transaction,
        status: TxStatus,
        message: String,
        result: Value,
    ) -> StoreResult<()> {
        let completed_at_ms = now_ms();
        let payload = webhook_payload(tx, status, &message, &result, completed_at_ms);
        let fin = Finalization {
            status,
            message,
            result,
            completed_at_ms,
            event_payload: payload,
        };
        if !self.store.finalize(&tx.code, fin).await? {
            tracing::warn!(code = %tx.code, "already final; nothing changed");
        }
        Ok(())
    }
}

/// Codes of the transactions this worker is processing right now.
type InFlight = Arc<Mutex<HashSet<String>>>;

fn lock(in_flight: &InFlight) -> std::sync::MutexGuard<'_, HashSet<String>> {
    in_flight
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A code in the in-flight set, removed when dropped (even if processing
/// panicked), so its lease stops being renewed and it is retried.
struct Held {
    in_flight: InFlight,
    code: String,
}

impl Held {
    /// None when the code is already being processed here.
    fn take(in_flight: &InFlight, code: &str) -> Option<Held> {
        lock(in_flight).insert(code.to_owned()).then(|| Held {
            in_flight: in_flight.clone(),
            code: code.to_owned(),
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        lock(&self.in_flight).remove(&self.code);
    }
}

/// The heartbeat: every third of a lease, extends the leases of everything in flight.
async fn renew_leases(store: SharedStore, in_flight: InFlight, lease: Duration) {
    let mut beat = tokio::time::interval(lease / 3);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    beat.tick().await; // the first tick is immediate; claims come with a fresh lease
    loop {
        beat.tick().await;
        let codes: Vec<String> = lock(&in_flight).iter().cloned().collect();
        if let Err(e) = store.renew_fulfilment_leases(codes, lease).await {
            tracing::error!(error = %e, "renewing fulfilment leases failed");
        }
    }
}

/// The webhook body of the spec's "Events" part, fixed at finalization.
pub fn webhook_payload(
    tx: &Transaction,
    status: TxStatus,
    message: &str,
    result: &Value,
    completed_at_ms: i64,
) -> String {
    let mut payload = json!({
        "event": tx.product.event(),
        "reference": tx.reference,
        "reference_code": tx.code,
        "status": status,
        "message": message,
        "recipient": tx.recipient,
        "amount": tx.amount,
        "completed_at": billpay_store::clock::rfc3339(completed_at_ms),
    });
    payload[tx.product.label_field()] = json!(tx.label);
    if tx.product.delivers_pin()
        && let Some(pin) = result.get("pin")
    {
        payload["pin"] = pin.clone();
    }
    if let Some(batch_id) = tx.details.get("batch_id") {
        payload["batch_id"] = batch_id.clone();
    }
    payload.to_string()
}
