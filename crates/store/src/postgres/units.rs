//! Units of work group-committed in lanes sharing one queue (the next free
//! lane takes the next batch): the workers' writes that lock no wallet —
//! marking a purchase submitted, a successful finalize, a delivery attempt —
//! each the area's own function over the batch's transaction, the same one
//! SQLite's writer runs. They run bare, one after another, as SQLite's
//! writer runs them: none refuses after a change (each is a `statement`, a
//! guarded write or a change), so none needs a savepoint of its own. Should
//! one fail all the same (a refusal in a decision, a deadlock, a lost
//! connection), the batch rolls back whole and each unit runs again alone,
//! in a transaction of its own, and answers what it comes to there.

use super::PostgresStore;
use super::batch::Job;
use super::connection::{BoxFut, PgTx, transaction};
use super::error::{PgResult, backend, stopped_queue};
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

impl Job for UnitJob {
    const QUEUE: &'static str = "units";
    /// The size the units' batches had with a savepoint each (then bound by
    /// the 64 subtransaction ids a backend caches); kept without them, as
    /// measured, not re-measured against placement's 128.
    const MAX: usize = 64;
    type Done = Answer;

    async fn run_in<'a>(tx: &'a PgTx<'a>, batch: &'a [Self]) -> PgResult<Vec<Answer>> {
        let mut answers = Vec::with_capacity(batch.len());
        for job in batch {
            // A failure fails the batch: each unit then runs alone.
            answers.push((job.work)(tx).await?);
        }
        Ok(answers)
    }

    async fn committed(self, _pool: &Pool, answer: Answer) {
        self.answer(Ok(answer));
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
    /// The second fails after its change: the batch rolls back, and each
    /// runs again alone, so only the second's change is undone.
    #[tokio::test]
    async fn a_unit_failing_after_its_change_is_undone_alone() {
        let Some(db) = ScratchDatabase::for_test().await else {
            return;
        };
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
        let insert = |n: i32, fails: bool| {
            store.batched(move |tx| {
                Box::pin(async move {
                    tx.execute("INSERT INTO units VALUES ($1)", &[&n]).await?;
                    if fails {
                        return Err(backend("the unit fails after its change"));
                    }
                    let row = tx.query_one("SELECT txid_current()", &[]).await?;
                    Ok(row.get::<_, i64>(0))
                })
            })
        };
        // None fails: one transaction.
        let (first, second, third) =
            tokio::join!(insert(1, false), insert(2, false), insert(3, false));
        let (first, second, third) = (first.unwrap(), second.unwrap(), third.unwrap());
        assert!(
            first == second && second == third,
            "the units ran in one transaction"
        );
        // The fifth fails: the fourth and sixth run again, alone.
        let (fourth, fifth, sixth) =
            tokio::join!(insert(4, false), insert(5, true), insert(6, false));
        let (fourth, sixth) = (fourth.unwrap(), sixth.unwrap());
        assert_ne!(fourth, sixth, "each ran again in a transaction of its own");
        let error = crate::StoreError::from(fifth.unwrap_err()).to_string();
        assert!(error.contains("the unit fails"), "{error}");
        let client = store.pool.get().await.unwrap();
        let rows = client
            .query("SELECT n FROM units ORDER BY n", &[])
            .await
            .unwrap();
        let kept: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(kept, [1, 2, 3, 4, 6]);
    }
}
