//! Statements through each connection's prepared-statement cache, so a hot
//! query is parsed once per connection.

use crate::StoreResult;
use rusqlite::Connection;

/// `Connection::execute` through the cache.
pub(super) fn execute(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

/// `Connection::query_row` through the cache.
pub(super) fn query_row<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: impl FnOnce(&rusqlite::Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.prepare_cached(sql)?.query_row(params, map)
}

/// Every row, through `map`.
pub(super) fn collect<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: fn(&rusqlite::Row) -> rusqlite::Result<T>,
) -> StoreResult<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params, map)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A JSON array of `values`, for `json_each(?)`.
pub(super) fn json_list(values: &[String]) -> StoreResult<String> {
    serde_json::to_string(values).map_err(|e| crate::StoreError::Backend(e.to_string()))
}
