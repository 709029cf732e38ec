//! The group-commit engine: jobs queue in lanes; a lane runs one batch at a
//! time, up to [`Job::MAX`] jobs in one transaction, one COMMIT, then answers
//! each. Two kinds of job share it: placements (`purchases.rs`: one queue
//! per lane, a wallet always the same lane, a batch placed by one call of
//! the shared placement) and units of work, each an area's function over the
//! transaction, run bare (`units.rs`: the workers' writes, lanes sharing one
//! queue, the next free lane taking the next batch).

use super::connection::{Client, PgTx};
use super::error::{PgError, PgResult, describe, stopped_queue};
use deadpool_postgres::Pool;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{Mutex, mpsc};

/// Jobs per group-commit transaction at most.
pub const MAX_BATCH: usize = 128;

/// A job waiting to be group-committed, and where its answer goes.
pub(super) trait Job: Send + Sync + Sized + 'static {
    /// The queue's name in the batch metric.
    const QUEUE: &'static str;
    /// Jobs per batch at most.
    const MAX: usize = MAX_BATCH;
    /// What a job of a batch comes to before the COMMIT.
    type Done: Send;

    /// Runs the batch (in lock order) inside `tx`: what each job came to,
    /// or an error that rolls the whole batch back.
    fn run_in<'a>(
        tx: &'a PgTx<'a>,
        batch: &'a [Self],
    ) -> impl Future<Output = PgResult<Vec<Self::Done>>> + Send + 'a;
    /// Its batch committed: answers the caller with what it came to.
    fn committed(self, pool: &Pool, done: Self::Done) -> impl Future<Output = ()> + Send + '_;
    /// Runs it in a transaction of its own and answers (after its batch rolled back).
    fn run_alone(self, pool: &Pool) -> impl Future<Output = ()> + Send + '_;
    /// Its batch's COMMIT lost its connection (`why`), so whether it was
    /// accepted is unknown: answers what it can find out, or that (it may
    /// have been accepted, so it is not simply run again).
    fn outcome_unknown(self, pool: &Pool, why: String) -> impl Future<Output = ()> + Send + '_;
    /// Puts a batch in the order its rows are locked in (every batch of
    /// every node alike, so batches never deadlock). As queued by default.
    fn lock_order(_batch: &mut [Self]) {}
}

/// The lanes of one kind of job.
pub(super) struct Lanes<J> {
    queues: Vec<mpsc::UnboundedSender<J>>,
}

type Queue<J> = Arc<Mutex<mpsc::UnboundedReceiver<J>>>;

impl<J: Job> Lanes<J> {
    /// `lanes` lanes, each with its own queue: [`Lanes::submit`] chooses.
    pub fn one_queue_each(pool: &Pool, lanes: usize) -> Self {
        let queues = (0..lanes.max(1))
            .map(|_| {
                let (sender, queue) = mpsc::unbounded_channel();
                tokio::spawn(run_lane(pool.clone(), Arc::new(Mutex::new(queue))));
                sender
            })
            .collect();
        Lanes { queues }
    }

    /// `lanes` lanes taking from one queue.
    pub fn one_shared_queue(pool: &Pool, lanes: usize) -> Self {
        let (sender, queue) = mpsc::unbounded_channel();
        let queue = Arc::new(Mutex::new(queue));
        for _ in 0..lanes.max(1) {
            tokio::spawn(run_lane(pool.clone(), queue.clone()));
        }
        Lanes {
            queues: vec![sender],
        }
    }

    /// How many queues `submit` chooses from.
    pub fn queues(&self) -> usize {
        self.queues.len()
    }

    /// Queues `job` in queue `index` (modulo the number of queues).
    pub fn submit(&self, index: usize, job: J) -> PgResult<()> {
        self.queues[index % self.queues.len()]
            .send(job)
            .map_err(|_| stopped_queue(J::QUEUE))
    }
}

/// One lane: takes what is queued (up to [`Job::MAX`]), runs it as one
/// batch, and only then takes the next; meanwhile new jobs wait, so the next
/// batch grows.
async fn run_lane<J: Job>(pool: Pool, queue: Queue<J>) {
    while let Some(batch) = next_batch(&queue).await {
        let (started, size) = (Instant::now(), batch.len());
        run_batch(&pool, batch).await;
        crate::metrics::record_batch("postgres", J::QUEUE, size, started);
    }
}

/// The next batch: waits for one job, then takes what else is queued.
async fn next_batch<J: Job>(queue: &Queue<J>) -> Option<Vec<J>> {
    let mut queue = queue.lock().await;
    let mut batch = vec![queue.recv().await?];
    while batch.len() < J::MAX {
        match queue.try_recv() {
            Ok(job) => batch.push(job),
            Err(_) => break,
        }
    }
    Some(batch)
}

enum BatchError {
    /// Nothing was committed: every job can be retried.
    RolledBack(PgError),
    /// The connection failed during COMMIT.
    Unknown(tokio_postgres::Error),
}

async fn run_batch<J: Job>(pool: &Pool, mut batch: Vec<J>) {
    if batch.len() > 1 {
        J::lock_order(&mut batch);
        match commit_batch(pool, &batch).await {
            Ok(done) => {
                let answers = batch
                    .into_iter()
                    .zip(done)
                    .map(|(job, done)| job.committed(pool, done));
                futures_util::future::join_all(answers).await;
                return;
            }
            Err(BatchError::Unknown(e)) => {
                // The COMMIT itself was lost: its outcome is unknown, so no
                // job of it may simply be retried (it may have been accepted).
                let why = describe(&e);
                tracing::warn!(error = %why, queue = J::QUEUE, "group commit outcome unknown");
                let settled = batch
                    .into_iter()
                    .map(|job| job.outcome_unknown(pool, why.clone()));
                futures_util::future::join_all(settled).await;
                return;
            }
            Err(BatchError::RolledBack(e)) => {
                tracing::warn!(error = ?e, size = batch.len(), queue = J::QUEUE, "batch failed; running each alone");
            }
        }
    }
    let singles = batch.into_iter().map(|job| job.run_alone(pool));
    futures_util::future::join_all(singles).await;
}

async fn commit_batch<J: Job>(pool: &Pool, batch: &[J]) -> Result<Vec<J::Done>, BatchError> {
    let rolled_back = |e: PgError| BatchError::RolledBack(e);
    let mut client: Client = pool.get().await.map_err(|e| rolled_back(e.into()))?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| rolled_back(e.into()))?;
    let done = J::run_in(&tx, batch).await.map_err(rolled_back)?;
    match tx.commit().await {
        Ok(()) => Ok(done),
        // The server answered with an error: it rolled back.
        Err(e) if e.as_db_error().is_some() => Err(rolled_back(e.into())),
        Err(e) => Err(BatchError::Unknown(e)),
    }
}
