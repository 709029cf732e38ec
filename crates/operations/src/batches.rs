//! Batches (issue 50, docs/bulk.md): many purchases sent at once under one
//! reference. [`Batches::create`] stores the batch (idempotent by the
//! account's reference) and answers at once; [`Batches::run`] places its
//! items in order in the background, each an ordinary purchase through the
//! one purchase operation ([`Purchasing::buy`]: pricing, limits, velocity,
//! holds, its own reference), on whichever node holds the batch's lease,
//! then waits for their final statuses and queues the `batch.completed`
//! webhook. An item's purchase reference is its idempotency key: placed again
//! after a crash, it is found, never charged twice.
//!
//! How an item's body becomes a purchase, and a refusal the contract's slug,
//! is the API's ([`ItemReader`], given by `serve`): one reading of a purchase
//! body, whether it came alone or in a batch.

use crate::purchases::{Buyer, Checked, PurchaseError, Purchasing, key_in_force};
use billpay_domain::{Kobo, Product, PurchaseRequest, TxStatus};
use billpay_store::{
    AccountStatus, Batch, BatchItem, BatchStatus, ItemOutcome, ItemPlaced, KeyStatus, NewBatch,
    NewBatchItem, RateLimit, StoreError, TxLookup,
};
use billpay_webhooks::BatchCompleted;
use billpay_worker::claim_loop::{Claimed, LoopSettings, claim_loop, run_all};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// The most items a batch may have.
pub const MAX_ITEMS: usize = 1000;
/// A node's hold on a batch it is placing, renewed by each item it records.
const LEASE: Duration = Duration::from_secs(30);
/// How often a batch whose items are all placed is looked at for completion.
const RECHECK: Duration = Duration::from_millis(500);
/// Items placed ahead of the one being recorded: each is started in order,
/// so the store takes them in order, while their commits overlap.
const PLACING_AHEAD: usize = 16;
/// Batches worked at once on a node.
const CONCURRENCY: usize = 4;

/// A key's and its account's statuses.
/// The batch's key's and account's statuses, and the key's own rate limit.
type Standing = (KeyStatus, AccountStatus, Option<RateLimit>);

/// An item refused before any money moved: the contract's slug and the sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub error: String,
    pub message: String,
}

/// The API's reading of a purchase body and of a refusal (`billpay_api::batches`).
pub trait ItemReader: Send + Sync {
    /// The item's body (its product's purchase body) as a checked request.
    fn request(&self, product: Product, body: &str) -> Result<PurchaseRequest, Refused>;
    /// A refusal as the contract says it.
    fn refused(&self, error: PurchaseError) -> Refused;
}

/// An item's refusal as a person reads it: the store keeps a used
/// reference's slug alone, so it is worded here, once.
fn refusal_said(error: &str, message: Option<&str>) -> String {
    match (message, error) {
        (Some(message), _) => message.to_owned(),
        (None, billpay_store::REFERENCE_USED) => crate::purchases::duplicate_reference(None),
        (None, other) => other.to_owned(),
    }
}

/// What became of an item, as `GET /v1/batches/{id}` and the shop's bulk
/// page both say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemState {
    Queued,
    Processing,
    Successful,
    Failed,
    Refused,
}

impl ItemState {
    /// The API's word (`queued`, `processing`, `successful`, `failed`,
    /// `refused`).
    pub fn as_str(self) -> &'static str {
        match self {
            ItemState::Queued => "queued",
            ItemState::Processing => "processing",
            ItemState::Successful => "successful",
            ItemState::Failed => "failed",
            ItemState::Refused => "refused",
        }
    }
}

/// An item's outcome in words, the one mapping from the store's
/// [`ItemOutcome`]: its state, its purchase's code and charge once placed
/// (a failed one was refunded), a refusal's slug, and the sentence a person
/// reads (the purchase's message, or why it was refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemSaid {
    pub state: ItemState,
    pub code: Option<String>,
    pub amount: Option<Kobo>,
    pub error: Option<String>,
    pub message: Option<String>,
}

impl ItemSaid {
    pub fn of(outcome: &ItemOutcome) -> ItemSaid {
        let nothing = |state| ItemSaid {
            state,
            code: None,
            amount: None,
            error: None,
            message: None,
        };
        match outcome {
            ItemOutcome::Queued => nothing(ItemState::Queued),
            ItemOutcome::Refused { error, message } => ItemSaid {
                error: Some(error.clone()),
                message: Some(refusal_said(error, message.as_deref())),
                ..nothing(ItemState::Refused)
            },
            ItemOutcome::Placed {
                code,
                status,
                amount,
                message,
            } => ItemSaid {
                code: Some(code.clone()),
                amount: Some(*amount),
                message: Some(message.clone()),
                ..nothing(match status {
                    TxStatus::Processing => ItemState::Processing,
                    TxStatus::Successful => ItemState::Successful,
                    TxStatus::Failed => ItemState::Failed,
                })
            },
        }
    }
}

