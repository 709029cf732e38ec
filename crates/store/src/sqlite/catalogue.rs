//! The catalogue: one JSON document and its version, bumped on every change.

use super::engine::Engine;
use super::statements::{execute, query_row};
use crate::rules::{catalogue_document, parse_catalogue};
use crate::*;
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

pub(super) async fn current(engine: &Engine) -> StoreResult<(i64, Catalogue)> {
    engine.read(load).await
}

/// A point read on the request path, so on this thread's own connection.
pub(super) fn version(engine: &Engine) -> StoreResult<i64> {
    engine.read_here(|conn| {
        let sql = "SELECT version FROM catalogue WHERE id = 1";
        Ok(query_row(conn, sql, [], |r| r.get(0))?)
    })
}

pub(super) async fn replace(engine: &Engine, catalogue: &Catalogue) -> StoreResult<()> {
    catalogue.validate().map_err(StoreError::Invalid)?;
    let catalogue = catalogue.clone();
    engine.write(move |conn| save(conn, &catalogue)).await
}

/// Enables/disables a provider or plan; says what changed.
pub(super) async fn set_active(engine: &Engine, target: &str, active: bool) -> StoreResult<String> {
    let target = target.to_owned();
    engine
        .write(move |conn| {
            let (_, mut catalogue) = load(conn)?;
            let what = rules::set_active(&mut catalogue, &target, active)?;
            save(conn, &catalogue)?;
            Ok(what)
        })
        .await
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
