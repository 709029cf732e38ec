//! Schema migrations: applied once, in order, whoever starts first.

use super::error::{PgError, describe};
use crate::clock::now_rfc3339;
use crate::{StoreError, StoreResult};
use deadpool_postgres::Pool;

/// Applied databases have run these: never edit one, add the next.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_initial.sql"),
    include_str!("migrations/002_supplier.sql"),
    include_str!("migrations/003_events_due_by_key.sql"),
    include_str!("migrations/004_ledger_by_transaction.sql"),
    include_str!("migrations/005_credit_source.sql"),
    include_str!("migrations/006_pricing.sql"),
    include_str!("migrations/007_funding.sql"),
    include_str!("migrations/008_operators.sql"),
    include_str!("migrations/009_totp_step.sql"),
    include_str!("migrations/010_reversal_watch.sql"),
    include_str!("migrations/011_last_cost.sql"),
    include_str!("migrations/012_notices.sql"),
    include_str!("migrations/013_notice_outbox.sql"),
    include_str!("migrations/014_operator_alerts.sql"),
    include_str!("migrations/015_account_care.sql"),
    include_str!("migrations/016_shop_buying.sql"),
    include_str!("migrations/017_checkouts.sql"),
    include_str!("migrations/018_notice_watches.sql"),
    include_str!("migrations/019_checkouts_abandoned.sql"),
    include_str!("migrations/020_privacy.sql"),
    include_str!("migrations/021_limits.sql"),
    include_str!("migrations/022_velocity.sql"),
];
/// `pg_advisory_xact_lock` key: two processes migrating at once take turns.
const MIGRATION_LOCK: i64 = 0x0062_696c_6c70_6179;

/// Applies the migrations this database lacks, in one transaction.
pub(super) async fn migrate(pool: &Pool) -> StoreResult<()> {
    apply_missing(pool).await.map_err(|e| match e {
        PgError::Store(e) => e,
        PgError::Db(e) => StoreError::Backend(format!("PostgreSQL: {}", describe(&e))),
    })
}

async fn apply_missing(pool: &Pool) -> Result<(), PgError> {
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    tx.query("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(include_str!("sql/migrations_table.sql"))
        .await?;
    let current: i32 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM billpay_migrations",
            &[],
        )
        .await?
        .try_get(0)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current.max(0) as usize) {
        let version = index as i32 + 1;
        tx.batch_execute(sql).await.map_err(|e| {
            PgError::Store(StoreError::Backend(format!(
                "migration {version} failed: {}",
                describe(&e)
            )))
        })?;
        tx.execute(
            "INSERT INTO billpay_migrations (version, applied_at) VALUES ($1, $2)",
            &[&version, &now_rfc3339()],
        )
        .await?;
        tracing::info!(version, "applied PostgreSQL migration");
    }
    tx.commit().await?;
    Ok(())
}
