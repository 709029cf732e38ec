//! Batches (issue 50, migration `039_batches`): many purchases sent at once
//! under one reference, unique per account. The store keeps each item's body
//! as sent and what became of it; the placing is the purchase operation's
//! (`operations::batches`), run by whichever node holds the batch's lease
//! (`claim_batches`), so no item is placed by two nodes at once and a node
//! that stops leaves the rest to the next claim. `lease_until` is the lease
//! while placing, and once every item is placed, when the batch is next
//! looked at for its completion.

use super::claims::{claim, claim_sql};
use crate::clock::{new_code, now_ms, now_rfc3339};
use crate::db::{One, Param, PerEngine, ReadTx, RowRead, Tx, col, for_both_engines};
use crate::model::text_enum;
use crate::*;
use billpay_domain::{AccountId, KeyId, Kobo, Product, TxStatus};
use std::time::Duration;

/// A batch as sent: its items in order.
#[derive(Debug, Clone)]
pub struct NewBatch {
    pub account_id: AccountId,
    pub key_id: KeyId,
    pub reference: String,
    pub items: Vec<NewBatchItem>,
}

/// One purchase of a batch: its own reference, its product, its body as sent.
#[derive(Debug, Clone)]
pub struct NewBatchItem {
    pub reference: String,
    pub product: Product,
    pub body: String,
}

/// Where a batch is: placing its items, waiting for their final statuses, done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BatchStatus {
    Placing,
    Fulfilling,
    Completed,
}

text_enum!(BatchStatus { Placing = "placing", Fulfilling = "fulfilling", Completed = "completed" });

/// A batch's row and its items counted by outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub id: String,
    pub account_id: AccountId,
    pub key_id: KeyId,
    pub reference: String,
    pub status: BatchStatus,
    pub created_at: String,
    pub completed_at: Option<String>,
    pub counts: BatchCounts,
}

/// A batch's items by outcome, and what its purchases charged (those not
/// failed: a failed purchase is refunded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct BatchCounts {
    pub items: u32,
    /// Not placed yet.
    pub queued: u32,
    pub processing: u32,
    pub successful: u32,
    /// Placed, failed at the supplier and refunded.
    pub failed: u32,
    /// Never placed: refused with a reason (balance, a limit, a used reference…).
    pub refused: u32,
    pub charged: Kobo,
}

impl BatchCounts {
    /// Every item has its final outcome.
    pub fn all_final(&self) -> bool {
        self.queued == 0 && self.processing == 0
    }
}

/// One item and its outcome so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchItem {
    pub position: u32,
    pub reference: String,
    pub product: Product,
    /// The body as sent.
    pub body: String,
    pub outcome: ItemOutcome,
}

/// What became of an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemOutcome {
    Queued,
    /// Refused before any money moved: the contract's error slug and, when
    /// the store knows it, the sentence (a used reference has none here:
    /// the purchase operation words it).
    Refused {
        error: String,
        message: Option<String>,
    },
    /// Placed: the purchase it is.
    Placed {
        code: String,
        status: TxStatus,
        amount: Kobo,
        message: String,
    },
}

/// What placing an item came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemPlaced {
    /// The purchase's code.
    Placed(String),
    Refused {
        error: String,
        message: String,
    },
}

/// An item's slug when its reference is already used.
pub const REFERENCE_USED: &str = "duplicate_reference";

