//! Connections: the pool, and the ways a store operation runs on it (one
//! transaction, autocommitted statements, a read-only snapshot), plus
//! the statement helpers every area uses (all through the prepared-statement
//! cache of their connection).

use super::PostgresStore;
use super::error::{PgError, PgResult, retried};
use crate::db::{
    Column, Engine, Param, Reads, RowRead, Statements, to_dollar_placeholders, unreadable,
};
use crate::rules::redact_url;
use crate::{StoreError, StoreResult};
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

pub(crate) type PgTx<'a> = deadpool_postgres::Transaction<'a>;
pub(super) type Client = deadpool_postgres::Object;
pub(super) type BoxFut<'a, T> = Pin<Box<dyn Future<Output = PgResult<T>> + Send + 'a>>;
pub(super) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// A pool for `url` (libpq's URL and key=value forms) of at most `size` connections.
pub(crate) fn pool(url: &str, size: usize) -> StoreResult<Pool> {
    let manager = Manager::from_config(
        config_from_url(url)?,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(size.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(Duration::from_secs(30)))
        .create_timeout(Some(Duration::from_secs(15)))
        .build()
        .map_err(|e| StoreError::caused_in("PostgreSQL pool", e))
}

fn config_from_url(url: &str) -> StoreResult<tokio_postgres::Config> {
    let mut config = tokio_postgres::Config::from_str(url).map_err(|e| {
        StoreError::Invalid(format!("invalid PostgreSQL URL {}: {e}", redact_url(url)))
    })?;
    if config.get_application_name().is_none() {
        config.application_name("billpay");
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    Ok(config)
}

impl PostgresStore {
    pub(super) async fn client(&self) -> PgResult<Client> {
        Ok(self.pool.get().await?)
    }

    /// Runs `op` in one transaction and commits; retried whole on a
    /// serialisation failure or deadlock (so `op` may run more than once).
    pub(crate) async fn write<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send,
        F: for<'a> Fn(&'a PgTx<'a>) -> BoxFut<'a, T> + Send + Sync,
    {
        Ok(transaction(&self.pool, &op).await?)
    }

    /// Runs `op` in one read-only `REPEATABLE READ` transaction, so its
    /// reads see one snapshot of the database.
    pub(crate) async fn snapshot<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send,
        F: for<'a> FnOnce(&'a PgTx<'a>) -> BoxFut<'a, T> + Send,
    {
        let run = async {
            let mut client = self.client().await?;
            let tx = client
                .build_transaction()
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await?;
            let value = op(&tx).await?;
            tx.commit().await?;
            Ok::<_, PgError>(value)
        };
        Ok(run.await?)
    }

    /// Runs `op`, a worker's claim, in one transaction planned with bitmap
    /// scans off. A claim's due rows are a partial index's rows in its order
    /// (`ORDER BY next_attempt_at LIMIT n`); when the statistics expect few
    /// of them (a new table, or one analysed before a backlog built up) the
    /// planner otherwise reads every due row through a bitmap scan and sorts
    /// them all to take `n`: milliseconds that grow with the backlog,
    /// against the index walked in order, stopping after `n`.
    pub(crate) async fn in_index_order<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send,
        F: for<'a> FnOnce(&'a PgTx<'a>) -> BoxFut<'a, T> + Send,
    {
        let run = async {
            let mut client = self.client().await?;
            let tx = client.transaction().await?;
            tx.batch_execute("SET LOCAL enable_bitmapscan = off")
                .await?;
            let value = op(&tx).await?;
            tx.commit().await?;
            Ok::<_, PgError>(value)
        };
        Ok(run.await?)
    }

    /// Runs `op` on a pooled connection outside any explicit transaction:
    /// each of its statements commits on its own. For reads, and for writes
    /// of one statement (atomic by themselves).
    pub(crate) async fn autocommit<T, F>(&self, op: F) -> StoreResult<T>
    where
        T: Send,
        F: for<'a> FnOnce(&'a Client) -> BoxFut<'a, T> + Send,
    {
        let client = self.client().await?;
        Ok(op(&client).await?)
    }
}

/// Runs `op` in one transaction on a connection of `pool` and commits;
/// retried whole on a serialisation failure or deadlock.
pub(super) async fn transaction<T, F>(pool: &Pool, op: &F) -> PgResult<T>
where
    F: ?Sized + for<'a> Fn(&'a PgTx<'a>) -> BoxFut<'a, T> + Send + Sync,
{
    let once = || async move {
        let mut client = pool.get().await?;
        let tx = client.transaction().await?;
        let value = op(&tx).await?;
        tx.commit().await?;
        Ok(value)
    };
    retried(once).await
}

pub(super) async fn query<C: GenericClient>(
    c: &C,
    sql: &str,
    params: Params<'_>,
) -> PgResult<Vec<Row>> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query(&stmt, params).await?)
}

