//! The group-commit engine: jobs (one statement each) queue in lanes; a lane
//! runs one batch at a time, up to [`MAX_BATCH`] jobs pipelined in one
//! transaction, one COMMIT, then answers each. Purchases take one queue per
//! lane (a wallet always the same lane); the workers' statements share one
//! queue that every lane takes from (the next free lane takes the next batch).

use super::connection::Client;
use super::error::{PgError, PgResult, backend, describe, stopped_queue};
use deadpool_postgres::Pool;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{Mutex, mpsc};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// Jobs per group-commit transaction at most.
pub const MAX_BATCH: usize = 128;

/// One statement waiting to be group-committed, and where its answer goes.
pub(super) trait Job: Send + Sync + Sized + 'static {
    /// The queue's name in the batch metric.
    const QUEUE: &'static str;

    fn sql(&self) -> &'static str;
    fn params(&self) -> Vec<&(dyn ToSql + Sync)>;
    /// Answers the caller: its row once the batch committed, or why not.
    fn answer(self, row: PgResult<Row>);
    /// Runs it in a transaction of its own and answers (after its batch rolled back).
    fn run_alone(self, pool: &Pool) -> impl Future<Output = ()> + Send + '_;
    /// Its batch's COMMIT lost its connection (`why`), so whether it was
    /// accepted is unknown. By default the caller is told so: it may have
    /// been, so it is not run again. A job that can find out overrides this.
    fn outcome_unknown(self, _pool: &Pool, why: String) -> impl Future<Output = ()> + Send + '_ {
        async move { self.answer(Err(backend(why))) }
    }
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

/// One lane: takes what is queued (up to [`MAX_BATCH`]), runs it as one
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
async fn next_batch<J>(queue: &Queue<J>) -> Option<Vec<J>> {
    let mut queue = queue.lock().await;
    let mut batch = vec![queue.recv().await?];
    while batch.len() < MAX_BATCH {
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
            Ok(rows) => {
                for (job, row) in batch.into_iter().zip(rows) {
                    job.answer(Ok(row));
                }
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

async fn commit_batch<J: Job>(pool: &Pool, batch: &[J]) -> Result<Vec<Row>, BatchError> {
    let rolled_back = |e: PgError| BatchError::RolledBack(e);
    let mut client: Client = pool.get().await.map_err(|e| rolled_back(e.into()))?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| rolled_back(e.into()))?;
    let mut statements = HashMap::new();
    for job in batch {
        if !statements.contains_key(job.sql()) {
            let stmt = tx.prepare_cached(job.sql()).await;
            statements.insert(job.sql(), stmt.map_err(|e| rolled_back(e.into()))?);
        }
    }
    let params: Vec<_> = batch.iter().map(Job::params).collect();
    // Polled together, the statements are pipelined on the one connection.
    let calls = batch
        .iter()
        .zip(&params)
        .map(|(job, p)| tx.query_one(&statements[job.sql()], p));
    let rows = futures_util::future::try_join_all(calls)
        .await
        .map_err(|e| rolled_back(e.into()))?;
    match tx.commit().await {
        Ok(()) => Ok(rows),
        // The server answered with an error: it rolled back.
        Err(e) if e.as_db_error().is_some() => Err(rolled_back(e.into())),
        Err(e) => Err(BatchError::Unknown(e)),
    }
}
