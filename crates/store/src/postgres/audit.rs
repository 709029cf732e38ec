//! The audit: every check of [`crate::audit::CHECKS`] on one snapshot.

use super::PostgresStore;
use super::error::PgError;
use crate::AuditStore;
use crate::StoreResult;
use crate::audit::{AuditRow, CHECKS, CheckOutcome};
use async_trait::async_trait;

#[async_trait]
impl AuditStore for PostgresStore {
    async fn audit(&self) -> StoreResult<Vec<crate::audit::CheckOutcome>> {
        let run = async {
            let mut client = self.client().await?;
            let snapshot = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await?;
            let mut outcomes = Vec::new();
            for check in CHECKS {
                let rows = snapshot.query(check.sql, &[]).await?;
                outcomes.push(CheckOutcome {
                    name: check.name,
                    rule: check.rule,
                    violations: rows.iter().map(audit_row).collect::<Result<_, _>>()?,
                });
            }
            snapshot.commit().await?;
            Ok::<_, PgError>(outcomes)
        };
        Ok(run.await?)
    }
}

/// One row of an audit query, every column read as text.
fn audit_row(row: &tokio_postgres::Row) -> Result<AuditRow, tokio_postgres::Error> {
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, column)| Ok((column.name().to_owned(), row.try_get(i)?)))
        .collect()
}
