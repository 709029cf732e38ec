//! Placing a purchase, group-committed in per-wallet lanes (the check and
//! the reads are written once, `areas/purchases.rs`).

use super::Pg;
use super::PostgresStore;
use super::batch::{Job, pipelined};
use super::connection::{PgTx, query_one};
use super::error::{
    PgResult, RECONNECT_WINDOW, TRIES, backoff, connection_ended, retry_after, stopped_queue,
    violates,
};
use super::rows::get;
use crate::areas::{limits, purchases};
use crate::clock::lagos_today;
use crate::clock::{new_code, now_ms, rfc3339};
use crate::limits::{LimitKind, LimitRefusal, usage_days};
use crate::*;
use billpay_domain::{AccountId, Kobo};
use deadpool_postgres::Pool;
use tokio::sync::oneshot;
use tokio_postgres::Row;

const PLACE_PURCHASE: &str = include_str!("sql/place_purchase.sql");

impl PostgresStore {
    /// Group-committed in the wallet's lane (one statement each), or alone
    /// without lanes.
    pub(crate) async fn place_purchase_here(&self, new: NewPurchase) -> StoreResult<Transaction> {
        let args = PurchaseArgs::new(new);
        let Some(lanes) = &self.purchases else {
            let mut args = args;
            return place_one(&self.pool, &mut args).await;
        };
        let (reply, answer) = oneshot::channel();
        let lane = lane_of(args.new.account_id, lanes.queues());
        lanes.submit(lane, PurchaseJob { args, reply })?;
        answer
            .await
            .map_err(|_| stopped_queue(PurchaseJob::QUEUE))?
    }
}

/// The lane of a wallet: the same for every purchase of one account, so a
/// hot wallet is debited by one batch per COMMIT instead of several batches
/// queuing on its row lock.
fn lane_of(account: AccountId, lanes: usize) -> usize {
    (account.0.as_u128() % lanes as u128) as usize
}

pub(super) struct PurchaseJob {
    args: PurchaseArgs,
    reply: oneshot::Sender<StoreResult<Transaction>>,
}

impl Job for PurchaseJob {
    const QUEUE: &'static str = "purchases";
    type Done = Row;

    fn run_in<'a>(
        tx: &'a PgTx<'a>,
        batch: &'a [Self],
    ) -> impl Future<Output = PgResult<Vec<Row>>> + Send + 'a {
        pipelined(
            tx,
            batch,
            |_| PLACE_PURCHASE,
            |job| job.args.params().to_vec(),
        )
    }

    async fn committed(self, _pool: &Pool, row: Row) {
        let _ = self.reply.send(self.args.answer(&row));
    }

    async fn run_alone(self, pool: &Pool) {
        let mut args = self.args;
        let _ = self.reply.send(place_one(pool, &mut args).await);
    }

    /// The purchase's code is drawn before its batch, so a transaction
    /// under that code means the batch committed: that is the answer. None
    /// means nothing of the batch did, and placing it alone is safe.
    async fn outcome_unknown(self, pool: &Pool, _why: String) {
        let mut args = self.args;
        let answer = match placed_under(pool, &args.code).await {
            Ok(Some(placed)) => Ok(placed),
            Ok(None) => place_one(pool, &mut args).await,
            Err(e) => Err(e),
        };
        let _ = self.reply.send(answer);
    }

    /// Wallets are locked in account order.
    fn lock_order(batch: &mut [Self]) {
        batch.sort_by(|a, b| a.args.account.cmp(&b.args.account));
    }
}

/// One purchase, ready to bind.
struct PurchaseArgs {
    new: NewPurchase,
    code: String,
    account: String,
    key: String,
    product: &'static str,
    details: String,
    batch_id: Option<String>,
    now_ms: i64,
    now: String,
    /// The Lagos day the purchase counts in, and its 30-day window's first day.
    today: (String, String),
    /// The clock hour, 24 hours ago, and the Lagos day before today.
    velocity: (i64, String, String),
}

impl PurchaseArgs {
    fn new(new: NewPurchase) -> Self {
        let now_ms = now_ms();
        PurchaseArgs {
            code: new_code("BP"),
            account: new.account_id.to_string(),
            key: new.key_id.to_string(),
            product: new.product.service(),
            details: new.details.to_json(),
            batch_id: new.batch_id(),
            now_ms,
            now: rfc3339(now_ms),
            today: usage_days(lagos_today()),
            velocity: {
                let today = limits::Today::now();
                (today.hour, today.new_since(), today.yesterday())
            },
            new,
        }
    }

    fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 22] {
        [
            &self.code,
            &self.account,
            &self.key,
            &self.new.reference,
            &self.product,
            &self.new.provider,
            &self.new.plan_id,
            &self.new.label,
            &self.new.recipient,
            &self.new.amount.0,
            &self.details,
            &self.batch_id,
            &self.now_ms,
            &self.now,
            &self.new.face_value.0,
            &self.new.tier,
            &self.today.0,
            &self.today.1,
            &self.velocity.0,
            &self.velocity.1,
            &self.velocity.2,
            &limits::HELD_UNTIL_MS,
        ]
    }

    /// The function's answer → the transaction as `transaction()` would read it back.
    fn answer(&self, row: &Row) -> StoreResult<Transaction> {
        let outcome: String = get(row, 0)?;
        match outcome.as_str() {
            "ok" => self.placed(Kobo(get(row, 1)?), Kobo(get(row, 2)?), get(row, 7)?),
            "duplicate" => Err(Refusal::DuplicateReference.into()),
            "insufficient" => Err(Refusal::InsufficientBalance.into()),
            "blocked" => Err(Refusal::Blocked.into()),
            "limit" => Err(Refusal::LimitExceeded(limit_refusal(row)?).into()),
            "no_account" => Err(StoreError::NotFound("account")),
            other => Err(StoreError::backend(format!(
                "unexpected purchase outcome {other}"
            ))),
        }
    }

    fn placed(
        &self,
        balance_before: Kobo,
        balance_after: Kobo,
        held_for: Option<String>,
    ) -> StoreResult<Transaction> {
        let placed = purchases::Placed {
            new: &self.new,
            code: &self.code,
            details: &self.details,
            created_at: &self.now,
            balance_before,
            balance_after,
            held_for,
        };
        placed.transaction()
    }
}

/// The function's `limit` answer: which limit, the limit, what was used.
fn limit_refusal(row: &Row) -> StoreResult<LimitRefusal> {
    let name: String = get(row, 3)?;
    let kind = LimitKind::parse(&name)
        .ok_or_else(|| StoreError::backend(format!("unexpected limit {name}")))?;
    Ok(LimitRefusal {
        kind,
        limit: get(row, 4)?,
        used: get(row, 5)?,
        held_to_level0: get(row, 6)?,
    })
}

/// The purchase stored under `code`, if any: read on a fresh connection, and
/// again for up to [`RECONNECT_WINDOW`] while connections end under it.
async fn placed_under(pool: &Pool, code: &str) -> StoreResult<Option<Transaction>> {
    let started = std::time::Instant::now();
    let mut attempt = 0;
    loop {
        let found = async {
            let client = pool.get().await?;
            let lookup = TxLookup::Code(code.to_owned());
            crate::areas::purchases::look_up(&Pg(&client), None, lookup).await
        }
        .await;
        match found {
            Err(e) if connection_ended(&e) && started.elapsed() < RECONNECT_WINDOW => {
                attempt += 1;
                backoff(attempt.min(4)).await;
            }
            other => return Ok(other?),
        }
    }
}

/// One purchase in its own (single-statement) transaction, retried on
/// serialisation failures and deadlocks, and on a fresh connection for up to
/// [`RECONNECT_WINDOW`] while connections end under it (safe: its reference
/// is unique, so a first run that did commit makes the next a
/// `duplicate_reference`, never a second debit).
async fn place_one(pool: &Pool, args: &mut PurchaseArgs) -> StoreResult<Transaction> {
    let started = std::time::Instant::now();
    let mut attempt = 0;
    loop {
        let result = async {
            let client = pool.get().await?;
            query_one(&client, PLACE_PURCHASE, &args.params()).await
        }
        .await;
        match result {
            Ok(row) => return args.answer(&row),
            Err(e) if connection_ended(&e) && started.elapsed() < RECONNECT_WINDOW => {
                attempt += 1;
                backoff(attempt.min(4)).await;
            }
            Err(e) if retry_after(&e, attempt) => {
                attempt += 1;
                backoff(attempt).await;
            }
            // Two purchases drew the same code (same millisecond, same 48
            // random bits): draw again.
            Err(e) if violates(&e, "transactions_pkey") && attempt + 1 < TRIES => {
                attempt += 1;
                args.code = new_code("BP");
            }
            Err(e) => return Err(e.into()),
        }
    }
}
