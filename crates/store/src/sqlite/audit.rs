//! The audit: every check of [`crate::audit::CHECKS`] on one snapshot.

use super::engine::Engine;
use crate::StoreResult;
use crate::audit::{AuditRow, CHECKS, CheckOutcome};
use rusqlite::Connection;

pub(super) async fn run(engine: &Engine) -> StoreResult<Vec<CheckOutcome>> {
    engine
        .read(|conn| {
            let snapshot = conn.unchecked_transaction()?;
            let outcomes = CHECKS
                .iter()
                .map(|check| {
                    Ok(CheckOutcome {
                        name: check.name,
                        rule: check.rule,
                        violations: audit_rows(&snapshot, check.sql)?,
                    })
                })
                .collect::<StoreResult<_>>()?;
            snapshot.commit()?;
            Ok(outcomes)
        })
        .await
}

/// The rows of an audit query, every column read as text.
fn audit_rows(conn: &Connection, sql: &str) -> StoreResult<Vec<AuditRow>> {
    let mut stmt = conn.prepare(sql)?;
    let names: Vec<String> = stmt.column_names().into_iter().map(String::from).collect();
    let rows = stmt.query_map([], |row| {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| Ok((name.clone(), row.get(i)?)))
            .collect()
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
