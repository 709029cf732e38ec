//! What SQLite does its own way for the operator's changes
//! (`areas/logged.rs` has the rest): a finalize with its log line.

use super::SqliteStore;
use super::fulfilment::finalize_in;
use super::statements::Lite;
use crate::areas::operators;
use crate::db::ready;
use crate::*;
use rusqlite::Connection;

/// Appends a log line inside the caller's transaction.
pub(super) fn append_in(conn: &Connection, log: &NewLogEntry) -> StoreResult<()> {
    ready(operators::append(&Lite(conn), log))
}

impl SqliteStore {
    /// The worker's finalize, here with the log line in its writer job.
    pub(crate) async fn finalize_logged_here(
        &self,
        code: &str,
        fin: Finalization,
        log: NewLogEntry,
    ) -> StoreResult<bool> {
        let code = code.to_owned();
        self.engine
            .write(move |conn| {
                let changed = finalize_in(conn, &code, &fin)?;
                if changed {
                    append_in(conn, &log)?;
                }
                Ok(changed)
            })
            .await
    }
}
