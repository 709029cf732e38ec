//! The hourly sales rollup (issue 48, migration `038_sales_rollup`): final
//! purchases summed per UTC hour of placement, product, provider, supplier,
//! tier and status, so the console's overview, the sales report and the
//! daily summary read hundreds of rows, not every purchase.
//!
//! One rule says what a purchase counts in the rollup ([`contribution`]);
//! every statement here is built from it: the finalization's upsert, a
//! reversal's move, the migration's backfill and the audit's comparison.
//! The rollup is written in the transaction that makes a purchase final,
//! so it always equals the purchases (docs/decisions.md, "The sales rollup").
//!
//! Its rows are per key and shard (migration `044_sales_rollup_shards`):
//! concurrent PostgreSQL transactions add to their own connection's shard of
//! an hour's row instead of waiting for one another's, and every reader sums
//! the shards ([`ROWS`]). Migration 038's unsharded `sales_rollup` is folded
//! into shard 0 (046) and read no more.

use crate::audit::Check;
use crate::db::{
    Column, Engine, Param, PerEngine, ReadTx, RowRead, Statements, col, for_both_engines,
};
use crate::*;
use std::sync::LazyLock;

for_both_engines! {
    /// The hourly sales rollup (`areas/sales_rollup.rs`).
    pub trait SalesRollupStore {
        /// The rollup's rows of the hours in `[from, until)` (RFC 3339 hour
        /// starts, as a Lagos day's start is; `""` and `"~"`: open), those
        /// that count a purchase.
        fn sales_rollup(from: String, until: String) -> Vec<SalesBucket>
            = read |tx| buckets(tx, &from, &until);
    }
}

/// The rollup's columns: its key, then its sums.
const COLUMNS: &str = "hour, product, provider, supplier, tier, status, \
    purchases, face_value, charged, cost, charged_with_cost, cost_unknown";
const KEY: &str = "hour, product, provider, supplier, tier, status";
const SUMS: [&str; 6] = [
    "purchases",
    "face_value",
    "charged",
    "cost",
    "charged_with_cost",
    "cost_unknown",
];

/// What one purchase row of `transactions` adds to its rollup row, `sign`
/// times (`-1` takes it out), with its status and cost as `status` and
/// `cost` say (the columns, or what they were before a reversal). A missing
/// supplier or tier is `''`: a key column is never NULL.
fn contribution(status: &str, cost: &str, sign: i8) -> String {
    format!(
        "SUBSTR(created_at, 1, 13) AS hour, product, provider,
         COALESCE(supplier, '') AS supplier, COALESCE(tier, '') AS tier, {status} AS status,
         {sign} AS purchases, {sign} * COALESCE(face_value, amount) AS face_value,
         {sign} * amount AS charged, {sign} * COALESCE({cost}, 0) AS cost,
         CASE WHEN {cost} IS NULL THEN 0 ELSE {sign} * amount END AS charged_with_cost,
         CASE WHEN {cost} IS NULL THEN {sign} ELSE 0 END AS cost_unknown"
    )
}

/// The statuses the rollup counts.
const FINAL: &str = "status IN ('successful', 'failed')";

/// Every row of the rollup, each a key's shard: what readers sum by [`KEY`].
const ROWS: &str = "sales_rollup_shards AS rollup";

/// The shard a transaction writes: its PostgreSQL connection's, so the
/// concurrent transactions of the lanes and of other nodes add to different
/// rows (a collision only makes one wait, as every one did before); SQLite's
/// one writer has no one to wait for. Of 1,024, not 16: 16 pooled
/// connections' process ids fall on about ten of 16 values (by chance), so
/// two of the four lanes' batches often shared a row, and the upsert's mean
/// was mostly that wait (measured: 0.07–0.18 ms a call against 0.03 ms).
/// A key's hour has a row only for each connection that wrote it, so the
/// readers sum no more rows for the wider range.
fn shard(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "0",
        Engine::Postgres => "pg_backend_pid() % 1024",
    }
}

/// The columns of a purchase's row that its contribution reads.
pub(crate) const SOURCE_COLUMNS: &str =
    "created_at, product, provider, supplier, tier, status, face_value, amount, cost";

