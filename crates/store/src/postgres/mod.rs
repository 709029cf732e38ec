//! The PostgreSQL backend of [`Store`]: the same tables, rules and answers as
//! the SQLite backend, for when one machine is not enough and several
//! `billpay serve` processes share one database.
//!
//! - Every trait method is one transaction on a pooled connection
//!   (deadpool-postgres, [`connection`]), or statements that each commit on
//!   their own; serialisation failures and deadlocks are retried ([`error`]).
//! - Live purchases and the workers' writes that lock no wallet are
//!   **group-committed** by one engine ([`batch`]): the queued jobs run in
//!   one transaction, one COMMIT, then each caller is answered. Purchases
//!   (up to [`MAX_BATCH`], placed by one call of the placement both engines
//!   share, `areas/purchases.rs::place`) run in per-wallet lanes; a batch
//!   locks wallets in account order, so batches of different nodes never
//!   deadlock. The workers'
//!   writes are units of work ([`units`]: the areas' own functions, up to 64
//!   a batch, run bare, as SQLite's writer runs them). Should a batch fail
//!   (one of its jobs failing fails it), each of its jobs is retried in a
//!   transaction of its own; should its COMMIT lose its connection, each purchase looks
//!   itself up by its code to learn whether it committed (a unit is told
//!   the outcome is unknown).
//! - Workers claim due rows with `FOR UPDATE SKIP LOCKED` plus a lease
//!   (`lease_until`), so several nodes never take the same work, and a node
//!   that dies mid-lease has its work taken over when the lease expires.
//!
//! The areas are written once for both engines (`crate::areas`); what is
//! left here is PostgreSQL's own: the pool, the lanes (`fulfilment.rs`: which
//! of the workers' writes run as units of them, `purchases.rs`: how a
//! placement reaches its lane) and migrations.

mod batch;
mod connection;
mod error;
mod fulfilment;
mod migrate;
mod purchases;
pub mod scratch;
mod units;

pub use batch::MAX_BATCH;
pub(crate) use connection::{Pg, PgTx, pool};
pub use error::PgError;
pub(crate) use migrate::migrate;

use crate::*;
use batch::Lanes;
use deadpool_postgres::Pool;
use purchases::PurchaseJob;
use units::UnitJob;

/// Tuning of the PostgreSQL backend.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// Connections in the pool at most.
    pub pool_size: usize,
    /// Group-commit live purchases (on by default); off, each purchase is its
    /// own transaction (kept for measuring, see docs/benchmarks.md).
    pub group_commit: bool,
    /// Group-commit transactions in flight at once (each on its own
    /// connection). Purchases run in this many lanes, a wallet always in the
    /// same one.
    pub batches_in_flight: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            group_commit: true,
            batches_in_flight: 4,
        }
    }
}

pub struct PostgresStore {
    pool: Pool,
    /// Live purchases, one queue per lane (a wallet always the same lane).
    purchases: Option<Lanes<PurchaseJob>>,
    /// The workers' writes as units of work, lanes sharing one queue.
    units: Option<Lanes<UnitJob>>,
    /// Seals and opens secrets (`crate::sealing`).
    pub(crate) sealer: Arc<crate::sealing::Sealer>,
}

impl PostgresStore {
    /// Connects, migrates (once, whoever comes first), seeds the default
    /// catalogue on first start, and starts the group-commit lanes.
    pub async fn open(url: &str) -> StoreResult<PostgresStore> {
        Self::open_with(url, PostgresOptions::default()).await
    }

    pub async fn open_with(url: &str, options: PostgresOptions) -> StoreResult<PostgresStore> {
        let pool = connection::pool(url, options.pool_size)?;
        migrate::migrate(&pool, crate::migrations::MIGRATIONS.len()).await?;
        let lanes = options.batches_in_flight;
        let store = PostgresStore {
            purchases: options
                .group_commit
                .then(|| Lanes::one_queue_each(&pool, lanes)),
            units: options
                .group_commit
                .then(|| Lanes::one_shared_queue(&pool, lanes)),
            pool,
            sealer: Arc::new(crate::sealing::Sealer::clear()),
        };
        store
            .write(|t| Box::pin(async move { crate::areas::catalogue::seed_default(&Pg(t)).await }))
            .await?;
        Ok(store)
    }
}

/// A unit of work is one pooled transaction, run again whole after a
/// serialisation failure or deadlock.
#[async_trait::async_trait]
impl crate::work::WorkStore for PostgresStore {
    async fn run_work(
        &self,
        work: crate::work::Work,
    ) -> StoreResult<Box<dyn std::any::Any + Send>> {
        let work = Arc::new(work);
        self.write(move |tx| {
            let (work, sealer) = (work.clone(), self.sealer.clone());
            Box::pin(async move {
                let tx = crate::work::WriteTx::postgres(tx, &sealer);
                Ok(work.run(&tx).await?)
            })
        })
        .await
    }
}
