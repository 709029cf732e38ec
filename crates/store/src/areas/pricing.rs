//! Price tiers: their rules, accounts' tiers and the version that moves on
//! every change; and the sales report's sums.

use crate::clock::now_rfc3339;
use crate::db::{Param, ReadTx, RowRead, Tx, col, for_both_engines};
use crate::rules::{RuleRow, SALES_SQL, no_such_tier, price_book, scope_columns, tier_taken};
use crate::*;
use billpay_domain::AccountId;
use billpay_domain::pricing::{DEFAULT_TIER, PriceBook, Rule, Scope};
use std::sync::LazyLock;

for_both_engines! {
    /// Price tiers, their rules, which account is on which, and the sales they
    /// made. Every change moves the version, which `PriceBookCache` watches.
    pub trait PricingStore {
        /// Every tier with its rules and the accounts on one, and the version.
        fn price_book() -> (i64, PriceBook) = snapshot |tx| load(tx);
        /// A point read on the request path.
        fn pricing_version() -> i64 = here |tx| version(tx);
        /// Refused with [`StoreError::Invalid`] when the name is taken.
        fn create_tier(name: &str) -> () = write |tx| create_tier(tx, &name);
        /// Sets the rule at `scope` (`Some`) or removes it (`None`); `false`
        /// when there was none to remove. The tier must exist.
        fn set_price_rule(tier: &str, scope: Scope, rule: Option<Rule>) -> bool
            = write |tx| set_rule(tx, &tier, &scope, rule);
        /// Puts the account on `tier`; `None` returns it to list prices.
        fn set_account_tier(account: AccountId, tier: Option<&str> => tier.map(str::to_owned)) -> ()
            = write |tx| async { set_account_tier(tx, account, tier.as_deref()).await.map(drop) };
        /// Final purchases created in `[from, until)` (RFC 3339 bounds), summed
        /// per UTC hour and every dimension the sales report groups by.
        fn sales(from: String, until: String) -> Vec<SalesGroup> = read |tx| sales(tx, &from, &until);
    }
}

async fn version<T: ReadTx>(tx: &T) -> Result<i64, T::Error> {
    const COLUMNS: &str = "version";
    let sql = "SELECT version FROM pricing_version WHERE id = 1";
    tx.query_one(sql, &[], |row| row.get(col!("version"))).await
}

/// First in a change: pricing changes take turns on its row (PostgreSQL).
async fn bump<T: Tx>(tx: &T) -> Result<(), T::Error> {
    let sql = "UPDATE pricing_version SET version = version + 1 WHERE id = 1";
    tx.execute(sql, &[]).await?;
    Ok(())
}

async fn exists<T: Tx>(tx: &T, sql: &str, key: &str) -> Result<bool, T::Error> {
    const COLUMNS: &str = "found";
    tx.query_one(sql, &[&key], |row| row.get(col!("found")))
        .await
}

async fn require_tier<T: Tx>(tx: &T, tier: &str) -> Result<(), T::Error> {
    let sql = "SELECT EXISTS(SELECT 1 FROM price_tiers WHERE name = ?1) AS found";
    match exists(tx, sql, tier).await? {
        true => Ok(()),
        false => Err(no_such_tier(tier).into()),
    }
}

/// Read in one snapshot (SQLite: a read transaction); the version is read
/// first, so a change committed meanwhile (PostgreSQL) only makes the rows
/// newer than it, and the cache reloads once more.
async fn load<T: ReadTx>(tx: &T) -> Result<(i64, PriceBook), T::Error> {
    let version = version(tx).await?;
    let sql = "SELECT name FROM price_tiers";
    let tiers = tx
        .query_all(sql, &[], |row| row.get(col!("name", "name")))
        .await?;
    let sql = "SELECT tier, product, provider, plan, kind, value FROM price_rules";
    let rules = tx.query_all(sql, &[], rule_row).await?;
    const ACCOUNTS: &str = "account_id, tier";
    let sql = "SELECT account_id, tier FROM account_tiers";
    let accounts = tx
        .query_all(sql, &[], |row| {
            Ok((
                row.get(col!(ACCOUNTS, "account_id"))?,
                row.get(col!(ACCOUNTS, "tier"))?,
            ))
        })
        .await?;
    Ok((version, price_book(tiers, rules, accounts)?))
}

