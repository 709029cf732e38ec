//! The workers' claims: due rows of a work queue leased in one statement
//! (`UPDATE … WHERE id IN (due rows) RETURNING …`). PostgreSQL adds
//! `FOR UPDATE SKIP LOCKED` to the due rows, so rows another node is claiming
//! right now are skipped, never waited for; rows another node holds under a
//! lease (`lease_until` later than now) are skipped on both engines. A
//! claim is a `write`: on PostgreSQL its transaction first turns bitmap
//! scans off ([`claim`]).

use crate::StoreResult;
use crate::clock::now_ms;
use crate::db::{Engine, Param, PerEngine, RowRead, Tx};
use std::time::Duration;

/// The claim statement as `engine` runs it (built once per engine by a
/// [`PerEngine`]): `?1` the lease's end, `?2` now, `?3` how many at most;
/// `due` says which rows are due (it may read `?4` on), `order` which come
/// first.
pub(crate) fn claim_sql(
    engine: Engine,
    table: &str,
    id: &str,
    (due, order): (&str, &str),
    columns: &str,
) -> String {
    let lock = engine.skip_locked();
    format!(
        "UPDATE {table} SET lease_until = ?1
         WHERE {id} IN (SELECT {id} FROM {table} WHERE {due} AND lease_until <= ?2
             ORDER BY {order} LIMIT CAST(?3 AS BIGINT){lock})
         RETURNING {columns}"
    )
}

/// Runs a [`claim_sql`] statement: leases up to `limit` due rows for
/// `lease`, `more` bound from `?4` on.
///
/// On PostgreSQL in a transaction without bitmap scans: the due rows are
/// then read through their index in order, stopping at `limit`. With a
/// bitmap scan, which the planner picks when its statistics expect few due
/// rows (a new table; a backlog built since the last `ANALYZE`), every due
/// row was read and sorted: 1–15 ms a claim under a backlog of 2,000–12,000
/// purchases, against 0.6–0.8 ms in order (docs/benchmarks.md).
pub(crate) async fn claim<T: Tx, R>(
    tx: &T,
    sql: &PerEngine,
    (limit, lease): (u32, Duration),
    more: &[&dyn Param],
    map: fn(&dyn RowRead) -> StoreResult<R>,
) -> Result<Vec<R>, T::Error> {
    if T::ENGINE == Engine::Postgres {
        tx.execute("SET LOCAL enable_bitmapscan = off", &[]).await?;
    }
    let now = now_ms();
    let until = now + lease.as_millis() as i64;
    let limit = i64::from(limit);
    let mut params: Vec<&dyn Param> = vec![&until, &now, &limit];
    params.extend_from_slice(more);
    tx.query_all(sql.sql(T::ENGINE), &params, map).await
}