pub(super) async fn query_opt<C: GenericClient>(
    c: &C,
    sql: &str,
    params: Params<'_>,
) -> PgResult<Option<Row>> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.query_opt(&stmt, params).await?)
}

pub(super) async fn execute<C: GenericClient>(
    c: &C,
    sql: &str,
    params: Params<'_>,
) -> PgResult<u64> {
    let stmt = c.prepare_cached(sql).await?;
    Ok(c.execute(&stmt, params).await?)
}

/// A pooled connection or transaction as the shared [`Tx`]: the one
/// dialect's `?n` placeholders become `$n` before the prepared-statement cache.
pub(crate) struct Pg<'c, C>(pub &'c C);

fn bound<'p>(params: &'p [&dyn Param]) -> Vec<&'p (dyn ToSql + Sync)> {
    params.iter().map(|p| p.pg()).collect()
}

impl<C: GenericClient + Sync> Statements for Pg<'_, C> {
    async fn execute(&self, sql: &str, params: &[&dyn Param]) -> PgResult<u64> {
        execute(self.0, &to_dollar_placeholders(sql), &bound(params)).await
    }
}

impl<C: GenericClient + Sync> Reads for Pg<'_, C> {
    type Error = PgError;
    const ENGINE: Engine = Engine::Postgres;

    async fn prepare(&self, sql: &str) -> PgResult<()> {
        self.0.prepare_cached(&to_dollar_placeholders(sql)).await?;
        Ok(())
    }

    async fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnOnce(&dyn RowRead) -> StoreResult<T>,
    ) -> PgResult<Option<T>> {
        let row = query_opt(self.0, &to_dollar_placeholders(sql), &bound(params)).await?;
        Ok(row.map(|row| map(&PgRow(&row))).transpose()?)
    }

    async fn query_all<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut map: impl FnMut(&dyn RowRead) -> StoreResult<T>,
    ) -> PgResult<Vec<T>> {
        let rows = query(self.0, &to_dollar_placeholders(sql), &bound(params)).await?;
        Ok(rows
            .iter()
            .map(|row| map(&PgRow(row)))
            .collect::<StoreResult<_>>()?)
    }
}

struct PgRow<'r>(&'r Row);

impl PgRow<'_> {
    /// The column's index, checked in debug builds against its name.
    fn at(&self, column: Column) -> usize {
        debug_assert!(
            self.0
                .columns()
                .get(column.index)
                .is_some_and(|c| column.is(c.name())),
            "column {} is not at index {} of the query",
            column.name,
            column.index
        );
        column.index
    }

    fn value<'a, T: tokio_postgres::types::FromSql<'a>>(
        &'a self,
        column: Column,
    ) -> StoreResult<T> {
        self.0
            .try_get(self.at(column))
            .map_err(|e| unreadable(column, e))
    }
}

impl RowRead for PgRow<'_> {
    fn int(&self, column: Column) -> StoreResult<Option<i64>> {
        use tokio_postgres::types::Type;
        let index = self.at(column);
        let kind = self.0.columns().get(index).map(|c| c.type_().clone());
        Ok(match kind.unwrap_or(Type::INT8) {
            Type::INT2 => self.value::<Option<i16>>(column)?.map(i64::from),
            Type::INT4 => self.value::<Option<i32>>(column)?.map(i64::from),
            _ => self.value::<Option<i64>>(column)?,
        })
    }
    fn text(&self, column: Column) -> StoreResult<Option<String>> {
        self.value(column)
    }
    fn flag(&self, column: Column) -> StoreResult<Option<bool>> {
        self.value(column)
    }
    fn names(&self) -> Vec<String> {
        self.0
            .columns()
            .iter()
            .map(|c| c.name().to_owned())
            .collect()
    }
}
