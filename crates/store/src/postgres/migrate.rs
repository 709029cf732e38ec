//! Schema migrations (`crate::migrations`): applied once, in order, whoever
//! starts first.

use super::error::{PgError, describe};
use crate::clock::now_rfc3339;
use crate::db::Engine;
use crate::migrations::MIGRATIONS;
use crate::{StoreError, StoreResult};
use deadpool_postgres::Pool;

/// `pg_advisory_xact_lock` key: two processes migrating at once take turns.
const MIGRATION_LOCK: i64 = 0x0062_696c_6c70_6179;
const CURRENT: &str = "SELECT COALESCE(MAX(version), 0) FROM billpay_migrations";
const RECORD: &str = "INSERT INTO billpay_migrations (version, applied_at) VALUES ($1, $2)";

/// Applies the steps this database lacks, up to `last`, in one transaction.
pub(crate) async fn migrate(pool: &Pool, last: usize) -> StoreResult<()> {
    let applied: Result<(), PgError> = async {
        let mut client = pool.get().await?;
        let tx = client.transaction().await?;
        tx.query("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await?;
        // Creates the table; renumbers one kept in PostgreSQL's own numbering.
        tx.batch_execute(include_str!("sql/migrations_table.sql"))
            .await?;
        let current: i32 = tx.query_one(CURRENT, &[]).await?.try_get(0)?;
        let pending = MIGRATIONS.iter().enumerate().take(last);
        for (index, step) in pending.skip(current.max(0) as usize) {
            let (version, sql) = (index as i32 + 1, step.sql(Engine::Postgres));
            let failed = |e| {
                let message = format!("migration {} failed: {}", step.name, describe(&e));
                PgError::Store(StoreError::described(message, e))
            };
            tx.batch_execute(&sql).await.map_err(failed)?;
            tx.execute(RECORD, &[&version, &now_rfc3339()]).await?;
            tracing::info!(version, "applied PostgreSQL migration");
        }
        Ok(tx.commit().await?)
    }
    .await;
    applied.map_err(|e| match e {
        PgError::Store(e) => e,
        PgError::Db(e) => StoreError::described(format!("PostgreSQL: {}", describe(&e)), e),
    })
}