/// The purchase `?1`, as a `FROM` clause.
const PURCHASE: &str = "transactions WHERE code = ?1";

/// The contribution of the purchase rows of `source` (a `FROM` clause
/// giving [`SOURCE_COLUMNS`]) as they are now, added to their rows of the
/// transaction's shard (created if new).
pub(crate) fn added_from(engine: Engine, source: &str) -> String {
    upsert(engine, &contribution("status", "cost", 1), source)
}

/// Each `contribution` of the rows of `source` added to its row of the
/// transaction's shard.
fn upsert(engine: Engine, contribution: &str, source: &str) -> String {
    format!(
        "INSERT INTO sales_rollup_shards ({COLUMNS}, shard)
         SELECT {contribution}, {shard} FROM {source}
         ON CONFLICT ({KEY}, shard) DO UPDATE SET {added}",
        shard = shard(engine),
        added = SUMS
            .map(|c| format!("{c} = sales_rollup_shards.{c} + excluded.{c}"))
            .join(", "),
    )
}

/// A successful purchase about to be reversed: the cost it is counted with
/// (the reversal clears it). Read before its status changes.
pub(crate) struct Reversed {
    cost: Option<i64>,
}

impl Reversed {
    /// The successful purchase's `cost` column, read before its status changes.
    pub(crate) fn of(cost: Option<i64>) -> Reversed {
        Reversed { cost }
    }
}

/// The purchase `code`, just made final, counted in its row; a reversed one
/// (`reversed`) first taken out of its successful row, as it was counted.
/// In the finalization's transaction, after its status is written.
pub(crate) async fn record<T: Statements>(
    tx: &T,
    code: &str,
    reversed: Option<Reversed>,
) -> Result<(), T::Error> {
    static ADD: PerEngine = PerEngine::new(|engine| added_from(engine, PURCHASE));
    static TAKE_OUT: PerEngine = PerEngine::new(|engine| {
        let taken_out = contribution("'successful'", "CAST(?2 AS BIGINT)", -1);
        upsert(engine, &taken_out, PURCHASE)
    });
    if let Some(Reversed { cost }) = reversed {
        let params: [&dyn Param; 2] = [&code, &cost];
        tx.execute(TAKE_OUT.sql(T::ENGINE), &params).await?;
    }
    tx.execute(ADD.sql(T::ENGINE), &[&code]).await?;
    Ok(())
}

/// The rollup built from the purchases already final, into shard 0 of an
/// empty rollup: what the bench runs after seeding.
pub fn backfill() -> String {
    backfill_into(&format!("sales_rollup_shards ({COLUMNS}, shard)"), ", 0")
}

/// The same into migration 038's unsharded table: that migration's last
/// statement (`046_sales_rollup_folded` moves its rows into shard 0).
pub(crate) fn backfill_unsharded() -> String {
    backfill_into(&format!("sales_rollup ({COLUMNS})"), "")
}

/// The final purchases' sums per key into `target` (a table and its
/// columns), `more` the values after the sums.
fn backfill_into(target: &str, more: &str) -> String {
    format!(
        "INSERT INTO {target}
         SELECT {KEY}, {sums}{more} FROM (SELECT {rows} FROM transactions WHERE {FINAL}) AS finals
         GROUP BY {KEY}",
        sums = sums(),
        rows = contribution("status", "cost", 1),
    )
}

/// The rollup's sums, each column summed.
fn sums() -> String {
    SUMS.map(|c| format!("CAST(SUM({c}) AS BIGINT) AS {c}"))
        .join(", ")
}

/// The audit's check: every rollup row equals the sums of its purchases.
pub(crate) static CHECK: LazyLock<Check> = LazyLock::new(|| Check {
    name: "sales_rollup_equals_transactions",
    rule: "every row of the hourly sales rollup equals the sums of its final purchases \
           (each figure shown is the purchases' less the rollup's)",
    sql: &CHECK_SQL,
});

