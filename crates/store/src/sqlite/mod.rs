//! The embedded SQLite backend of [`Store`]: one writer thread that
//! group-commits every write, reader threads for the reads, and the point
//! reads of the request path on the caller's own connection ([`engine`]).
//!
//! The areas are written once for both engines (`crate::areas`); what is
//! left here is SQLite's own: the engine, backups, and purchase placement
//! (`purchases.rs`, with `wallet.rs` its bridge to the shared wallet), not
//! yet moved; its long statements are in `sql/`.

#[cfg(test)]
mod audit_plans;
pub mod backup;
mod engine;
mod purchases;
mod rows;
mod statements;
mod wallet;

use crate::db::ready;
use crate::*;
use engine::Engine;

pub use engine::path_from_url;
pub(crate) use engine::{connect, migrate};
pub(crate) use statements::Lite;

pub struct SqliteStore {
    pub(crate) engine: Engine,
}

impl SqliteStore {
    /// Opens (creating and migrating) the database, and seeds the default
    /// catalogue on first start.
    pub async fn open(url: &str) -> StoreResult<SqliteStore> {
        let path = path_from_url(url)?;
        let engine = tokio::task::spawn_blocking(move || Engine::open(path))
            .await
            .map_err(|e| StoreError::Backend(e.to_string()))??;
        engine
            .write(|conn| ready(crate::areas::catalogue::seed_default(&Lite(conn))))
            .await?;
        Ok(SqliteStore { engine })
    }
}
