//! The workers' claims: due rows of a work queue leased in one statement
//! (`UPDATE … WHERE id IN (due rows) RETURNING …`). PostgreSQL adds
//! `FOR UPDATE SKIP LOCKED` to the due rows, so rows another node is claiming
//! right now are skipped, never waited for; rows another node holds under a
//! lease (`lease_until` later than now) are skipped on both engines. A store
//! method runs one as the `claim` kind (`db::for_both_engines!`): on
//! PostgreSQL in a transaction whose planner walks the due rows' index in
//! order, whatever the table's statistics say.

use crate::StoreResult;
use crate::clock::now_ms;
use crate::db::{Engine, One, Param, PerEngine, RowRead, Tx};
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
pub(crate) async fn claim<'a, T: Tx + 'a, R>(
    tx: impl Into<One<'a, T>>,
    sql: &PerEngine,
    (limit, lease): (u32, Duration),
    more: &[&dyn Param],
    map: fn(&dyn RowRead) -> StoreResult<R>,
) -> Result<Vec<R>, T::Error> {
    let tx: One<'a, T> = tx.into();
    let now = now_ms();
    let until = now + lease.as_millis() as i64;
    let limit = i64::from(limit);
    let mut params: Vec<&dyn Param> = vec![&until, &now, &limit];
    params.extend_from_slice(more);
    tx.query_all(sql.sql(T::ENGINE), &params, map).await
}