/// The purchases' contributions less the rollup's rows, per rollup key: the
/// keys where they differ.
static CHECK_SQL: LazyLock<String> = LazyLock::new(|| {
    let text = SUMS
        .map(|c| format!("CAST(SUM({c}) AS TEXT) AS {c}"))
        .join(", ");
    let differ = SUMS.map(|c| format!("SUM({c}) <> 0")).join(" OR ");
    format!(
        "SELECT {KEY}, {text}
         FROM (SELECT {rows} FROM transactions WHERE {FINAL}
               UNION ALL
               SELECT {KEY}, -purchases, -face_value, -charged, -cost, -charged_with_cost,
                      -cost_unknown FROM {rollup}) AS both_sides
         GROUP BY {KEY} HAVING {differ}",
        rows = contribution("status", "cost", 1),
        rollup = ROWS,
    )
});

async fn buckets<T: ReadTx>(tx: &T, from: &str, until: &str) -> Result<Vec<SalesBucket>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT hour, product, provider, NULLIF(supplier, '') AS supplier,
               NULLIF(tier, '') AS tier, status, {sums}
             FROM {rows}
             WHERE hour >= SUBSTR(?1, 1, 13) AND hour < SUBSTR(?2, 1, 13)
             GROUP BY {KEY} HAVING SUM(purchases) <> 0",
            sums = sums(),
            rows = ROWS,
        )
    });
    tx.query_all(&SQL, &[&from, &until], bucket).await
}

fn bucket(row: &dyn RowRead) -> StoreResult<SalesBucket> {
    Ok(SalesBucket {
        hour: row.get(col!(COLUMNS, "hour"))?,
        product: row.parsed(col!(COLUMNS, "product"))?,
        provider: row.get(col!(COLUMNS, "provider"))?,
        supplier: row.get(col!(COLUMNS, "supplier"))?,
        tier: row.get(col!(COLUMNS, "tier"))?,
        status: row.parsed(col!(COLUMNS, "status"))?,
        sums: read_sums(row, col!(COLUMNS, "purchases").index)?,
    })
}

/// The [`SUMS`], selected in their order from the column at `first` on (the
/// rollup's rows and `PricingStore::sales`' groups).
pub(crate) fn read_sums(row: &dyn RowRead, first: usize) -> StoreResult<SalesSums> {
    let at = |i: usize| Column {
        index: first + i,
        name: SUMS[i],
    };
    Ok(SalesSums {
        purchases: row.get(at(0))?,
        face_value: row.get(at(1))?,
        charged: row.get(at(2))?,
        cost: row.get(at(3))?,
        charged_with_cost: row.get(at(4))?,
        cost_unknown: row.get(at(5))?,
    })
}

/// Sales since `since` (an hour's start) for the console's overview: the
/// successful and failed from the rollup, the processing ones counted
/// through the processing rows' index.
pub(crate) async fn summary<T: ReadTx>(tx: &T, since: &str) -> Result<SalesSummary, T::Error> {
    tx.query_one(SUMMARY.sql(T::ENGINE), &[&since], |row| {
        Ok(SalesSummary {
            successful_count: row.get(Column::nth(0))?,
            successful_value: row.get(Column::nth(1))?,
            failed_count: row.get(Column::nth(2))?,
            refunded_value: row.get(Column::nth(3))?,
            processing_count: row.get(Column::nth(4))?,
        })
    })
    .await
}

/// [`summary`]'s statement (its plan is checked in `sqlite::listing_plans`).
pub(crate) static SUMMARY: PerEngine = PerEngine::new(|engine| {
    let processing = super::purchases::processing_rows(engine);
    let sum = |what: &str, status: &str| {
        format!(
            "CAST(COALESCE(SUM(CASE WHEN status = '{status}' THEN {what} ELSE 0 END), 0) AS BIGINT)"
        )
    };
    format!(
        "SELECT {}, {}, {}, {},
           (SELECT COUNT(*) FROM {processing}
            WHERE status = 'processing' AND created_at >= ?1) AS processing
         FROM {rows} WHERE hour >= SUBSTR(?1, 1, 13)",
        sum("purchases", "successful"),
        sum("charged", "successful"),
        sum("purchases", "failed"),
        sum("charged", "failed"),
        rows = ROWS,
    )
});
