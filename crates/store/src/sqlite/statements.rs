//! Statements through each connection's prepared-statement cache, so a hot
//! query is parsed once per connection.

use crate::db::{Column, Engine, Param, RowRead, Tx, unreadable};
use crate::{StoreError, StoreResult};
use rusqlite::Connection;
use std::future::Future;

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

/// A connection (the writer's, inside its transaction, or a reader's) as the
/// shared [`Tx`]: each statement runs at once, so its future is always ready
/// ([`crate::db::ready`] answers it in the writer's or reader's closure).
pub(crate) struct Lite<'c>(pub &'c Connection);

fn bound<'p>(params: &'p [&dyn Param]) -> impl Iterator<Item = &'p dyn rusqlite::ToSql> {
    params.iter().map(|p| p.lite())
}

impl Tx for Lite<'_> {
    type Error = StoreError;
    const ENGINE: Engine = Engine::Sqlite;

    fn execute(&self, sql: &str, params: &[&dyn Param]) -> impl Future<Output = StoreResult<u64>> {
        let changed = (|| {
            let mut stmt = self.0.prepare_cached(sql)?;
            Ok(stmt.execute(rusqlite::params_from_iter(bound(params)))? as u64)
        })();
        std::future::ready(changed)
    }

    fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnOnce(&dyn RowRead) -> StoreResult<T>,
    ) -> impl Future<Output = StoreResult<Option<T>>> {
        let found = (|| {
            let mut stmt = self.0.prepare_cached(sql)?;
            let mut rows = stmt.query(rusqlite::params_from_iter(bound(params)))?;
            rows.next()?.map(|row| map(&LiteRow(row))).transpose()
        })();
        std::future::ready(found)
    }

    fn query_all<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut map: impl FnMut(&dyn RowRead) -> StoreResult<T>,
    ) -> impl Future<Output = StoreResult<Vec<T>>> {
        let all = (|| {
            let mut stmt = self.0.prepare_cached(sql)?;
            let mut rows = stmt.query(rusqlite::params_from_iter(bound(params)))?;
            let mut all = Vec::new();
            while let Some(row) = rows.next()? {
                all.push(map(&LiteRow(row))?);
            }
            Ok(all)
        })();
        std::future::ready(all)
    }
}

pub(super) struct LiteRow<'r, 's>(pub &'r rusqlite::Row<'s>);

impl LiteRow<'_, '_> {
    /// The column's index, checked in debug builds (every test) against the
    /// name SQLite gives it: a query selecting another order fails its tests.
    fn at(&self, column: Column) -> usize {
        debug_assert!(
            self.0
                .as_ref()
                .column_name(column.index)
                .is_ok_and(|name| column.is(name)),
            "column {} is not at index {} of the query",
            column.name,
            column.index
        );
        column.index
    }

    fn value<T: rusqlite::types::FromSql>(&self, column: Column) -> StoreResult<T> {
        self.0
            .get(self.at(column))
            .map_err(|e| unreadable(column, e))
    }
}

impl RowRead for LiteRow<'_, '_> {
    fn int(&self, column: Column) -> StoreResult<Option<i64>> {
        self.value(column)
    }
    fn text(&self, column: Column) -> StoreResult<Option<String>> {
        self.value(column)
    }
    fn flag(&self, column: Column) -> StoreResult<Option<bool>> {
        self.value(column)
    }
    fn names(&self) -> Vec<String> {
        let statement = self.0.as_ref();
        statement
            .column_names()
            .into_iter()
            .map(String::from)
            .collect()
    }
}
