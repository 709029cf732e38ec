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
//!
//! Each unit of work (one transaction fulfilled, one callback's recheck) runs
//! in a `tracing` span carrying the transaction's code, so its log lines say
//! which purchase they are about without repeating it.

use crate::claim_loop::{Claimed, Left, LoopSettings, claim_loop, run_all};
use crate::supplier_health::HealthCache;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::supplier_health::{Answer, HealthRules};
use billpay_domain::{Delivery, Kobo, TxStatus};
use billpay_store::clock::{now_ms, parse_rfc3339_ms};
use billpay_store::{CatalogueCache, Finalization, SharedStore, StoreResult, Transaction};
use billpay_supplier::routing::{Pick, Routes};
use billpay_supplier::{Answered, Order, Supplier, SupplierError, SupplierStatus};
use billpay_webhooks::{Purchase, WebhookPayload};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tracing::Instrument;

pub const DEFAULT_NEEDS_REVIEW_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Whether a purchase still `processing` has been unknown too long: created
/// before this moment (RFC 3339, compared as text like `created_at`).
pub fn needs_review_before(bound: Duration) -> String {
    billpay_store::clock::rfc3339(now_ms() - bound.as_millis() as i64)
}

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
    /// Unknown for longer than this, a purchase needs the operator's review
    /// (`billpay transaction list --needs-review`); it is still requeried and
    /// never refunded on a guess.
    pub needs_review_after: Duration,
    /// When a successful purchase is requeried for a reversal, for every
    /// supplier (tests); `None`: each supplier's own `reversal_watch`.
    pub reversal_watch: Option<Vec<Duration>>,
    /// When a supplier failing in a row is skipped, and for how long
    /// (`[routing]`; docs/suppliers.md).
    pub health: HealthRules,
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
            needs_review_after: DEFAULT_NEEDS_REVIEW_AFTER,
            reversal_watch: None,
            health: HealthRules::default(),
        }
    }
}

#[derive(Clone)]
pub struct Fulfilment {
    store: SharedStore,
    routes: Arc<Routes>,
    settings: Arc<FulfilmentSettings>,
    catalogue: Arc<CatalogueCache>,
    health: Arc<HealthCache>,
}

impl Fulfilment {
    pub fn new(store: SharedStore, routes: Arc<Routes>, settings: FulfilmentSettings) -> Self {
        Self {
            health: Arc::new(HealthCache::new(store.clone(), settings.health)),
            routes,
            settings: Arc::new(settings),
            catalogue: Arc::new(CatalogueCache::new(store.clone())),
            store,
        }
    }

    /// The suppliers and routes purchases go to (the console shows them).
    pub fn routes(&self) -> &Routes {
        &self.routes
    }

