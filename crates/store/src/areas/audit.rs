//! The audit: every check of [`crate::audit::CHECKS`] on one snapshot, each
//! offending row read column by column as text.

use crate::audit::{AuditRow, CHECKS, CheckOutcome};
use crate::db::{Column, RowRead, Tx, for_both_engines};
use crate::*;

for_both_engines! {
    pub trait AuditStore {
        /// Runs every [`crate::audit::CHECKS`] query on one consistent snapshot.
        fn audit() -> Vec<CheckOutcome> = snapshot |tx| run(tx);
    }
}

async fn run<T: Tx>(tx: &T) -> Result<Vec<CheckOutcome>, T::Error> {
    let mut outcomes = Vec::with_capacity(CHECKS.len());
    for check in CHECKS {
        outcomes.push(CheckOutcome {
            name: check.name,
            rule: check.rule,
            violations: tx.query_all(check.sql, &[], as_text).await?,
        });
    }
    Ok(outcomes)
}

/// Every column of an audit query's row (each selected as text) by its name.
fn as_text(row: &dyn RowRead) -> StoreResult<AuditRow> {
    let names = row.names().into_iter().enumerate();
    names
        .map(|(i, name)| Ok((name, row.text(Column::nth(i))?)))
        .collect()
}
