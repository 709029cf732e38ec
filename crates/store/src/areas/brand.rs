//! The owner's edits of the brand (`BrandEdits`, the console's Brand page):
//! one JSON document and its version, bumped on every change (read through
//! the `BrandCache`, like the catalogue). No row: no edits, version 0.

use crate::db::{ReadTx, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::brand::BrandEdits;

for_both_engines! {
    pub trait BrandStore {
        /// The owner's edits and their version (0: none yet).
        fn brand_edits() -> (i64, BrandEdits) = read |tx| load(tx);
        /// A point read on the request path.
        fn brand_version() -> i64 = here |tx| version(tx);
    }
}

/// Stores `edits` in place of the last ones; the line's `before` is the
/// document before (for [`crate::work::set_brand_logged`]).
pub(crate) async fn save<T: Tx>(tx: &T, edits: &BrandEdits) -> Result<String, T::Error> {
    let (_, before) = load(tx).await?;
    let document =
        |e: &BrandEdits| serde_json::to_string(e).map_err(|e| StoreError::Invalid(e.to_string()));
    let sql = "INSERT INTO brand (id, version, document) VALUES (1, 1, ?1)
               ON CONFLICT (id) DO UPDATE SET version = brand.version + 1,
                   document = excluded.document";
    tx.execute(sql, &[&document(edits)?]).await?;
    Ok(document(&before)?)
}

async fn load<T: ReadTx>(tx: &T) -> Result<(i64, BrandEdits), T::Error> {
    const COLUMNS: &str = "version, document";
    let sql = "SELECT version, document FROM brand WHERE id = 1";
    let row = tx
        .query_opt(sql, &[], |row| {
            Ok((
                row.get::<i64>(col!("version"))?,
                row.get::<String>(col!("document"))?,
            ))
        })
        .await?;
    let Some((version, document)) = row else {
        return Ok((0, BrandEdits::default()));
    };
    let edits = serde_json::from_str(&document).map_err(|e| StoreError::Invalid(e.to_string()))?;
    Ok((version, edits))
}

async fn version<T: ReadTx>(tx: &T) -> Result<i64, T::Error> {
    const COLUMNS: &str = "version";
    let sql = "SELECT version FROM brand WHERE id = 1";
    let version = tx
        .query_opt(sql, &[], |row| row.get(col!("version")))
        .await?;
    Ok(version.unwrap_or(0))
}