/// A test-mode batch's item: what it would charge, or why it would be refused.
#[derive(Debug)]
pub enum ItemCheck {
    Fits(Checked),
    Refused(Refused),
}

/// The batches' operation and runner (cheap to clone).
#[derive(Clone)]
pub struct Batches {
    purchasing: Purchasing,
    reader: Arc<dyn ItemReader>,
    /// Notified when a batch is created, so its placing starts at once.
    pub waiting: Arc<Notify>,
}

impl Batches {
    pub fn new(purchasing: Purchasing, reader: Arc<dyn ItemReader>) -> Self {
        Batches {
            purchasing,
            reader,
            waiting: Arc::new(Notify::new()),
        }
    }

    /// Stores the batch for `buyer` and wakes the runner; a batch with its
    /// reference already there is answered as it is, `false`.
    pub async fn create(
        &self,
        buyer: &Buyer,
        reference: String,
        items: Vec<NewBatchItem>,
    ) -> Result<(Batch, bool), PurchaseError> {
        let new = NewBatch {
            account_id: buyer.account_id,
            key_id: buyer.key_id,
            reference,
            items,
        };
        let (batch, created) = self.purchasing.store.create_batch(new).await?;
        if created {
            self.waiting.notify_one();
        }
        Ok((batch, created))
    }

    /// The account's batch with `reference` and its items.
    pub async fn find(
        &self,
        buyer: &Buyer,
        reference: &str,
    ) -> Result<Option<(Batch, Vec<BatchItem>)>, PurchaseError> {
        let store = &self.purchasing.store;
        let Some(batch) = store.batch(buyer.account_id, reference).await? else {
            return Ok(None);
        };
        let items = store.batch_items(&batch.id).await?;
        Ok(Some((batch, items)))
    }

    /// Test mode: each item checked as its purchase would be (priced, the
    /// reference, the limits), in order, and the running total against the
    /// balance: an item past it would be refused. Nothing is changed.
    pub async fn check(&self, buyer: &Buyer, items: &[NewBatchItem]) -> Vec<ItemCheck> {
        let mut spent = Kobo(0);
        let mut checks = Vec::with_capacity(items.len());
        for item in items {
            let checked = match self.reader.request(item.product, &item.body) {
                Ok(request) => self.purchasing.check(buyer, request).await,
                Err(refused) => {
                    checks.push(ItemCheck::Refused(refused));
                    continue;
                }
            };
            let check = match checked {
                Ok(fits) if spent.0 + fits.would_deduct.0 > fits.balance.0 => {
                    let short = PurchaseError::InsufficientBalance {
                        balance: Some(Kobo(fits.balance.0 - spent.0)),
                        needed: Some(fits.would_deduct),
                    };
                    ItemCheck::Refused(self.reader.refused(short))
                }
                Ok(fits) => {
                    spent = Kobo(spent.0 + fits.would_deduct.0);
                    ItemCheck::Fits(fits)
                }
                Err(e) => ItemCheck::Refused(self.reader.refused(e)),
            };
            checks.push(check);
        }
        checks
    }

    /// Works batches until `shutdown`: those created (a wake) and those
    /// whose lease ended (another node's that stopped, or a completion check).
    pub async fn run(self, shutdown: Arc<Notify>) {
        let settings = LoopSettings {
            concurrency: CONCURRENCY,
            idle_poll: Duration::from_millis(250),
            drain: Duration::from_secs(5),
        };
        let store = self.purchasing.store.clone();
        let claim = move |free: u32| {
            let store = store.clone();
            async move {
                match store.claim_batches(free, LEASE).await {
                    Ok(batches) => Claimed::of(batches, free),
                    Err(e) => {
                        tracing::error!(error = %e, "claiming batches failed");
                        Claimed::failed()
                    }
                }
            }
        };
        let worker = self.clone();
        let start = move |batch: Batch| {
            let worker = worker.clone();
            Some(async move { worker.work(batch).await })
        };
        claim_loop(settings, Some(self.waiting.clone()), shutdown, claim, start).await;
    }

    /// Claims the due batches once and works each (tests): how many.
    pub async fn run_once(&self) -> Result<usize, StoreError> {
        let batches = self.purchasing.store.claim_batches(64, LEASE).await?;
        let worker = self.clone();
        Ok(run_all(batches, move |batch| {
            let worker = worker.clone();
            async move { worker.work(batch).await }
        })
        .await)
    }

    async fn work(&self, batch: Batch) {
        let worked = match batch.status {
            BatchStatus::Placing => self.place_all(&batch).await,
            BatchStatus::Fulfilling => self.look_for_completion(&batch).await,
            BatchStatus::Completed => Ok(()),
        };
        // Left under its lease: the next claim after it takes it up again.
        if let Err(e) = worked {
            tracing::error!(batch = batch.id, error = %e, "batch left for the next claim");
        }
    }

