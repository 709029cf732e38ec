//! The catalogue: one JSON document and its version, bumped on every change.

use super::PostgresStore;
use super::connection::{PgTx, execute, query_one};
use super::error::PgResult;
use super::rows::get;
use crate::rules::{catalogue_document, parse_catalogue};
use crate::*;
use async_trait::async_trait;
use billpay_domain::catalogue::Catalogue;
use deadpool_postgres::GenericClient;

/// Stores the default catalogue unless the database has one.
pub(super) async fn seed_default(store: &PostgresStore) -> StoreResult<()> {
    let document = catalogue_document(&rules::default_catalogue()?)?;
    store
        .write(move |tx| {
            let document = document.clone();
            Box::pin(async move {
                let sql = "INSERT INTO catalogue (id, version, document) VALUES (1, 1, $1)
                           ON CONFLICT (id) DO NOTHING";
                execute(tx, sql, &[&document]).await?;
                Ok(())
            })
        })
        .await
}

#[async_trait]
impl CatalogueStore for PostgresStore {
    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)> {
        self.autocommit(|c| Box::pin(load(c, false))).await
    }

    async fn catalogue_version(&self) -> StoreResult<i64> {
        self.autocommit(|c| {
            Box::pin(async move {
                let row = query_one(c, "SELECT version FROM catalogue WHERE id = 1", &[]).await?;
                get(&row, 0)
            })
        })
        .await
    }

    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()> {
        self.replace_catalogue_with(catalogue, None).await
    }

    /// Enables/disables a provider or plan; says what changed.
    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String> {
        self.set_catalogue_active_with(target, active, None).await
    }
}

impl PostgresStore {
    /// [`CatalogueStore::replace_catalogue`], with `log` in the same transaction when given.
    pub(super) async fn replace_catalogue_with(
        &self,
        catalogue: &Catalogue,
        log: Option<NewLogEntry>,
    ) -> StoreResult<()> {
        catalogue.validate().map_err(StoreError::Invalid)?;
        let document = catalogue_document(catalogue)?;
        self.write(move |tx| {
            let (document, log) = (document.clone(), log.clone());
            Box::pin(async move {
                save(tx, &document).await?;
                if let Some(log) = log {
                    super::operators::append_in(tx, &log).await?;
                }
                Ok(())
            })
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
        self.write(move |tx| {
            let (target, log) = (target.clone(), log.clone());
            Box::pin(async move {
                let (_, mut catalogue) = load(tx, true).await?;
                let before = rules::on_sale_state(&catalogue, &target);
                let what = rules::set_active(&mut catalogue, &target, active)?;
                save(tx, &catalogue_document(&catalogue)?).await?;
                if let Some(log) = log {
                    super::operators::append_in(tx, &log.with_before(before)).await?;
                }
                Ok(what)
            })
        })
        .await
    }
}

async fn save(tx: &PgTx<'_>, document: &str) -> PgResult<()> {
    let sql = "INSERT INTO catalogue (id, version, document) VALUES (1, 1, $1)
               ON CONFLICT (id) DO UPDATE SET version = catalogue.version + 1, document = excluded.document";
    execute(tx, sql, &[&document]).await?;
    Ok(())
}

/// The catalogue and its version; `lock` holds its row until the transaction ends.
async fn load<C: GenericClient>(c: &C, lock: bool) -> PgResult<(i64, Catalogue)> {
    let sql = if lock {
        "SELECT version, document FROM catalogue WHERE id = 1 FOR UPDATE"
    } else {
        "SELECT version, document FROM catalogue WHERE id = 1"
    };
    let row = query_one(c, sql, &[]).await?;
    let document: String = get(&row, 1)?;
    Ok((get(&row, 0)?, parse_catalogue(&document)?))
}
