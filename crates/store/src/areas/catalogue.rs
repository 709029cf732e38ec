//! The catalogue: one JSON document and its version, bumped on every change.

use crate::db::{PerEngine, ReadTx, Tx, col, for_both_engines};
use crate::rules::{catalogue_document, parse_catalogue};
use crate::*;
use billpay_domain::catalogue::Catalogue;

for_both_engines! {
    pub trait CatalogueStore {
        /// The catalogue and its version (bumped on every change).
        fn catalogue() -> (i64, Catalogue) = read |tx| load(tx, false);
        /// A point read on the request path.
        fn catalogue_version() -> i64 = here |tx| version(tx);
        fn replace_catalogue(catalogue: &Catalogue) -> ()
            = write |tx| replace(tx, &catalogue);
        /// Enables/disables a provider (UUID or slug) or plan; says what changed.
        fn set_catalogue_active(target: &str, active: bool) -> String
            = write |tx| async { Ok(set_active(tx, &target, active).await?.0) };
    }
}

/// Stores the default catalogue unless the database has one.
pub(crate) async fn seed_default<T: Tx>(tx: &T) -> Result<(), T::Error> {
    let document = catalogue_document(&rules::default_catalogue()?)?;
    let sql = "INSERT INTO catalogue (id, version, document) VALUES (1, 1, ?1)
               ON CONFLICT (id) DO NOTHING";
    tx.execute(sql, &[&document]).await?;
    Ok(())
}

/// [`CatalogueStore::replace_catalogue`].
pub(crate) async fn replace<T: Tx>(tx: &T, catalogue: &Catalogue) -> Result<(), T::Error> {
    catalogue.validate().map_err(StoreError::Invalid)?;
    save(tx, catalogue).await
}

/// [`CatalogueStore::set_catalogue_active`]: what changed, and the on-sale
/// state before (`on sale`, `off sale`).
pub(crate) async fn set_active<T: Tx>(
    tx: &T,
    target: &str,
    active: bool,
) -> Result<(String, String), T::Error> {
    let (_, mut catalogue) = load(tx, true).await?;
    let before = rules::on_sale_state(&catalogue, target);
    let what = rules::set_active(&mut catalogue, target, active)?;
    save(tx, &catalogue).await?;
    Ok((what, before.to_owned()))
}

async fn save<T: Tx>(tx: &T, catalogue: &Catalogue) -> Result<(), T::Error> {
    let sql = "INSERT INTO catalogue (id, version, document) VALUES (1, 1, ?1)
               ON CONFLICT (id) DO UPDATE SET version = catalogue.version + 1,
                   document = excluded.document";
    tx.execute(sql, &[&catalogue_document(catalogue)?]).await?;
    Ok(())
}

/// The catalogue and its version; `lock` holds its row until the
/// transaction ends (PostgreSQL's `FOR UPDATE`; SQLite's writer holds all).
async fn load<T: ReadTx>(tx: &T, lock: bool) -> Result<(i64, Catalogue), T::Error> {
    const COLUMNS: &str = "version, document";
    const SQL: &str = "SELECT version, document FROM catalogue WHERE id = 1";
    static LOCKED: PerEngine = PerEngine::new(|engine| format!("{SQL}{}", engine.for_update()));
    let sql = if lock { LOCKED.sql(T::ENGINE) } else { SQL };
    let (version, document) = tx
        .query_one(sql, &[], |row| {
            Ok((
                row.get(col!("version"))?,
                row.get::<String>(col!("document"))?,
            ))
        })
        .await?;
    Ok((version, parse_catalogue(&document)?))
}

async fn version<T: ReadTx>(tx: &T) -> Result<i64, T::Error> {
    const COLUMNS: &str = "version";
    let sql = "SELECT version FROM catalogue WHERE id = 1";
    tx.query_one(sql, &[], |row| row.get(col!("version"))).await
}