for_both_engines! {
    /// Batches of purchases and their items (`areas/batches.rs`).
    pub trait BatchStore {
        /// The batch, and whether this call created it (`false`: one with its
        /// reference was there, and is answered unchanged). An item whose
        /// reference a purchase or a pending item of the account holds is
        /// refused at once, `duplicate_reference`.
        fn create_batch(new: NewBatch) -> (Batch, bool) = write |tx| create(tx, &new);
        /// The account's batch with `reference`, counted.
        fn batch(account: AccountId, reference: &str) -> Option<Batch>
            = read |tx| find(tx, account, &reference);
        /// The batch's items in order, with their outcomes.
        fn batch_items(batch_id: &str) -> Vec<BatchItem> = read |tx| items(tx, &batch_id);
        /// The account's batches, newest first.
        fn batches(account: AccountId, limit: u32) -> Vec<Batch>
            = read |tx| list(tx, account, limit);
        /// Leases up to `limit` batches not completed whose lease has ended.
        fn claim_batches(limit: u32, lease: Duration) -> Vec<Batch>
            = write |tx| claim_due(tx, limit, lease);
        /// What `position` came to; the batch's lease runs `lease` on from now.
        fn record_batch_item(batch_id: &str, position: u32, placed: ItemPlaced, lease: Duration) -> ()
            = write |tx| record(tx, &batch_id, position, &placed, lease);
        /// Every item is placed or refused: wait for their final statuses,
        /// looked at again `after` from now.
        fn batch_placed(batch_id: &str, after: Duration) -> ()
            = statement |tx| placed(tx, &batch_id, after);
        /// Looked at again `after` from now (items still processing).
        fn recheck_batch(batch_id: &str, after: Duration) -> ()
            = statement |tx| recheck(tx, &batch_id, after);
        /// Completes the batch and queues its webhook event (`event`, its
        /// `payload`) to its key, once: `false` when it was already completed.
        fn complete_batch(batch_id: &str, event: &str, payload: &str) -> bool
            = write |tx| complete(tx, &batch_id, &event, &payload);
    }
}

const BATCH: &str = "id, account_id, key_id, reference, status, created_at, completed_at, \
     items, queued, processing, successful, failed, refused, charged";

/// A batch's row beside its counts (`b` the batch, `i` its items, `t` their purchases).
const COUNTED: &str = "SELECT b.id, b.account_id, b.key_id, b.reference, b.status, b.created_at,
        b.completed_at, COUNT(i.position) AS items,
        SUM(CASE WHEN i.error IS NULL AND i.transaction_code IS NULL THEN 1 ELSE 0 END) AS queued,
        SUM(CASE WHEN t.status = 'processing' THEN 1 ELSE 0 END) AS processing,
        SUM(CASE WHEN t.status = 'successful' THEN 1 ELSE 0 END) AS successful,
        SUM(CASE WHEN t.status = 'failed' THEN 1 ELSE 0 END) AS failed,
        SUM(CASE WHEN i.error IS NOT NULL THEN 1 ELSE 0 END) AS refused,
        CAST(SUM(CASE WHEN t.status = 'failed' OR t.status IS NULL THEN 0 ELSE t.amount END) AS BIGINT)
            AS charged
    FROM batches b
    LEFT JOIN batch_items i ON i.batch_id = b.id
    LEFT JOIN transactions t ON t.code = i.transaction_code";

const GROUPED: &str =
    "GROUP BY b.id, b.account_id, b.key_id, b.reference, b.status, b.created_at, b.completed_at";

fn batch(row: &dyn RowRead) -> StoreResult<Batch> {
    const COLUMNS: &str = BATCH;
    let count = |column| -> StoreResult<u32> {
        let n: Option<i64> = row.get(column)?;
        Ok(n.unwrap_or(0) as u32)
    };
    let charged: Option<i64> = row.get(col!("charged"))?;
    Ok(Batch {
        id: row.get(col!("id"))?,
        account_id: row.parsed(col!("account_id"))?,
        key_id: row.parsed(col!("key_id"))?,
        reference: row.get(col!("reference"))?,
        status: row.parsed(col!("status"))?,
        created_at: row.get(col!("created_at"))?,
        completed_at: row.get(col!("completed_at"))?,
        counts: BatchCounts {
            items: count(col!("items"))?,
            queued: count(col!("queued"))?,
            processing: count(col!("processing"))?,
            successful: count(col!("successful"))?,
            failed: count(col!("failed"))?,
            refused: count(col!("refused"))?,
            charged: Kobo(charged.unwrap_or(0)),
        },
    })
}