fn rule_row(row: &dyn RowRead) -> StoreResult<RuleRow> {
    const COLUMNS: &str = "tier, product, provider, plan, kind, value";
    Ok((
        row.get(col!("tier"))?,
        row.get(col!("product"))?,
        row.get(col!("provider"))?,
        row.get(col!("plan"))?,
        row.get(col!("kind"))?,
        row.get(col!("value"))?,
    ))
}

/// [`PricingStore::create_tier`].
pub(crate) async fn create_tier<T: Tx>(tx: &T, name: &str) -> Result<(), T::Error> {
    let sql = "INSERT INTO price_tiers (name, created_at) VALUES (?1, ?2) ON CONFLICT DO NOTHING";
    if tx.execute(sql, &[&name, &now_rfc3339()]).await? == 0 {
        return Err(tier_taken(name).into());
    }
    bump(tx).await
}

/// [`PricingStore::set_price_rule`]: whether it changed anything.
pub(crate) async fn set_rule<T: Tx>(
    tx: &T,
    tier: &str,
    scope: &Scope,
    rule: Option<Rule>,
) -> Result<bool, T::Error> {
    bump(tx).await?;
    require_tier(tx, tier).await?;
    let (product, provider, plan) = scope_columns(scope);
    let changed = match rule {
        Some(rule) => {
            let sql = "INSERT INTO price_rules (tier, product, provider, plan, kind, value)
                       VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                       ON CONFLICT (tier, product, provider, plan)
                       DO UPDATE SET kind = excluded.kind, value = excluded.value";
            let params: [&dyn Param; 6] = [
                &tier,
                &product,
                &provider,
                &plan,
                &rule.kind(),
                &rule.value(),
            ];
            tx.execute(sql, &params).await?
        }
        None => {
            let sql = "DELETE FROM price_rules
                       WHERE tier = ?1 AND product = ?2 AND provider = ?3 AND plan = ?4";
            tx.execute(sql, &[&tier, &product, &provider, &plan])
                .await?
        }
    };
    Ok(changed > 0)
}

/// [`PricingStore::set_account_tier`]; answers the tier before.
pub(crate) async fn set_account_tier<T: Tx>(
    tx: &T,
    account: AccountId,
    tier: Option<&str>,
) -> Result<String, T::Error> {
    bump(tx).await?;
    let id = account.to_string();
    let sql = "SELECT EXISTS(SELECT 1 FROM accounts WHERE id = ?1) AS found";
    if !exists(tx, sql, &id).await? {
        return Err(StoreError::NotFound("account").into());
    }
    let sql = "SELECT tier FROM account_tiers WHERE account_id = ?1";
    let before: Option<String> = tx
        .query_opt(sql, &[&id], |row| row.get(col!("tier", "tier")))
        .await?;
    match tier {
        Some(tier) => {
            require_tier(tx, tier).await?;
            let sql = "INSERT INTO account_tiers (account_id, tier) VALUES (?1, ?2)
                       ON CONFLICT (account_id) DO UPDATE SET tier = excluded.tier";
            tx.execute(sql, &[&id, &tier]).await?;
        }
        None => {
            let sql = "DELETE FROM account_tiers WHERE account_id = ?1";
            tx.execute(sql, &[&id]).await?;
        }
    }
    Ok(before.unwrap_or_else(|| DEFAULT_TIER.to_owned()))
}

async fn sales<T: ReadTx>(tx: &T, from: &str, until: &str) -> Result<Vec<SalesGroup>, T::Error> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| SALES_SQL.replace("{from}", "?1").replace("{until}", "?2"));
    tx.query_all(&SQL, &[&from, &until], sales_group).await
}

fn sales_group(row: &dyn RowRead) -> StoreResult<SalesGroup> {
    const COLUMNS: &str = "hour, product, provider, supplier, account_id, tier, status, \
        purchases, face_value, charged, cost, charged_with_cost, cost_unknown";
    Ok(SalesGroup {
        account_id: row.parsed(col!("account_id"))?,
        bucket: SalesBucket {
            hour: row.get(col!("hour"))?,
            product: row.parsed(col!("product"))?,
            provider: row.get(col!("provider"))?,
            supplier: row.get(col!("supplier"))?,
            tier: row.get(col!("tier"))?,
            status: row.parsed(col!("status"))?,
            sums: super::sales_rollup::read_sums(row, col!("purchases").index)?,
        },
    })
}
