//! Statements through each connection's prepared-statement cache, so a hot
//! query is parsed once per connection.

use crate::db::{Column, Engine, Param, Reads, RowRead, Statements, unreadable};
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

/// A connection (the writer's, inside its transaction, or a reader's) as the
/// shared [`Tx`]: each statement runs at once, so its future is always ready
/// ([`crate::db::ready`] answers it in the writer's or reader's closure).
pub(crate) struct Lite<'c>(pub &'c Connection);

fn bound<'p>(params: &'p [&dyn Param]) -> impl Iterator<Item = &'p dyn rusqlite::ToSql> {
    params.iter().map(|p| p.lite())
}

impl Statements for Lite<'_> {
    fn execute(&self, sql: &str, params: &[&dyn Param]) -> impl Future<Output = StoreResult<u64>> {
        let changed = (|| {
            let mut stmt = self.0.prepare_cached(sql)?;
            Ok(stmt.execute(rusqlite::params_from_iter(bound(params)))? as u64)
        })();
        std::future::ready(changed)
    }
}

impl Reads for Lite<'_> {
    type Error = StoreError;
    const ENGINE: Engine = Engine::Sqlite;

    fn prepare(&self, _sql: &str) -> impl Future<Output = StoreResult<()>> {
        std::future::ready(Ok(()))
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

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, StatementStatus};

    /// How many times SQLite re-prepared `sql` over five runs.
    fn reprepares(sql: &str) -> i32 {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE q (id INTEGER PRIMARY KEY, due INTEGER)")
            .unwrap();
        for run in 0..5_i64 {
            let mut stmt = conn.prepare_cached(sql).unwrap();
            let mut rows = stmt.query([run, 2]).unwrap();
            while rows.next().unwrap().is_some() {}
        }
        let stmt = conn.prepare_cached(sql).unwrap();
        stmt.get_status(StatementStatus::RePrepare)
    }

    /// Why every `LIMIT` and `OFFSET` in the store binds through
    /// `CAST(?n AS BIGINT)`: SQLite plans with a bare parameter's value, so
    /// it re-parses the statement each time the parameter is bound (a claim
    /// cost about 380 k instructions more for it).
    #[test]
    fn a_bare_limit_parameter_is_reprepared_on_every_run_a_cast_one_is_not() {
        let bare = "SELECT id FROM q WHERE due <= ?1 ORDER BY due LIMIT ?2";
        let cast = "SELECT id FROM q WHERE due <= ?1 ORDER BY due LIMIT CAST(?2 AS BIGINT)";
        assert!(
            reprepares(bare) >= 4,
            "SQLite no longer re-prepares: drop the CASTs"
        );
        assert_eq!(reprepares(cast), 0);
    }

    /// No statement SQLite runs binds a bare `LIMIT ?n` or `OFFSET ?n`
    /// (PostgreSQL's own `$n` statements plan once either way).
    #[test]
    fn no_statement_binds_a_bare_limit_or_offset() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut bare = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                if path.ends_with("sqlite/statements.rs") {
                    continue; // this test's own examples
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (n, line) in text.lines().enumerate() {
                    if line.contains("LIMIT ?") || line.contains("OFFSET ?") {
                        bare.push(format!("{}:{}", path.display(), n + 1));
                    }
                }
            }
        }
        assert!(
            bare.is_empty(),
            "bind LIMIT/OFFSET as CAST(?n AS BIGINT): {bare:?}"
        );
    }
}