async fn create<T: Tx>(tx: &T, new: &NewBatch) -> Result<(Batch, bool), T::Error> {
    let id = new_code("BA");
    let (account, key) = (new.account_id.to_string(), new.key_id.to_string());
    let sql =
        "INSERT INTO batches (id, account_id, key_id, reference, status, item_count, created_at)
               VALUES (?1, ?2, ?3, ?4, 'placing', ?5, ?6)
               ON CONFLICT (account_id, reference) DO NOTHING";
    let count = new.items.len() as i64;
    let params: [&dyn Param; 6] = [&id, &account, &key, &new.reference, &count, &now_rfc3339()];
    let created = tx.execute(sql, &params).await? > 0;
    if created {
        for (position, item) in new.items.iter().enumerate() {
            add_item(tx, &id, position as i64, &account, item).await?;
        }
    }
    let found = find(tx, new.account_id, &new.reference).await?;
    let batch = found.ok_or(StoreError::NotFound("batch"))?;
    Ok((batch, created))
}

/// The item pending, or refused at once when its reference is held by a
/// purchase of the account or by a pending or placed item of another batch.
async fn add_item<T: Tx>(
    tx: &T,
    batch_id: &str,
    position: i64,
    account: &str,
    item: &NewBatchItem,
) -> Result<(), T::Error> {
    let pending = "INSERT INTO batch_items (batch_id, position, account_id, reference, product, body)
                   SELECT ?1, CAST(?2 AS BIGINT), ?3, ?4, ?5, ?6
                   WHERE NOT EXISTS (SELECT 1 FROM transactions WHERE account_id = ?3 AND reference = ?4)
                   ON CONFLICT (account_id, reference) WHERE error IS NULL DO NOTHING";
    let product = item.product.service();
    let params: [&dyn Param; 7] = [
        &batch_id,
        &position,
        &account,
        &item.reference,
        &product,
        &item.body,
        &REFERENCE_USED,
    ];
    if tx.execute(pending, &params[..6]).await? > 0 {
        return Ok(());
    }
    let refused =
        "INSERT INTO batch_items (batch_id, position, account_id, reference, product, body, error)
                   VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    tx.execute(refused, &params).await?;
    Ok(())
}

async fn find<T: ReadTx>(
    tx: &T,
    account: AccountId,
    reference: &str,
) -> Result<Option<Batch>, T::Error> {
    let sql = format!("{COUNTED} WHERE b.account_id = ?1 AND b.reference = ?2 {GROUPED}");
    tx.query_opt(&sql, &[&account.to_string(), &reference], batch)
        .await
}

async fn list<T: ReadTx>(tx: &T, account: AccountId, limit: u32) -> Result<Vec<Batch>, T::Error> {
    let sql = format!(
        "{COUNTED} WHERE b.id IN (SELECT id FROM batches WHERE account_id = ?1
             ORDER BY created_at DESC LIMIT CAST(?2 AS BIGINT))
         {GROUPED} ORDER BY b.created_at DESC"
    );
    let params: [&dyn Param; 2] = [&account.to_string(), &i64::from(limit)];
    tx.query_all(&sql, &params, batch).await
}

async fn items<T: ReadTx>(tx: &T, batch_id: &str) -> Result<Vec<BatchItem>, T::Error> {
    const COLUMNS: &str = "position, reference, product, body, error, message, \
         transaction_code, status, amount, tx_message";
    let sql = "SELECT i.position, i.reference, i.product, i.body, i.error, i.message,
                      i.transaction_code, t.status, t.amount, t.message AS tx_message
               FROM batch_items i LEFT JOIN transactions t ON t.code = i.transaction_code
               WHERE i.batch_id = ?1 ORDER BY i.position";
    tx.query_all(sql, &[&batch_id], |row| {
        let error: Option<String> = row.get(col!("error"))?;
        let code: Option<String> = row.get(col!("transaction_code"))?;
        let outcome = match (error, code) {
            (Some(error), _) => ItemOutcome::Refused {
                error,
                message: row.get(col!("message"))?,
            },
            (None, Some(code)) => ItemOutcome::Placed {
                code,
                status: row.parsed(col!("status"))?,
                amount: row.get(col!("amount"))?,
                message: row.get(col!("tx_message"))?,
            },
            (None, None) => ItemOutcome::Queued,
        };
        let position: i64 = row.get(col!("position"))?;
        Ok(BatchItem {
            position: position as u32,
            reference: row.get(col!("reference"))?,
            product: row.parsed(col!("product"))?,
            body: row.get(col!("body"))?,
            outcome,
        })
    })
    .await
}

