//! The catalogue: one JSON document and its version, bumped on every change.

use super::SqliteStore;
use super::engine::Engine;
use super::statements::{execute, query_row};
use crate::rules::{catalogue_document, parse_catalogue};
use crate::*;
use async_trait::async_trait;
use billpay_domain::catalogue::Catalogue;
use rusqlite::Connection;

/// Stores the default catalogue unless the database has one.
pub(super) async fn seed_default(engine: &Engine) -> StoreResult<()> {
    engine
        .write(|conn| {
            let sql = "SELECT EXISTS(SELECT 1 FROM catalogue)";
            let has: bool = query_row(conn, sql, [], |r| r.get(0))?;
            if !has {
                save(conn, &rules::default_catalogue()?)?;
            }
            Ok(())
        })
        .await
}

#[async_trait]
impl CatalogueStore for SqliteStore {
    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)> {
        self.engine.read(load).await
    }

    /// A point read on the request path, so on this thread's own connection.
    async fn catalogue_version(&self) -> StoreResult<i64> {
        self.engine.read_here(|conn| {
            let sql = "SELECT version FROM catalogue WHERE id = 1";
            Ok(query_row(conn, sql, [], |r| r.get(0))?)
        })
    }

    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()> {
        self.replace_catalogue_with(catalogue, None).await
    }

    /// Enables/disables a provider or plan; says what changed.
    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String> {
        self.set_catalogue_active_with(target, active, None).await
    }
}

impl SqliteStore {
    /// [`CatalogueStore::replace_catalogue`], with `log` in the same transaction when given.
    pub(super) async fn replace_catalogue_with(
        &self,
        catalogue: &Catalogue,
        log: Option<NewLogEntry>,
    ) -> StoreResult<()> {
        catalogue.validate().map_err(StoreError::Invalid)?;
        let catalogue = catalogue.clone();
        self.engine
            .write(move |conn| {
                save(conn, &catalogue)?;
                log.as_ref()
                    .map_or(Ok(()), |log| super::operators::append_in(conn, log))
            })
            .await
    }

    /// [`CatalogueStore::set_catalogue_active`], with `log` in the same
    /// transaction when given (its `before` the on-sale state before).
    pub(super) async fn set_catalogue_active_with(
        &self,
        target: &str,
        active: bool,
        log: Option<NewLogEntry>,
    ) -> StoreResult<String> {
        let target = target.to_owned();
        self.engine
            .write(move |conn| {
                let (_, mut catalogue) = load(conn)?;
                let before = rules::on_sale_state(&catalogue, &target);
                let what = rules::set_active(&mut catalogue, &target, active)?;
                save(conn, &catalogue)?;
                if let Some(log) = &log {
                    super::operators::append_in(conn, &log.clone().with_before(before))?;
                }
                Ok(what)
            })
            .await
    }
}

fn save(conn: &Connection, catalogue: &Catalogue) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO catalogue (id, version, document) VALUES (1, 1, ?1)
         ON CONFLICT (id) DO UPDATE SET version = version + 1, document = excluded.document",
        [catalogue_document(catalogue)?],
    )?;
    Ok(())
}

fn load(conn: &Connection) -> StoreResult<(i64, Catalogue)> {
    let sql = "SELECT version, document FROM catalogue WHERE id = 1";
    let (version, document): (i64, String) =
        query_row(conn, sql, [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((version, parse_catalogue(&document)?))
}