    /// Places the items not placed yet, in order, then waits for them.
    async fn place_all(&self, batch: &Batch) -> Result<(), StoreError> {
        let store = &self.purchasing.store;
        let buyer = Buyer {
            account_id: batch.account_id,
            key_id: batch.key_id,
        };
        let standing = self.standing(&buyer).await?;
        let items = store.batch_items(&batch.id).await?;
        let queued = items
            .into_iter()
            .filter(|item| item.outcome == ItemOutcome::Queued);
        let mut placing = futures_util::stream::iter(queued)
            .map(|item| self.place(&buyer, standing, item))
            .buffered(PLACING_AHEAD);
        while let Some((position, placed)) = placing.next().await {
            let placed = placed?;
            store
                .record_batch_item(&batch.id, position, placed, LEASE)
                .await?;
        }
        drop(placing);
        store.batch_placed(&batch.id, Duration::ZERO).await?;
        let placed = store.batch(batch.account_id, &batch.reference).await?;
        match placed {
            Some(placed) => self.look_for_completion(&placed).await,
            None => Ok(()),
        }
    }

    /// The batch's key's and account's statuses, read once per claim: a key
    /// revoked or an account suspended meanwhile refuses the items left.
    async fn standing(&self, buyer: &Buyer) -> Result<Standing, StoreError> {
        let store = &self.purchasing.store;
        let key = store.api_key(buyer.key_id).await?;
        let account = store.account(buyer.account_id).await?;
        Ok(match (key, account) {
            (Some(key), Some(account)) => (key.status, account.status, key.rate_limit),
            _ => (KeyStatus::Revoked, AccountStatus::Active, None),
        })
    }

    /// One item through the purchase operation. A store failure leaves it
    /// queued (`Err`); a reference already used is this item's own purchase
    /// placed before a crash or a lost lease (a used reference was refused
    /// when the batch was stored), so it is recorded as placed.
    async fn place(
        &self,
        buyer: &Buyer,
        (key, account, rate_limit): Standing,
        item: BatchItem,
    ) -> (u32, Result<ItemPlaced, StoreError>) {
        let refuse = |e| {
            let Refused { error, message } = self.reader.refused(e);
            Ok(ItemPlaced::Refused { error, message })
        };
        let in_force = key_in_force(key, account);
        let placed = match (in_force, self.reader.request(item.product, &item.body)) {
            (Err(why), _) => refuse(why),
            (Ok(()), Err(Refused { error, message })) => Ok(ItemPlaced::Refused { error, message }),
            (Ok(()), Ok(request)) => match self.paced_buy(buyer, rate_limit, request).await {
                Ok(tx) => Ok(ItemPlaced::Placed(tx.code)),
                Err(PurchaseError::DuplicateReference(Some(code))) => Ok(ItemPlaced::Placed(code)),
                Err(PurchaseError::DuplicateReference(None)) => {
                    self.own_purchase(buyer, &item.reference).await
                }
                Err(PurchaseError::Store(e)) => Err(e),
                Err(e) => refuse(e),
            },
        };
        (item.position, placed)
    }

    /// The purchase, once the key's rate budget has a token for it: an
    /// item spends the budget as the request it stands for would.
    async fn paced_buy(
        &self,
        buyer: &Buyer,
        rate_limit: Option<RateLimit>,
        request: PurchaseRequest,
    ) -> Result<billpay_store::Transaction, PurchaseError> {
        self.purchasing.spend_token(buyer.key_id, rate_limit).await;
        self.purchasing.buy(buyer, request).await
    }

    /// The purchase with the item's reference, placed by an earlier pass.
    async fn own_purchase(&self, buyer: &Buyer, reference: &str) -> Result<ItemPlaced, StoreError> {
        let lookup = TxLookup::Reference(reference.to_owned());
        let found = self
            .purchasing
            .store
            .transaction(Some(buyer.account_id), lookup)
            .await?;
        let tx = found.ok_or(StoreError::NotFound("transaction"))?;
        Ok(ItemPlaced::Placed(tx.code))
    }

    /// Every item final: the batch completed and its webhook queued, once;
    /// else looked at again shortly.
    async fn look_for_completion(&self, batch: &Batch) -> Result<(), StoreError> {
        let store = &self.purchasing.store;
        if !batch.counts.all_final() {
            return store.recheck_batch(&batch.id, RECHECK).await;
        }
        let counts = batch.counts;
        let payload = BatchCompleted {
            batch_id: batch.id.clone(),
            charged: counts.charged,
            completed_at: billpay_store::clock::now_rfc3339(),
            event: BatchCompleted::EVENT,
            failed: counts.failed,
            items: counts.items,
            reference: batch.reference.clone(),
            refused: counts.refused,
            successful: counts.successful,
        };
        let event = BatchCompleted::EVENT;
        if store
            .complete_batch(&batch.id, event, &payload.to_json())
            .await?
        {
            tracing::info!(batch = batch.id, items = counts.items, "batch completed");
        }
        Ok(())
    }
}