/// Batches not completed whose lease ended, the longest waiting first.
static DUE: PerEngine = PerEngine::new(|engine| {
    let due = "status <> 'completed'";
    claim_sql(engine, "batches", "id", (due, "lease_until"), "id")
});

async fn claim_due<T: Tx>(tx: &T, limit: u32, lease: Duration) -> Result<Vec<Batch>, T::Error> {
    let ids = claim(tx, &DUE, (limit, lease), &[], |row| {
        const COLUMNS: &str = "id";
        row.get::<String>(col!("id"))
    })
    .await?;
    let sql = format!("{COUNTED} WHERE b.id = ?1 {GROUPED}");
    let mut claimed = Vec::with_capacity(ids.len());
    for id in ids {
        claimed.extend(tx.query_opt(&sql, &[&id], batch).await?);
    }
    Ok(claimed)
}

async fn record<T: Tx>(
    tx: &T,
    batch_id: &str,
    position: u32,
    placed: &ItemPlaced,
    lease: Duration,
) -> Result<(), T::Error> {
    let position = i64::from(position);
    let (code, error, message) = match placed {
        ItemPlaced::Placed(code) => (Some(code.as_str()), None, None),
        ItemPlaced::Refused { error, message } => {
            (None, Some(error.as_str()), Some(message.as_str()))
        }
    };
    let sql = "UPDATE batch_items SET transaction_code = ?3, error = ?4, message = ?5
               WHERE batch_id = ?1 AND position = ?2";
    let params: [&dyn Param; 5] = [&batch_id, &position, &code, &error, &message];
    tx.execute(sql, &params).await?;
    recheck(tx, batch_id, lease).await
}

async fn placed<T: Tx>(tx: One<'_, T>, batch_id: &str, after: Duration) -> Result<(), T::Error> {
    let sql = "UPDATE batches SET status = 'fulfilling', lease_until = ?2
               WHERE id = ?1 AND status = 'placing'";
    let at = now_ms() + after.as_millis() as i64;
    tx.execute(sql, &[&batch_id, &at]).await?;
    Ok(())
}

async fn recheck<'a, T: Tx + 'a>(
    tx: impl Into<One<'a, T>>,
    batch_id: &str,
    after: Duration,
) -> Result<(), T::Error> {
    let tx: One<'a, T> = tx.into();
    let sql = "UPDATE batches SET lease_until = ?2 WHERE id = ?1";
    let at = now_ms() + after.as_millis() as i64;
    tx.execute(sql, &[&batch_id, &at]).await?;
    Ok(())
}

async fn complete<T: Tx>(
    tx: &T,
    batch_id: &str,
    event: &str,
    payload: &str,
) -> Result<bool, T::Error> {
    let now = now_rfc3339();
    let sql = "UPDATE batches SET status = 'completed', completed_at = ?2, lease_until = 0
               WHERE id = ?1 AND status <> 'completed'";
    if tx.execute(sql, &[&batch_id, &now]).await? == 0 {
        return Ok(false);
    }
    // The batch's key's webhook, as a purchase's: skipped with its one
    // attempt when the key has no URL.
    let first = &*FIRST_STATE;
    let queue = format!(
        "INSERT INTO events (id, transaction_code, account_id, key_id, event, payload, status,
                             attempts, created_at, next_attempt_at)
         SELECT ?1, b.id, b.account_id, k.id, ?6, ?2, {first}, ?3,
                CAST(?4 AS BIGINT)
         FROM batches b JOIN api_keys k ON k.id = b.key_id WHERE b.id = ?5"
    );
    let params: [&dyn Param; 6] = [
        &new_code("EV"),
        &payload,
        &now,
        &now_ms(),
        &batch_id,
        &event,
    ];
    tx.execute(&queue, &params).await?;
    super::events::add_skipped_attempt(tx, batch_id).await?;
    Ok(true)
}
