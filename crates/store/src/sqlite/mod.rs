//! The embedded SQLite backend of [`Store`]: one writer thread that
//! group-commits every write, reader threads for the reads, and the point
//! reads of the request path on the caller's own connection ([`engine`]).
//!
//! One module per area (accounts, keys, wallet, catalogue, purchases,
//! sessions, fulfilment, events, audit), each implementing that area's trait
//! (`AccountStore`, …) for this backend; the long statements are in `sql/`.

mod accounts;
mod audit;
pub mod backup;
mod catalogue;
mod claims;
mod engine;
mod events;
mod fulfilment;
mod funding;
mod keys;
mod operators;
mod pricing;
mod purchases;
mod rows;
mod sessions;
mod statements;
mod wallet;

use crate::*;
use engine::Engine;

pub use engine::path_from_url;

pub struct SqliteStore {
    engine: Engine,
}

impl SqliteStore {
    /// Opens (creating and migrating) the database, and seeds the default
    /// catalogue on first start.
    pub async fn open(url: &str) -> StoreResult<SqliteStore> {
        let path = path_from_url(url)?;
        let engine = tokio::task::spawn_blocking(move || Engine::open(path))
            .await
            .map_err(|e| StoreError::Backend(e.to_string()))??;
        catalogue::seed_default(&engine).await?;
        Ok(SqliteStore { engine })
    }
}
