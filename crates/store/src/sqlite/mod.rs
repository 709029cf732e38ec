//! The embedded SQLite backend of [`Store`]: one writer thread that
//! group-commits every write, reader threads for the reads, and the point
//! reads of the request path on the caller's own connection ([`engine`]).
//!
//! The areas are written once for both engines (`crate::areas`); what is
//! left here is SQLite's own: the engine, backups, and how a placement
//! reaches the writer (`purchases.rs`).

#[cfg(test)]
mod audit_plans;
pub mod backup;
mod engine;
#[cfg(test)]
mod listing_plans;
#[cfg(test)]
pub(crate) mod purchase_path;
mod statements;

use crate::db::ready;
use crate::*;
use engine::Engine;

pub use engine::path_from_url;
pub(crate) use engine::{agreeing, connect, migrate};
pub(crate) use statements::Lite;

/// A statement's query plan, `(parent, detail)` per line, for the plan
/// tests; its parameters left unbound (the plan is the same whatever they are).
#[cfg(test)]
fn query_plan(conn: &rusqlite::Connection, sql: &str) -> rusqlite::Result<Vec<(i64, String)>> {
    let mut plan = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
    let mut rows = plan.raw_query();
    let mut lines = Vec::new();
    while let Some(row) = rows.next()? {
        lines.push((row.get(1)?, row.get(3)?));
    }
    Ok(lines)
}

pub struct SqliteStore {
    pub(crate) engine: Engine,
    /// Seals and opens secrets (`crate::sealing`).
    pub(crate) sealer: Arc<crate::sealing::Sealer>,
}

scoped_tls::scoped_thread_local!(
    /// The writer's connection while it runs a unit of work: its changes
    /// (`crate::work`) find it here, so the work's future holds no
    /// connection and can be `Send` like PostgreSQL's.
    static WRITER: rusqlite::Connection
);

/// `op` on the writer's connection, inside the unit of work it is running.
pub(crate) fn on_writer<T>(
    op: impl FnOnce(&rusqlite::Connection) -> StoreResult<T>,
) -> StoreResult<T> {
    if !WRITER.is_set() {
        return Err(StoreError::backend(
            "a unit of work ran a statement outside the SQLite writer",
        ));
    }
    WRITER.with(op)
}

/// A unit of work is one job of the writer's group commit, in its own savepoint.
#[async_trait::async_trait]
impl crate::work::WorkStore for SqliteStore {
    async fn run_work(
        &self,
        work: crate::work::Work,
    ) -> StoreResult<Box<dyn std::any::Any + Send>> {
        let sealer = self.sealer.clone();
        self.engine
            .write(move |conn| {
                WRITER.set(conn, || {
                    let tx = crate::work::WriteTx::sqlite(&sealer);
                    ready(async { Ok(work.run(&tx).await?) })
                })
            })
            .await
    }
}

impl SqliteStore {
    /// Opens (creating and migrating) the database, and seeds the default
    /// catalogue on first start.
    pub async fn open(url: &str) -> StoreResult<SqliteStore> {
        let path = path_from_url(url)?;
        let engine = tokio::task::spawn_blocking(move || Engine::open(path))
            .await
            .map_err(StoreError::caused)??;
        engine
            .write(|conn| ready(crate::areas::catalogue::seed_default(&Lite(conn))))
            .await?;
        Ok(SqliteStore {
            engine,
            sealer: Arc::new(crate::sealing::Sealer::clear()),
        })
    }
}

#[cfg(test)]
mod errors {
    use crate::StoreError;
    use std::error::Error;

    /// A failure below the store keeps the error that caused it (issue 29),
    /// not only its text.
    #[tokio::test]
    async fn a_database_that_cannot_be_created_keeps_its_cause() {
        let blocker = tempfile::NamedTempFile::new().unwrap();
        // a directory cannot be made below a file
        let url = format!("sqlite://{}/billpay.db", blocker.path().display());
        let Err(error) = super::SqliteStore::open(&url).await else {
            panic!("opened a database below a file");
        };
        assert!(matches!(error, StoreError::Backend(_)), "{error:?}");
        let backend = error.source().expect("the backend error");
        let cause = backend.source().expect("its cause");
        let io = cause.downcast_ref::<std::io::Error>();
        assert!(
            io.is_some(),
            "the cause is the file system's error: {cause:?}"
        );
        assert!(error.to_string().contains("cannot create"), "{error}");
    }
}
