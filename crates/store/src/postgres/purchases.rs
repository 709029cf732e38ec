//! Placing a purchase on PostgreSQL: the area's placement
//! (`areas/purchases.rs::place`, SQLite's too), group-committed in
//! per-wallet lanes. A batch locks its wallets once, in account order, in
//! one statement; then each wallet's purchases are placed in turn, the
//! wallets' side by side (their statements pipelined on the batch's one
//! connection); one COMMIT. A refusal changes nothing (the area checks
//! before it changes), so a batch needs no savepoints; any other error
//! rolls the batch back and each purchase is placed alone.

use super::PostgresStore;
use super::batch::Job;
use super::connection::{Pg, PgTx, query};
use super::error::{
    PgError, PgResult, RECONNECT_WINDOW, TRIES, backoff, connection_ended, retry_after,
    stopped_queue, violates,
};
use crate::areas::{limits, purchases};
use crate::clock::{new_code, now_ms};
use crate::*;
use billpay_domain::AccountId;
use deadpool_postgres::Pool;
use tokio::sync::oneshot;

/// The unique index behind a reference used once per account: the last
/// guard, should a placement ever pass the check under the wallet's lock.
const ONE_REFERENCE: &str = "transactions_account_id_reference_key";

impl PostgresStore {
    /// Group-committed in the wallet's lane, or alone without lanes.
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
    /// Placed, or refused (nothing changed).
    type Done = StoreResult<Transaction>;

    async fn run_in<'a>(
        tx: &'a PgTx<'a>,
        batch: &'a [Self],
    ) -> PgResult<Vec<StoreResult<Transaction>>> {
        let mut accounts: Vec<&str> = batch.iter().map(|job| job.args.account.as_str()).collect();
        accounts.dedup(); // in account order (`lock_order`)
        lock_wallets(tx, &accounts).await?;
        let wallets = batch.chunk_by(|a, b| a.args.account == b.args.account);
        let placed = wallets.map(|jobs| async move {
            let mut answers = Vec::with_capacity(jobs.len());
            for job in jobs {
                answers.push(refusal_kept(job.args.place_in(tx).await)?);
            }
            Ok::<_, PgError>(answers)
        });
        let placed = futures_util::future::try_join_all(placed).await?;
        Ok(placed.into_iter().flatten().collect())
    }

    async fn committed(self, _pool: &Pool, done: StoreResult<Transaction>) {
        let _ = self.reply.send(done);
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

    /// Wallets are locked in account order, a wallet's purchases kept in
    /// the order they came (a stable sort).
    fn lock_order(batch: &mut [Self]) {
        batch.sort_by(|a, b| a.args.account.cmp(&b.args.account));
    }
}

/// A refusal is the purchase's answer (it changed nothing, so the batch
/// goes on); any other error fails the batch.
fn refusal_kept(placed: PgResult<Transaction>) -> PgResult<StoreResult<Transaction>> {
    match placed {
        Ok(placed) => Ok(Ok(placed)),
        Err(PgError::Store(refused @ StoreError::Refused(_))) => Ok(Err(refused)),
        Err(PgError::Store(StoreError::NotFound("account"))) => {
            Ok(Err(StoreError::NotFound("account")))
        }
        Err(e) => Err(e),
    }
}

/// Locks the wallets of `accounts` (every node's batches alike, in the
/// statement's order, so they never deadlock): the area's reads after it
/// see every purchase of them committed before, in snapshots of their own
/// (READ COMMITTED). An account that does not exist locks nothing; its
/// placement answers `NotFound`.
async fn lock_wallets(tx: &PgTx<'_>, accounts: &[&str]) -> PgResult<()> {
    let sql = "SELECT id FROM accounts WHERE id = ANY($1) ORDER BY id FOR UPDATE";
    query(tx, sql, &[&accounts]).await?;
    Ok(())
}

/// One purchase, its code drawn and its clock read when it was asked for.
struct PurchaseArgs {
    new: NewPurchase,
    account: String,
    code: String,
    today: limits::Today,
    now_ms: i64,
}

impl PurchaseArgs {
    fn new(new: NewPurchase) -> Self {
        PurchaseArgs {
            account: new.account_id.to_string(),
            code: new_code("BP"),
            today: limits::Today::now(),
            now_ms: now_ms(),
            new,
        }
    }

    /// The area's placement inside `tx`, the wallet locked already.
    async fn place_in(&self, tx: &PgTx<'_>) -> PgResult<Transaction> {
        purchases::place(&Pg(tx), &self.new, &self.code, &self.today, self.now_ms).await
    }
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
            purchases::look_up(&Pg(&client), None, lookup).await
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

/// One purchase in a transaction of its own (its wallet locked first),
/// retried on serialisation failures and deadlocks, and on a fresh
/// connection for up to [`RECONNECT_WINDOW`] while connections end under it
/// (safe: its reference is unique, so a first run that did commit makes the
/// next a `duplicate_reference`, never a second debit).
async fn place_one(pool: &Pool, args: &mut PurchaseArgs) -> StoreResult<Transaction> {
    let started = std::time::Instant::now();
    let mut attempt = 0;
    loop {
        let result = async {
            let mut client = pool.get().await?;
            let tx = client.transaction().await?;
            lock_wallets(&tx, &[args.account.as_str()]).await?;
            // A refusal returns here: nothing changed, the transaction rolls back.
            let placed = args.place_in(&tx).await?;
            tx.commit().await?;
            Ok::<_, PgError>(placed)
        }
        .await;
        match result {
            Ok(placed) => return Ok(placed),
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
            // The last guard held: rolled back whole, so never a second debit.
            Err(e) if violates(&e, ONE_REFERENCE) => {
                return Err(Refusal::DuplicateReference.into());
            }
            Err(e) => return Err(e.into()),
        }
    }
}
