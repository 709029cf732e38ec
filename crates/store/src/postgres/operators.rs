//! What PostgreSQL does its own way for the operator's changes
//! (`areas/logged.rs` has the rest): a finalize with its log line.

use super::PostgresStore;
use super::connection::{Pg, borrow, query_one};
use super::error::PgResult;
use super::fulfilment::{FINALIZE, finalize_params};
use super::rows::get;
use crate::areas::operators;
use crate::*;
use deadpool_postgres::GenericClient;

/// Appends a log line inside the caller's transaction.
pub(super) async fn append_in<C: GenericClient + Sync>(c: &C, log: &NewLogEntry) -> PgResult<()> {
    operators::append(&Pg(c), log).await
}

impl PostgresStore {
    /// The worker's one-statement finalize, here in a transaction with the log line.
    pub(crate) async fn finalize_logged_here(
        &self,
        code: &str,
        fin: Finalization,
        log: NewLogEntry,
    ) -> StoreResult<bool> {
        let code = code.to_owned();
        self.write(move |tx| {
            let (code, fin, log) = (code.clone(), fin.clone(), log.clone());
            Box::pin(async move {
                let params = finalize_params(&code, &fin);
                let row = query_one(tx, &FINALIZE, &borrow(&params)).await?;
                let (found, changed): (bool, i64) = (get(&row, 0)?, get(&row, 1)?);
                if !found {
                    return Err(StoreError::NotFound("transaction").into());
                }
                if changed > 0 {
                    append_in(tx, &log).await?;
                }
                Ok(changed > 0)
            })
        })
        .await
    }
}