    /// Claims what is due and processes it to the end; returns how many were claimed.
    pub async fn run_once(&self) -> StoreResult<usize> {
        let claimed = claim(
            &self.store,
            self.settings.concurrency as u32,
            self.settings.lease,
            true,
        )
        .await?;
        Ok(run_all(claimed.claimed.items, |tx| {
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
            idle_poll: POLL,
            drain: Duration::from_secs(10),
        };
        let watch_pace = Arc::new(Mutex::new(WatchPace::default()));
        let claim = |free: u32| {
            let store = self.store.clone();
            let lease = self.settings.lease;
            let pace = watch_pace.clone();
            let watches = pace_lock(&pace).due();
            async move {
                match claim(&store, free, lease, watches).await {
                    Ok(claimed) => {
                        if watches {
                            pace_lock(&pace).claimed(claimed.watches_left);
                        }
                        claimed.claimed
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "claiming fulfilments failed");
                        Claimed::failed()
                    }
                }
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

    /// One transaction, in its own span (`fulfil{code=…}`; a successful one
    /// watched for a reversal, `watch{code=…}`).
    async fn process(&self, tx: Transaction) {
        if tx.status == TxStatus::Successful {
            let span = tracing::info_span!("watch", code = %tx.code);
            return async {
                if let Err(e) = self.watch(&tx).await {
                    tracing::error!(error = %e, "reversal watch failed; will retry after the lease");
                }
            }
            .instrument(span)
            .await;
        }
        let span = tracing::info_span!("fulfil", code = %tx.code);
        async {
            if let Err(e) = self.try_process(&tx).await {
                tracing::error!(error = %e, "fulfilment step failed; will retry after the lease");
            }
        }
        .instrument(span)
        .await
    }

    async fn try_process(&self, tx: &Transaction) -> StoreResult<()> {
        let catalogue = self.catalogue.get().await?;
        // Each supplier gets the order with its own codes from the catalogue.
        let order_for = |supplier: &Arc<dyn Supplier>| order_of(tx, &catalogue, supplier.name());
        // The suppliers to try, in order: by cost where the route says so,
        // those backing off left out (`Routes::pick`).
        let view = self.health.view().await?;
        let now = now_ms();
        let picks = self.routes.pick(
            tx.product,
            &tx.provider,
            |s| view.cost(s.name(), tx, &catalogue),
            |name| view.state(name, now),
        );
        // Sent already: ask that supplier again (rows from before suppliers
        // were recorded went to the only one there was). Not yet: the first.
        let sent_to = match (tx.submitted, tx.supplier.as_deref()) {
            (false, _) => None,
            (true, Some(name)) => Some(self.routes.by_name(name)),
            (true, None) => Some(self.routes.chain(tx.product, &tx.provider).first().copied()),
        };
        let (supplier, mut next) = match sent_to {
            Some(Some(supplier)) => {
                // After it, the suppliers not tried yet.
                let at = picks
                    .iter()
                    .position(|p| p.supplier.name() == supplier.name());
                (supplier, at.map_or(0, |i| i + 1))
            }
            Some(None) => {
                // Never elsewhere: it may have been bought there.
                tracing::error!(supplier = ?tx.supplier, "sent to a supplier that is no longer configured");
                return self
                    .requery_later(tx, "its supplier is not configured")
                    .await;
            }
            None => match self.take(&picks, 0, None).await? {
                Some((at, first)) => (first, at + 1),
                None => return self.fail(tx, "this product is not sold now", false).await,
            },
        };
        let order = order_for(supplier);
        if !tx.submitted {
            self.send(tx, supplier, &order).await?;
        }
        let mut answer = if tx.submitted {
            self.requery_noting(tx, supplier, &order).await?
        } else {
            self.purchase_noting(tx, supplier, &order).await?
        };
        if matches!(answer, Ok(SupplierStatus::Unknown)) {
            // The supplier never received it (we crashed before it arrived): buy now.
            answer = self.purchase_noting(tx, supplier, &order).await?;
        }
        self.note(supplier, tx, &answer).await;
        // Fail over only on a definite failure: that supplier kept nothing.
        let mut current = supplier;
        while let Ok(SupplierStatus::Failed { reason }) = &answer {
            let Some((at, other)) = self.take(&picks, next, Some(current.name())).await? else {
                break;
            };
            tracing::warn!(
                from = current.name(),
                to = other.name(),
                reason,
                "failing over to the next supplier"
            );
            let order = order_for(other);
            self.send(tx, other, &order).await?;
            answer = self.purchase_noting(tx, other, &order).await?;
            self.note(other, tx, &answer).await;
            (current, next) = (other, at + 1);
        }
        match answer {
            Ok(SupplierStatus::Delivered { result, cost }) => {
                self.succeed(tx, current, result, cost).await
            }
            Ok(SupplierStatus::Failed { reason }) => self.fail(tx, &reason, false).await,
            Ok(SupplierStatus::Pending | SupplierStatus::Unknown) => {
                self.requery_later(tx, "supplier pending").await
            }
            // The supplier's books cannot say: a person decides, at once.
            Err(e @ NoAnswer::Supplier(SupplierError::NeedsReview(_))) => {
                self.review_now(tx, &e.to_string()).await
            }
            Err(reason) => self.requery_later(tx, &reason.to_string()).await,
        }
    }

    /// A purchase at `supplier`, its own id of the order recorded when its
    /// answer gives one (SME-data sites take no reference of ours: later
    /// requeries, and the reversal watch, ask by that id). Recorded before
    /// anything else is done with the answer.
    async fn purchase_noting(
        &self,
        tx: &Transaction,
        supplier: &Arc<dyn Supplier>,
        order: &Order,
    ) -> StoreResult<Result<SupplierStatus, NoAnswer>> {
        let answer = self
            .ask(
                supplier.name(),
                "purchase",
                supplier.purchase_answered(order),
            )
            .await;
        self.noted(tx, supplier, order, answer).await
    }

    /// A requery at `supplier`, likewise (an order found by a search, its id).
    async fn requery_noting(
        &self,
        tx: &Transaction,
        supplier: &Arc<dyn Supplier>,
        order: &Order,
    ) -> StoreResult<Result<SupplierStatus, NoAnswer>> {
        let answer = self
            .ask(supplier.name(), "requery", supplier.requery_answered(order))
            .await;
        self.noted(tx, supplier, order, answer).await
    }

    /// Records the supplier's id of the order when the answer gave a new one.
    async fn noted(
        &self,
        tx: &Transaction,
        supplier: &Arc<dyn Supplier>,
        order: &Order,
        answer: Result<Answered, NoAnswer>,
    ) -> StoreResult<Result<SupplierStatus, NoAnswer>> {
        let answered = match answer {
            Ok(answered) => answered,
            Err(no_answer) => return Ok(Err(no_answer)),
        };
        if let Some(id) = answered.reference.as_deref()
            && order.supplier_reference.as_deref() != Some(id)
        {
            self.store
                .mark_submitted(&tx.code, supplier.name(), Some(id))
                .await?;
        }
        Ok(Ok(answered.status))
    }

    /// The first of `picks` from `from` on (not `except`) this purchase may
    /// go to: a supplier whose back-off is over only if this purchase takes
    /// its probe, unless it is the last one left.
    async fn take<'a>(
        &self,
        picks: &[Pick<'a>],
        from: usize,
        except: Option<&str>,
    ) -> StoreResult<Option<(usize, &'a Arc<dyn Supplier>)>> {
        let left = picks
            .iter()
            .enumerate()
            .skip(from)
            .filter(|(_, p)| Some(p.supplier.name()) != except);
        let left: Vec<_> = left.collect();
        for (n, (at, pick)) in left.iter().enumerate() {
            let last = n + 1 == left.len();
            if !pick.probe || self.health.take_probe(pick.supplier.name()).await? || last {
                return Ok(Some((*at, pick.supplier)));
            }
        }
        Ok(None)
    }

    /// Records what `supplier`'s answer says of its health (and a
    /// delivery's cost); a failure to record is logged, never stops the purchase.
    async fn note(
        &self,
        supplier: &Arc<dyn Supplier>,
        tx: &Transaction,
        answer: &Result<SupplierStatus, NoAnswer>,
    ) {
        let (said, cost) = match answer {
            Ok(SupplierStatus::Delivered { cost, .. }) => (Answer::Delivered, *cost),
            Ok(SupplierStatus::Failed { reason }) => (Answer::Failure(reason.clone()), None),
            Ok(SupplierStatus::Pending | SupplierStatus::Unknown)
            | Err(NoAnswer::NotConfigured) => {
                return;
            }
            Err(NoAnswer::TimedOut) => {
                let waited = self.settings.supplier_timeout.as_secs();
                (
                    Answer::Failure(format!("no answer within {waited} s")),
                    None,
                )
            }
            Err(NoAnswer::Supplier(e)) => (Answer::Failure(e.to_string()), None),
        };
        if let Err(e) = self.health.record(supplier.as_ref(), tx, said, cost).await {
            tracing::warn!(error = %e, supplier = supplier.name(), "recording the supplier's health failed");
        }
    }

    /// Whether `code` names a purchase sent to `supplier` (a callback's
    /// admission: one read by the primary key).
    pub async fn sent_to(&self, code: &str, supplier: &str) -> StoreResult<bool> {
        let lookup = billpay_store::TxLookup::Code(code.to_owned());
        let tx = self.store.transaction(None, lookup).await?;
        Ok(tx.is_some_and(|tx| tx.supplier.as_deref() == Some(supplier)))
    }

    /// The supplier says something happened to `code` (a callback): never
    /// trusted alone, it makes us requery now. A final answer for a
    /// processing purchase is recorded (as the worker would); a successful
    /// one the supplier now reports failed or reversed is refunded once and
    /// its webhook sent again. Never buys; anything unclear changes nothing.
    pub async fn recheck(&self, code: &str) -> StoreResult<()> {
        let span = tracing::info_span!("recheck", code);
        self.try_recheck(code).instrument(span).await
    }

    async fn try_recheck(&self, code: &str) -> StoreResult<()> {
        let lookup = billpay_store::TxLookup::Code(code.to_owned());
        let Some(tx) = self.store.transaction(None, lookup).await? else {
            return Ok(());
        };
        let supplier = tx.supplier.as_deref().and_then(|s| self.routes.by_name(s));
        let Some(supplier) = supplier.filter(|_| tx.status != TxStatus::Failed) else {
            return Ok(());
        };
        let order = order_of(&tx, &*self.catalogue.get().await?, supplier.name());
        let answer = self.requery_noting(&tx, supplier, &order).await?;
        tracing::info!(status = %tx.status, answer = answer.as_ref().map_or("no answer", SupplierStatus::name), "rechecked after a supplier callback");
        match (tx.status, answer) {
            (TxStatus::Processing, Ok(SupplierStatus::Delivered { result, cost })) => {
                self.succeed(&tx, supplier, result, cost).await
            }
            (TxStatus::Processing, Ok(SupplierStatus::Failed { reason })) => {
                self.fail(&tx, &reason, false).await
            }
            (TxStatus::Successful, Ok(SupplierStatus::Failed { reason })) => {
                tracing::warn!("the supplier reversed a successful purchase: refunding");
                self.fail(&tx, &reason, true).await
            }
            _ => Ok(()),
        }
    }

    /// A successful purchase whose reversal watch is due: requeried; reversed
    /// → refunded once and its webhook sent again (as a callback's recheck
    /// would); otherwise watched again at the supplier's next time, or no
    /// more past its last. Never buys.
    async fn watch(&self, tx: &Transaction) -> StoreResult<()> {
        let supplier = tx.supplier.as_deref().and_then(|s| self.routes.by_name(s));
        let answer = match supplier {
            Some(supplier) => {
                let order = order_of(tx, &*self.catalogue.get().await?, supplier.name());
                self.requery_noting(tx, supplier, &order).await?
            }
            None => Err(NoAnswer::NotConfigured),
        };
        if let Ok(SupplierStatus::Failed { reason }) = &answer {
            tracing::warn!("the supplier reversed a successful purchase: refunding");
            return self.fail(tx, reason, true).await;
        }
        let completed = tx.completed_at.as_deref().and_then(parse_rfc3339_ms);
        let schedule = supplier.map_or(&[][..], |s| self.watch_schedule(s));
        let next = completed.and_then(|at| next_watch(at, schedule, now_ms()));
        tracing::info!(
            answer = answer.as_ref().map_or("no answer", SupplierStatus::name),
            watched_again = next.is_some(),
            "rechecked for a reversal"
        );
        self.store.rewatch(&tx.code, next).await
    }

    /// When `supplier`'s successful purchases are requeried for a reversal.
    fn watch_schedule(&self, supplier: &Arc<dyn Supplier>) -> &[Duration] {
        match &self.settings.reversal_watch {
            Some(every_supplier) => every_supplier,
            None => supplier.reversal_watch(),
        }
    }

    /// Records, durably, that `tx` goes to `supplier` before it is sent: after
    /// a crash it is requeried there, never bought again elsewhere.
    async fn send(
        &self,
        tx: &Transaction,
        supplier: &Arc<dyn Supplier>,
        order: &Order,
    ) -> StoreResult<()> {
        let reference = supplier.reference(order);
        self.store
            .mark_submitted(&tx.code, supplier.name(), reference.as_deref())
            .await
    }

    /// Recorded with what the supplier charged, when it said, and, if
    /// `supplier` may still reverse it, when it is first requeried for that.
    async fn succeed(
        &self,
        tx: &Transaction,
        supplier: &Arc<dyn Supplier>,
        result: Delivery,
        cost: Option<Kobo>,
    ) -> StoreResult<()> {
        let (code, mut fin) = settle(tx, Outcome::Successful(result));
        fin.cost = cost;
        let first = self.watch_schedule(supplier).first();
        fin.watch_at_ms = first.map(|after| fin.completed_at_ms + after.as_millis() as i64);
        self.finish(tx, (code, fin)).await
    }

    async fn fail(&self, tx: &Transaction, reason: &str, reversal: bool) -> StoreResult<()> {
        let outcome = if reversal {
            Outcome::Reversed(reason)
        } else {
            Outcome::Failed(reason)
        };
        self.finish(tx, settle(tx, outcome)).await
    }

    /// One supplier call (every call of the worker goes through here, so
    /// every supplier gets its latency and outcome measured).
    async fn ask(
        &self,
        supplier: &str,
        operation: &'static str,
        call: impl Future<Output = Result<Answered, SupplierError>>,
    ) -> Result<Answered, NoAnswer> {
        let started = std::time::Instant::now();
        let (outcome, answer) =
            match tokio::time::timeout(self.settings.supplier_timeout, call).await {
                Ok(Ok(answered)) => (answered.status.name(), Ok(answered)),
                Ok(Err(e @ SupplierError::NeedsReview(_))) => {
                    ("needs_review", Err(NoAnswer::Supplier(e)))
                }
                Ok(Err(e)) => ("unavailable", Err(NoAnswer::Supplier(e))),
                Err(_) => ("timeout", Err(NoAnswer::TimedOut)),
            };
        // A site's name is configured, not static: the label owns its copy.
        let labels = [
            ("supplier", supplier.to_owned()),
            ("operation", operation.to_owned()),
            ("outcome", outcome.to_owned()),
        ];
        metrics::counter!("billpay_supplier_calls_total", &labels).increment(1);
        metrics::histogram!("billpay_supplier_call_duration_seconds", &labels)
            .record(started.elapsed().as_secs_f64());
        answer
    }

    async fn requery_later(&self, tx: &Transaction, note: &str) -> StoreResult<()> {
        let backoff = &self.settings.requery_backoff;
        let delay = backoff[(tx.attempts as usize).min(backoff.len() - 1)];
        let old = tx.created_at < needs_review_before(self.settings.needs_review_after);
        if old || tx.review_requested_at.is_some() {
            tracing::warn!(created_at = %tx.created_at, note, "outcome still unknown: needs the operator's review (billpay transaction list --needs-review)");
        } else {
            tracing::info!(note, ?delay, "outcome not final; requery later");
        }
        self.store.reschedule(&tx.code, delay, note).await
    }

    /// The supplier's books cannot say what became of `tx` (`evidence`
    /// says why): it needs the operator's review now, whatever its age
    /// (`review_requested_at`, kept until it is final). Still requeried as
    /// before (a listing can lag: found later, it ends normally); never
    /// refunded, sent elsewhere or sent again on this.
    async fn review_now(&self, tx: &Transaction, evidence: &str) -> StoreResult<()> {
        let backoff = &self.settings.requery_backoff;
        let delay = backoff[(tx.attempts as usize).min(backoff.len() - 1)];
        tracing::warn!(
            evidence,
            "the supplier's books cannot say: needs the operator's review now (billpay transaction list --needs-review)"
        );
        self.store.request_review(&tx.code, delay, evidence).await
    }

    async fn finish(
        &self,
        tx: &Transaction,
        (code, fin): (String, Finalization),
    ) -> StoreResult<()> {
        let status = if fin.reversal {
            "reversed"
        } else {
            fin.status.as_str()
        };
        if self.store.finalize(&code, fin).await? {
            let labels = [("product", tx.product.service()), ("status", status)];
            metrics::counter!("billpay_purchases_total", &labels).increment(1);
        } else {
            tracing::warn!("already final; nothing changed");
        }
        Ok(())
    }
}

/// How a purchase ends.
pub enum Outcome<'a> {
    /// Delivered; what the supplier delivered.
    Successful(Delivery),
    /// Definitely not delivered, with the reason told to the customer: refunded.
    Failed(&'a str),
    /// Delivered, then reversed by the supplier: refunded.
    Reversed(&'a str),
}

/// The finalization (status, message, webhook body) of `tx` for an outcome:
/// what the worker records, and the operator's `transaction resolve`.
pub fn settle(tx: &Transaction, outcome: Outcome) -> (String, Finalization) {
    let (status, message, result, reversal) = match outcome {
        Outcome::Successful(result) => (
            TxStatus::Successful,
            "Transaction successful".to_owned(),
            result,
            false,
        ),
        Outcome::Failed(reason) | Outcome::Reversed(reason) => (
            TxStatus::Failed,
            format!(
                "Transaction failed: {reason}. Your wallet has been refunded {} Naira.",
                tx.amount
            ),
            Delivery::default(),
            matches!(outcome, Outcome::Reversed(_)),
        ),
    };
    let completed_at_ms = now_ms();
    let fin = Finalization {
        event_payload: webhook_payload(tx, status, &message, &result, completed_at_ms),
        status,
        message,
        result: serde_json::to_value(&result).expect("a delivery is plain JSON"),
        completed_at_ms,
        reversal,
        // the worker adds the supplier's, when it says; a resolve knows none
        cost: None,
        // the worker's, for a supplier that may reverse; an operator's decision is final
        watch_at_ms: None,
    };
    (tx.code.clone(), fin)
}

/// Due processing purchases, then, with the room left and if `watches`, due
/// reversal watches.
/// A claim of purchases to send or requery, then (when `watches`) of
/// successful ones whose reversal requery is due, in the room left.
struct FulfilmentClaim {
    claimed: Claimed<Transaction>,
    /// The watches' claim filled its room: more watches may be due.
    watches_left: bool,
}

async fn claim(
    store: &SharedStore,
    limit: u32,
    lease: Duration,
    watches: bool,
) -> StoreResult<FulfilmentClaim> {
    let mut claimed = Claimed::of(store.claim_fulfilments(limit, lease).await?, limit);
    let room = limit.saturating_sub(claimed.items.len() as u32);
    // No room left: the watches were not looked at, so look next claim.
    let mut watches_left = watches && room == 0;
    if room > 0 && watches {
        let due = store.claim_watches(room, lease).await?;
        watches_left = due.len() as u32 >= room;
        claimed.items.extend(due);
    }
    if watches_left {
        claimed.left = Left::More;
    }
    Ok(FulfilmentClaim {
        claimed,
        watches_left,
    })
}

/// The idle loop's poll, and how often a claim looks for due reversal
/// watches. A watch falls due minutes after a success, and a claim, even an
/// empty one, is a write on SQLite's one writer: a busy loop claims after
/// every purchase it finishes, so it looks for watches only at this pace,
/// unless the last look filled its room (a backlog of watches is claimed
/// claim after claim, never a room's worth per poll).
const POLL: Duration = Duration::from_millis(250);

/// When the claims look for due reversal watches.
#[derive(Default)]
struct WatchPace {
    last: Option<Instant>,
    more_due: bool,
}

impl WatchPace {
    /// Whether this claim looks for watches.
    fn due(&mut self) -> bool {
        let due = self.more_due || self.last.is_none_or(|at| at.elapsed() >= POLL);
        if due {
            self.last = Some(Instant::now());
        }
        due
    }

    /// A look for watches ended; `more_due`: it filled its room.
    fn claimed(&mut self, more_due: bool) {
        self.more_due = more_due;
    }
}

fn pace_lock(pace: &Mutex<WatchPace>) -> std::sync::MutexGuard<'_, WatchPace> {
    pace.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The next reversal requery of a purchase successful at `completed_ms`: the
/// first time of `schedule` (after the success) still ahead of `now_ms`;
/// `None` past the last (the watch is over).
pub fn next_watch(completed_ms: i64, schedule: &[Duration], now_ms: i64) -> Option<i64> {
    schedule
        .iter()
        .map(|after| completed_ms + after.as_millis() as i64)
        .find(|&at| at > now_ms)
}

/// The order for `tx` as `supplier` gets it: with the codes the catalogue
/// names for its provider and plan there.
fn order_of(tx: &Transaction, catalogue: &Catalogue, supplier: &str) -> Order {
    Order {
        reference_code: tx.code.clone(),
        product: tx.product,
        provider: tx.provider.clone(),
        recipient: tx.recipient.clone(),
        // what the recipient gets; the customer's price is ours alone
        amount: tx.face_value,
        details: tx.details.clone(),
        codes: catalogue.supplier_codes(supplier, &tx.provider, tx.plan_id.as_deref()),
        // Only this supplier's reference (after a failover, the last one's is not its).
        supplier_reference: tx
            .supplier_reference
            .clone()
            .filter(|_| tx.supplier.as_deref() == Some(supplier)),
        placed_at: Some(tx.created_at.clone()),
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
    result: &Delivery,
    completed_at_ms: i64,
) -> String {
    let purchase = Purchase {
        product: tx.product,
        label: &tx.label,
        reference: &tx.reference,
        reference_code: &tx.code,
        recipient: &tx.recipient,
        amount: tx.amount,
        face_value: tx.face_value,
        batch_id: tx.details.batch_id.as_deref(),
    };
    let completed_at = billpay_store::clock::rfc3339(completed_at_ms);
    WebhookPayload::purchase(purchase, status, message, result, completed_at).to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watches_are_looked_for_at_most_once_a_poll_unless_the_last_look_was_full() {
        let mut pace = WatchPace::default();
        assert!(pace.due(), "the first claim looks");
        pace.claimed(false);
        assert!(!pace.due(), "the next one, at once, does not");
        pace.last = Instant::now().checked_sub(POLL);
        assert!(pace.due(), "a poll later it looks again");
        pace.claimed(true);
        assert!(
            pace.due(),
            "a look that filled its room is followed at once"
        );
        pace.claimed(false);
        assert!(!pace.due(), "and then back to the poll's pace");
    }

    #[test]
    fn the_watch_takes_the_next_time_ahead_and_ends_after_the_last() {
        let schedule = [60, 300, 1800].map(Duration::from_secs);
        let done = 1_000_000;
        let at = |secs: i64| done + secs * 1000;
        assert_eq!(next_watch(done, &schedule, done), Some(at(60)));
        assert_eq!(next_watch(done, &schedule, at(60)), Some(at(300)));
        // Late (a worker was down): the next time still ahead, none skipped back.
        assert_eq!(next_watch(done, &schedule, at(1000)), Some(at(1800)));
        assert_eq!(next_watch(done, &schedule, at(1800)), None);
        assert_eq!(next_watch(done, &[], done), None);
    }
}

/// Why a supplier call gave no answer: the outcome is unknown (requeried,
/// never refunded on it).
#[derive(Debug, thiserror::Error)]
enum NoAnswer {
    #[error("{0}")]
    Supplier(SupplierError),
    #[error("supplier timed out")]
    TimedOut,
    /// The purchase's supplier is no longer configured: not asked.
    #[error("its supplier is not configured")]
    NotConfigured,
}
