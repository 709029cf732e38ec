//! Each supplier's health and last known costs (issue 47; migration
//! `033_supplier_health`), shared by every node: the fulfilment worker
//! records answers and takes probes here, the routes read it (through the
//! worker's short cache), the CLI and the console show it, the operator
//! alerts read its episodes. The rules are the domain's
//! (`billpay_domain::supplier_health`); a change reads the row locked
//! (PostgreSQL: `FOR UPDATE`, after inserting it if new; SQLite's writer runs
//! one job at a time), applies them and writes it back, in one transaction.

use crate::clock::now_ms;
use crate::db::{ReadTx, RowRead, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::Kobo;
use billpay_domain::supplier_health::{
    Answer, HealthError, HealthRules, SupplierHealth, Transition,
};

/// What a delivery really cost at a supplier (the cheapest route's last
/// known cost when the catalogue names no expected one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupplierCost {
    pub supplier: String,
    /// The product's name (`data`), its provider and plan (`""`: none).
    pub product: String,
    pub provider: String,
    pub plan: String,
    pub cost: Kobo,
    /// The face value it was for (a product without plans scales by it).
    pub face_value: Kobo,
    pub at_ms: i64,
}

/// One answer to record: `answer` (none: only the cost), and the cost a
/// delivery had when it changed.
#[derive(Debug, Clone)]
pub struct HealthOutcome {
    pub supplier: String,
    pub answer: Option<Answer>,
    pub cost: Option<SupplierCost>,
}

for_both_engines! {
    /// Suppliers' health and last known costs (`areas/supplier_health.rs`).
    pub trait SupplierHealthStore {
        /// Every supplier's record (those never recorded have none), by name.
        fn supplier_health() -> Vec<SupplierHealth> = read |tx| all(tx);
        /// Records one answer (and the cost a delivery had); answers the
        /// supplier's record now and the change the owner is told of.
        fn record_supplier_outcome(outcome: HealthOutcome, rules: HealthRules)
            -> (SupplierHealth, Option<Transition>)
            = write |tx| record(tx, &outcome, &rules);
        /// Takes the probe of a supplier whose back-off is over: `true` for
        /// one purchase at a time (every node's), which is then the test.
        fn take_supplier_probe(supplier: &str, rules: HealthRules) -> bool
            = write |tx| take_probe(tx, &supplier, &rules);
        /// Every last known cost, by supplier, product, provider and plan.
        fn supplier_costs() -> Vec<SupplierCost> = read |tx| costs(tx);
    }
}

const HEALTH_COLUMNS: &str = "supplier, failures, backoffs, backoff_until_ms, probe_until_ms, episodes, down_at_ms, back_at_ms, last_errors";

fn health_row(row: &dyn RowRead) -> StoreResult<SupplierHealth> {
    const COLUMNS: &str = HEALTH_COLUMNS;
    let errors: String = row.get(col!("last_errors"))?;
    Ok(SupplierHealth {
        supplier: row.get(col!("supplier"))?,
        failures: row.get(col!("failures"))?,
        backoffs: row.get(col!("backoffs"))?,
        backoff_until_ms: row.get(col!("backoff_until_ms"))?,
        probe_until_ms: row.get(col!("probe_until_ms"))?,
        episodes: row.get(col!("episodes"))?,
        down_at_ms: row.get(col!("down_at_ms"))?,
        back_at_ms: row.get(col!("back_at_ms"))?,
        // Written by `save` only; unreadable would mean none kept.
        last_errors: serde_json::from_str::<Vec<HealthError>>(&errors).unwrap_or_default(),
    })
}

async fn all<T: ReadTx>(tx: &T) -> Result<Vec<SupplierHealth>, T::Error> {
    let sql = format!("SELECT {HEALTH_COLUMNS} FROM supplier_health ORDER BY supplier");
    tx.query_all(&sql, &[], health_row).await
}

