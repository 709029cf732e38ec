//! Developer access (issue 46): whether the dashboard shows an account its
//! API keys and webhooks pages, and who turned them on (the customer, with
//! their password; an operator, logged). Off, the account is a buyer's. The
//! API never reads it: a key works or not by its own status.

use crate::db::{Param, PerEngine, ReadTx, Tx, Value, col, for_both_engines};
use crate::*;
use billpay_domain::AccountId;

for_both_engines! {
    /// Developer access (`areas/developer_access.rs`).
    pub trait DeveloperAccessStore {
        /// The customer's own switch (the caller checked their password):
        /// on as theirs, or off.
        fn set_own_developer_access(account: AccountId, on: bool) -> ()
            = write |tx| set(tx, account, on.then_some(DeveloperAccess::Myself));
        /// The price tiers whose accounts have developer access (API tiers).
        fn developer_tiers() -> Vec<String> = read |tx| developer_tiers(tx);
    }
}

async fn developer_tiers<T: ReadTx>(tx: &T) -> Result<Vec<String>, T::Error> {
    let sql = "SELECT name FROM price_tiers WHERE developer_access ORDER BY name";
    tx.query_all(sql, &[], |row| row.get(col!("name", "name")))
        .await
}

/// An operator makes a price tier an API tier (its accounts see the
/// developer pages) or not; the line's `before` is what it was.
pub(crate) async fn set_tier_logged<T: Tx>(
    tx: &T,
    tier: &str,
    on: bool,
    log: &NewLogEntry,
) -> Result<(), T::Error> {
    static SQL: PerEngine = PerEngine::new(|engine| {
        let lock = engine.for_update();
        format!("SELECT developer_access FROM price_tiers WHERE name = ?1{lock}")
    });
    let before: bool = locked_before(tx, &SQL, tier, "tier").await?;
    let sql = "UPDATE price_tiers SET developer_access = ?1 WHERE name = ?2";
    tx.execute(sql, &[&on, &tier]).await?;
    let before = if before { "on" } else { "off" };
    super::operators::append(tx, &log.clone().with_before(before)).await
}

/// Sets it; an unknown account is `NotFound`.
pub(crate) async fn set<T: Tx>(
    tx: &T,
    account: AccountId,
    access: Option<DeveloperAccess>,
) -> Result<(), T::Error> {
    let sql = "UPDATE accounts SET developer_access = ?1 WHERE id = ?2";
    let access = access.map(DeveloperAccess::as_str);
    let params: [&dyn Param; 2] = [&access, &account.to_string()];
    match tx.execute(sql, &params).await? {
        0 => Err(StoreError::NotFound("account").into()),
        _ => Ok(()),
    }
}

/// An operator turns it on (as the operator's) or off; the line's `before`
/// is what it was (PostgreSQL: read under the row's lock), in the same
/// transaction.
pub(crate) async fn set_logged<T: Tx>(
    tx: &T,
    account: AccountId,
    on: bool,
    log: &NewLogEntry,
) -> Result<(), T::Error> {
    static SQL: PerEngine = PerEngine::new(|engine| {
        let lock = engine.for_update();
        format!("SELECT developer_access FROM accounts WHERE id = ?1{lock}")
    });
    let key = account.to_string();
    let before: Option<String> = locked_before(tx, &SQL, &key, "account").await?;
    let before = match before.as_deref() {
        None => "off".to_owned(),
        Some(by) => format!("on ({by})"),
    };
    set(tx, account, on.then_some(DeveloperAccess::Operator)).await?;
    super::operators::append(tx, &log.clone().with_before(&before)).await
}

/// The `developer_access` a logged change finds (PostgreSQL: under the
/// row's lock), read by `sql` with `key`; no row is `NotFound(what)`.
async fn locked_before<T: Tx, V: Value + Send>(
    tx: &T,
    sql: &PerEngine,
    key: &str,
    what: &'static str,
) -> Result<V, T::Error> {
    const COLUMNS: &str = "developer_access";
    let before = tx
        .query_opt(sql.sql(T::ENGINE), &[&key], |row| {
            row.get(col!("developer_access"))
        })
        .await?;
    Ok(before.ok_or(StoreError::NotFound(what))?)
}
