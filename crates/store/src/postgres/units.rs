//! Units of work group-committed in lanes sharing one queue (the next free
//! lane takes the next batch): the workers' writes that lock no wallet —
//! marking a purchase submitted, a successful finalize, a delivery attempt —
//! each the area's own function over the batch's transaction, the same one
//! SQLite's writer runs. Each runs in a savepoint of its own, so one that
//! fails is undone alone and the others commit; its caller gets its error
//! after the COMMIT. One that fails on a deadlock or a serialisation failure
//! runs again alone after the COMMIT.

use super::PostgresStore;
use super::batch::Job;
use super::connection::{BoxFut, PgTx, transaction};
use super::error::{PgError, PgResult, backend, retryable, stopped_queue};
use deadpool_postgres::Pool;
use std::any::Any;
use std::sync::Arc;
use tokio::sync::oneshot;

/// What a unit answers, its type erased while it waits in a queue.
type Answer = Box<dyn Any + Send>;
/// A unit: runs its statements on the transaction it is given (more than
/// once if it has to run again).
type Work = Arc<dyn for<'a> Fn(&'a PgTx<'a>) -> BoxFut<'a, Answer> + Send + Sync>;

pub(super) struct UnitJob {
    work: Work,
    reply: oneshot::Sender<PgResult<Answer>>,
}

/// What a unit of a batch came to before the COMMIT.
pub(super) enum Outcome {
    Done(Answer),
    /// Failed: its savepoint was rolled back.
    Failed(PgError),
    /// Failed on a conflict (deadlock, serialisation): run it again alone.
    Again,
}

/// The savepoint of each unit: released (kept in the transaction) when the
/// next one starts, rolled back to when the unit fails.
const FIRST: &str = "SAVEPOINT billpay_unit";
const NEXT: &str = "RELEASE SAVEPOINT billpay_unit; SAVEPOINT billpay_unit";
const UNDO: &str = "ROLLBACK TO SAVEPOINT billpay_unit";

impl Job for UnitJob {
    const QUEUE: &'static str = "units";
    /// A backend caches 64 subtransaction ids; a transaction with more makes
    /// every snapshot in the server look them up in `pg_subtrans`.
    const MAX: usize = 64;
    type Done = Outcome;

    async fn run_in<'a>(tx: &'a PgTx<'a>, batch: &'a [Self]) -> PgResult<Vec<Outcome>> {
        let mut outcomes = Vec::with_capacity(batch.len());
        for (index, job) in batch.iter().enumerate() {
            // One round trip: the last unit's savepoint released, this one's taken.
            tx.batch_execute(if index == 0 { FIRST } else { NEXT })
                .await?;
            let outcome = match (job.work)(tx).await {
                Ok(answer) => Outcome::Done(answer),
                Err(e) => {
                    // Fails (the connection is gone): the batch rolls back whole.
                    tx.batch_execute(UNDO).await?;
                    if retryable(&e) {
                        Outcome::Again
                    } else {
                        Outcome::Failed(e)
                    }
                }
            };
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }

    async fn committed(self, pool: &Pool, done: Outcome) {
        match done {
            Outcome::Done(answer) => self.answer(Ok(answer)),
            Outcome::Failed(e) => self.answer(Err(e)),
            Outcome::Again => self.run_alone(pool).await,
        }
    }

    async fn run_alone(self, pool: &Pool) {
        let work = self.work.clone();
        self.answer(transaction(pool, &*work).await);
    }

    async fn outcome_unknown(self, _pool: &Pool, why: String) {
        self.answer(Err(backend(why)));
    }
}

impl UnitJob {
    fn answer(self, answer: PgResult<Answer>) {
        let _ = self.reply.send(answer);
    }
}

/// `op` as a [`Work`]: its answer boxed.
fn erased<T, F>(op: F) -> Work
where
    T: Send + 'static,
    F: for<'a> Fn(&'a PgTx<'a>) -> BoxFut<'a, T> + Send + Sync + 'static,
{
    fn work<F: for<'a> Fn(&'a PgTx<'a>) -> BoxFut<'a, Answer>>(f: F) -> F {
        f
    }
    Arc::new(work(move |tx| {
        let run = op(tx);
        Box::pin(async move { Ok(Box::new(run.await?) as Answer) })
    }))
}

impl PostgresStore {
    /// Runs `op` (an area's function over the transaction) as a unit of the
    /// group-committed lanes when group commit is on, else in a transaction
    /// of its own. Answered after COMMIT either way. For writes that lock no
    /// wallet (so a batch of them never deadlocks with a batch of purchases).
    pub(super) async fn batched<T, F>(&self, op: F) -> PgResult<T>
    where
        T: Send + 'static,
        F: for<'a> Fn(&'a PgTx<'a>) -> BoxFut<'a, T> + Send + Sync + 'static,
    {
        let Some(lanes) = &self.units else {
            return transaction(&self.pool, &op).await;
        };
        let (reply, answer) = oneshot::channel();
        lanes.submit(
            0,
            UnitJob {
                work: erased(op),
                reply,
            },
        )?;
        let answer = answer.await.map_err(|_| stopped_queue(UnitJob::QUEUE))??;
        answer
            .downcast::<T>()
            .map(|answer| *answer)
            .map_err(|_| backend("a unit of work answered another type"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postgres::scratch::ScratchDatabase;
    use crate::postgres::{PostgresOptions, PostgresStore};

    /// Three units queued together, one lane: one batch, one transaction.
    /// The second fails after its change: only its change is undone.
    #[tokio::test]
    async fn a_unit_failing_after_its_change_is_undone_alone() {
        let Some(url) = std::env::var("BILLPAY_TEST_POSTGRES_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            eprintln!("SKIPPED: set BILLPAY_TEST_POSTGRES_URL to run it");
            return;
        };
        let db = ScratchDatabase::create(&url).await.unwrap();
        let options = PostgresOptions {
            batches_in_flight: 1,
            ..PostgresOptions::default()
        };
        let store = PostgresStore::open_with(&db.url, options).await.unwrap();
        store
            .batched(|tx| {
                Box::pin(async move { Ok(tx.batch_execute("CREATE TABLE units (n INT)").await?) })
            })
            .await
            .unwrap();
        let insert = |n: i32| {
            store.batched(move |tx| {
                Box::pin(async move {
                    tx.execute("INSERT INTO units VALUES ($1)", &[&n]).await?;
                    if n == 2 {
                        return Err(backend("the second unit fails after its change"));
                    }
                    let row = tx.query_one("SELECT txid_current()", &[]).await?;
                    Ok(row.get::<_, i64>(0))
                })
            })
        };
        let (first, second, third) = tokio::join!(insert(1), insert(2), insert(3));
        let (first, third) = (first.unwrap(), third.unwrap());
        assert_eq!(first, third, "the units ran in one transaction");
        let error = crate::StoreError::from(second.unwrap_err()).to_string();
        assert!(error.contains("the second unit fails"), "{error}");
        let client = store.pool.get().await.unwrap();
        let rows = client
            .query("SELECT n FROM units ORDER BY n", &[])
            .await
            .unwrap();
        let kept: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(kept, [1, 3]);
    }
}