/// The supplier's row, created if new, locked for the rest of the transaction.
async fn locked<T: Tx>(tx: &T, supplier: &str) -> Result<SupplierHealth, T::Error> {
    let insert =
        "INSERT INTO supplier_health (supplier) VALUES (?1) ON CONFLICT (supplier) DO NOTHING";
    tx.execute(insert, &[&supplier]).await?;
    let lock = T::ENGINE.for_update();
    let sql = format!("SELECT {HEALTH_COLUMNS} FROM supplier_health WHERE supplier = ?1{lock}");
    tx.query_one(&sql, &[&supplier], health_row).await
}

async fn save<T: Tx>(tx: &T, health: &SupplierHealth) -> Result<(), T::Error> {
    let sql = "UPDATE supplier_health SET failures = ?2, backoffs = ?3, backoff_until_ms = ?4,
                   probe_until_ms = ?5, episodes = ?6, down_at_ms = ?7, back_at_ms = ?8,
                   last_errors = ?9, updated_at_ms = ?10
               WHERE supplier = ?1";
    let errors = serde_json::to_string(&health.last_errors).expect("errors are plain JSON");
    let (failures, backoffs, episodes) = (
        i64::from(health.failures),
        i64::from(health.backoffs),
        i64::from(health.episodes),
    );
    tx.execute(
        sql,
        &[
            &health.supplier,
            &failures,
            &backoffs,
            &health.backoff_until_ms,
            &health.probe_until_ms,
            &episodes,
            &health.down_at_ms,
            &health.back_at_ms,
            &errors,
            &now_ms(),
        ],
    )
    .await?;
    Ok(())
}

async fn record<T: Tx>(
    tx: &T,
    outcome: &HealthOutcome,
    rules: &HealthRules,
) -> Result<(SupplierHealth, Option<Transition>), T::Error> {
    if let Some(cost) = &outcome.cost {
        save_cost(tx, cost).await?;
    }
    let mut health = locked(tx, &outcome.supplier).await?;
    let Some(answer) = &outcome.answer else {
        return Ok((health, None));
    };
    let transition = health.record(answer, rules, now_ms());
    save(tx, &health).await?;
    Ok((health, transition))
}

async fn take_probe<T: Tx>(tx: &T, supplier: &str, rules: &HealthRules) -> Result<bool, T::Error> {
    let mut health = locked(tx, supplier).await?;
    let taken = health.take_probe(rules, now_ms());
    if taken {
        save(tx, &health).await?;
    }
    Ok(taken)
}

const COST_COLUMNS: &str = "supplier, product, provider, plan_key, cost, face_value, at_ms";

async fn save_cost<T: Tx>(tx: &T, cost: &SupplierCost) -> Result<(), T::Error> {
    let sql = "INSERT INTO supplier_costs (supplier, product, provider, plan_key, cost, face_value, at_ms)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
               ON CONFLICT (supplier, product, provider, plan_key) DO UPDATE
                   SET cost = excluded.cost, face_value = excluded.face_value, at_ms = excluded.at_ms
                   WHERE supplier_costs.at_ms <= excluded.at_ms";
    tx.execute(
        sql,
        &[
            &cost.supplier,
            &cost.product,
            &cost.provider,
            &cost.plan,
            &cost.cost.0,
            &cost.face_value.0,
            &cost.at_ms,
        ],
    )
    .await?;
    Ok(())
}

async fn costs<T: ReadTx>(tx: &T) -> Result<Vec<SupplierCost>, T::Error> {
    const COLUMNS: &str = COST_COLUMNS;
    let sql = format!(
        "SELECT {COST_COLUMNS} FROM supplier_costs ORDER BY supplier, product, provider, plan_key"
    );
    tx.query_all(&sql, &[], |row| {
        Ok(SupplierCost {
            supplier: row.get(col!("supplier"))?,
            product: row.get(col!("product"))?,
            provider: row.get(col!("provider"))?,
            plan: row.get(col!("plan_key"))?,
            cost: row.get(col!("cost"))?,
            face_value: row.get(col!("face_value"))?,
            at_ms: row.get(col!("at_ms"))?,
        })
    })
    .await
}
