//! Placing a purchase, group-committed in per-wallet lanes: a lane's batch
//! is one transaction running the placement both engines share
//! (`areas/purchases.rs::place`).

use super::Pg;
use super::PostgresStore;
use super::batch::Job;
use super::connection::PgTx;
use super::error::{
    PgError, PgResult, RECONNECT_WINDOW, TRIES, backoff, connection_ended, retry_after,
    stopped_queue, violates,
};
use crate::areas::purchases::{Order, place};
use crate::*;
use billpay_domain::AccountId;
use deadpool_postgres::Pool;
use tokio::sync::oneshot;

impl PostgresStore {
    /// Group-committed in the wallet's lane, or alone without lanes.
    pub(crate) async fn place_purchase_here(&self, new: NewPurchase) -> StoreResult<Transaction> {
        let order = Order::new(new);
        let Some(lanes) = &self.purchases else {
            let mut order = order;
            return place_one(&self.pool, &mut order).await;
        };
        let (reply, answer) = oneshot::channel();
        let lane = lane_of(order.new.account_id, lanes.queues());
        lanes.submit(lane, PurchaseJob { order, reply })?;
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
    order: Order,
    reply: oneshot::Sender<StoreResult<Transaction>>,
}

impl Job for PurchaseJob {
    const QUEUE: &'static str = "purchases";
    type Done = StoreResult<Transaction>;

    async fn run_in<'a>(
        tx: &'a PgTx<'a>,
        batch: &'a [Self],
    ) -> PgResult<Vec<StoreResult<Transaction>>> {
        let orders: Vec<&Order> = batch.iter().map(|job| &job.order).collect();
        place(&Pg(tx), &orders).await
    }

    async fn committed(self, _pool: &Pool, placed: StoreResult<Transaction>) {
        let _ = self.reply.send(placed);
    }

    async fn run_alone(self, pool: &Pool) {
        let mut order = self.order;
        let _ = self.reply.send(place_one(pool, &mut order).await);
    }

    /// The purchase's code is drawn before its batch, so a transaction
    /// under that code means the batch committed: that is the answer. None
    /// means nothing of the batch did, and placing it alone is safe.
    async fn outcome_unknown(self, pool: &Pool, _why: String) {
        let mut order = self.order;
        let answer = match placed_under(pool, &order.code).await {
            Ok(Some(placed)) => Ok(placed),
            Ok(None) => place_one(pool, &mut order).await,
            Err(e) => Err(e),
        };
        let _ = self.reply.send(answer);
    }

    /// Wallets are locked in account order.
    fn lock_order(batch: &mut [Self]) {
        batch.sort_by_key(|job| job.order.new.account_id);
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

/// One purchase in its own transaction, retried on serialisation failures
/// and deadlocks, and on a fresh connection for up to [`RECONNECT_WINDOW`]
/// while connections end under it (safe: its reference is unique, so a
/// first run that did commit makes the next a `duplicate_reference`, never a
/// second debit).
async fn place_one(pool: &Pool, order: &mut Order) -> StoreResult<Transaction> {
    let started = std::time::Instant::now();
    let mut attempt = 0;
    loop {
        let result = async {
            let mut client = pool.get().await?;
            let tx = client.transaction().await?;
            let placed = place(&Pg(&tx), &[&*order]).await?;
            tx.commit().await?;
            Ok::<_, PgError>(placed)
        }
        .await;
        match result {
            Ok(mut placed) => return placed.pop().expect("one outcome per order"),
            Err(e) if connection_ended(&e) && started.elapsed() < RECONNECT_WINDOW => {
                attempt += 1;
                backoff(attempt.min(4)).await;
            }
            Err(e) if retry_after(&e, attempt) => {
                attempt += 1;
                backoff(attempt).await;
            }
            Err(e) if violates(&e, "transactions_pkey") && attempt + 1 < TRIES => {
                attempt += 1;
                order.draw_code_again();
            }
            Err(e) => return Err(e.into()),
        }
    }
}
