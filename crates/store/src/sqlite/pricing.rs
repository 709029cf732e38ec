//! Price tiers: their rules, accounts' tiers and the version that moves on
//! every change; and the sales report's sums.

use super::SqliteStore;
use super::statements::{collect, execute, query_row};
use crate::clock::now_rfc3339;
use crate::rules::{RuleRow, SALES_SQL, no_such_tier, price_book, scope_columns, tier_taken};
use crate::*;
use async_trait::async_trait;
use billpay_domain::pricing::DEFAULT_TIER;
use billpay_domain::pricing::{PriceBook, Rule, Scope};
use billpay_domain::{AccountId, Kobo};
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::LazyLock;

#[async_trait]
impl PricingStore for SqliteStore {
    async fn price_book(&self) -> StoreResult<(i64, PriceBook)> {
        self.engine.read(load).await
    }

    /// A point read on the request path, so on this thread's own connection.
    async fn pricing_version(&self) -> StoreResult<i64> {
        self.engine.read_here(version)
    }

    async fn create_tier(&self, name: &str) -> StoreResult<()> {
        self.create_tier_with(name, None).await
    }

    async fn set_price_rule(
        &self,
        tier: &str,
        scope: Scope,
        rule: Option<Rule>,
    ) -> StoreResult<bool> {
        self.set_price_rule_with(tier, scope, rule, None).await
    }

    async fn set_account_tier(&self, account: AccountId, tier: Option<&str>) -> StoreResult<()> {
        self.set_account_tier_with(account, tier, None).await
    }

    async fn sales(&self, from: String, until: String) -> StoreResult<Vec<SalesGroup>> {
        static SQL: LazyLock<String> =
            LazyLock::new(|| SALES_SQL.replace("{from}", "?1").replace("{until}", "?2"));
        self.engine
            .read(move |conn| collect(conn, &SQL, params![from, until], sales_group))
            .await
    }
}

fn version(conn: &Connection) -> StoreResult<i64> {
    let sql = "SELECT version FROM pricing_version WHERE id = 1";
    Ok(query_row(conn, sql, [], |r| r.get(0))?)
}

fn bump(conn: &Connection) -> StoreResult<()> {
    execute(
        conn,
        "UPDATE pricing_version SET version = version + 1 WHERE id = 1",
        [],
    )?;
    Ok(())
}

fn require_tier(conn: &Connection, tier: &str) -> StoreResult<()> {
    let sql = "SELECT EXISTS(SELECT 1 FROM price_tiers WHERE name = ?1)";
    match query_row(conn, sql, [tier], |r| r.get::<_, bool>(0))? {
        true => Ok(()),
        false => Err(no_such_tier(tier)),
    }
}

/// One read transaction (a reader connection), so the version matches the rows.
fn load(conn: &Connection) -> StoreResult<(i64, PriceBook)> {
    conn.execute_batch("BEGIN")?;
    let loaded = (|| {
        let version = version(conn)?;
        let tiers = collect(conn, "SELECT name FROM price_tiers", [], |r| r.get(0))?;
        let rules: Vec<RuleRow> = collect(
            conn,
            "SELECT tier, product, provider, plan, kind, value FROM price_rules",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )?;
        let accounts = collect(
            conn,
            "SELECT account_id, tier FROM account_tiers",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok((version, price_book(tiers, rules, accounts)?))
    })();
    conn.execute_batch("COMMIT")?;
    loaded
}

fn sales_group(row: &rusqlite::Row) -> rusqlite::Result<SalesGroup> {
    let parse_err = |column: usize, e: String| {
        rusqlite::Error::FromSqlConversionFailure(column, rusqlite::types::Type::Text, e.into())
    };
    let product: String = row.get("product")?;
    let status: String = row.get("status")?;
    let account: String = row.get("account_id")?;
    Ok(SalesGroup {
        hour: row.get("hour")?,
        product: product.parse().map_err(|_| parse_err(1, product))?,
        provider: row.get("provider")?,
        supplier: row.get("supplier")?,
        account_id: account.parse().map_err(|_| parse_err(4, account))?,
        tier: row.get("tier")?,
        status: status.parse().map_err(|_| parse_err(6, status))?,
        purchases: row.get::<_, i64>("purchases")? as u64,
        face_value: Kobo(row.get("face_value")?),
        charged: Kobo(row.get("charged")?),
        cost: Kobo(row.get("cost")?),
        charged_with_cost: Kobo(row.get("charged_with_cost")?),
        cost_unknown: row.get::<_, i64>("cost_unknown")? as u64,
    })
}

impl SqliteStore {
    /// [`PricingStore::create_tier`], with `log` in the same transaction when given.
    pub(super) async fn create_tier_with(
        &self,
        name: &str,
        log: Option<NewLogEntry>,
    ) -> StoreResult<()> {
        let name = name.to_owned();
        self.engine
            .write(move |conn| {
                let sql = "INSERT INTO price_tiers (name, created_at) VALUES (?1, ?2)
                           ON CONFLICT DO NOTHING";
                if execute(conn, sql, params![name, now_rfc3339()])? == 0 {
                    return Err(tier_taken(&name));
                }
                bump(conn)?;
                log.as_ref()
                    .map_or(Ok(()), |log| super::operators::append_in(conn, log))
            })
            .await
    }

    /// [`PricingStore::set_price_rule`], with `log` in the same transaction
    /// when given and the rule changed (a removal that removed nothing is not logged).
    pub(super) async fn set_price_rule_with(
        &self,
        tier: &str,
        scope: Scope,
        rule: Option<Rule>,
        log: Option<NewLogEntry>,
    ) -> StoreResult<bool> {
        let tier = tier.to_owned();
        self.engine
            .write(move |conn| {
                require_tier(conn, &tier)?;
                let (product, provider, plan) = scope_columns(&scope);
                let changed = match rule {
                    Some(rule) => execute(
                        conn,
                        "INSERT INTO price_rules (tier, product, provider, plan, kind, value)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                         ON CONFLICT (tier, product, provider, plan)
                         DO UPDATE SET kind = excluded.kind, value = excluded.value",
                        params![tier, product, provider, plan, rule.kind(), rule.value()],
                    )?,
                    None => execute(
                        conn,
                        "DELETE FROM price_rules
                         WHERE tier = ?1 AND product = ?2 AND provider = ?3 AND plan = ?4",
                        params![tier, product, provider, plan],
                    )?,
                };
                bump(conn)?;
                if let (true, Some(log)) = (changed > 0, &log) {
                    super::operators::append_in(conn, log)?;
                }
                Ok(changed > 0)
            })
            .await
    }

    /// [`PricingStore::set_account_tier`], with `log` in the same
    /// transaction when given (its `before` the tier before).
    pub(super) async fn set_account_tier_with(
        &self,
        account: AccountId,
        tier: Option<&str>,
        log: Option<NewLogEntry>,
    ) -> StoreResult<()> {
        let tier = tier.map(str::to_owned);
        self.engine
            .write(move |conn| {
                let id = account.to_string();
                let sql = "SELECT EXISTS(SELECT 1 FROM accounts WHERE id = ?1)";
                if !query_row(conn, sql, [&id], |r| r.get::<_, bool>(0))? {
                    return Err(StoreError::NotFound("account"));
                }
                let sql = "SELECT tier FROM account_tiers WHERE account_id = ?1";
                let before: Option<String> =
                    query_row(conn, sql, [&id], |r| r.get(0)).optional()?;
                match &tier {
                    Some(tier) => {
                        require_tier(conn, tier)?;
                        execute(
                            conn,
                            "INSERT INTO account_tiers (account_id, tier) VALUES (?1, ?2)
                             ON CONFLICT (account_id) DO UPDATE SET tier = excluded.tier",
                            params![id, tier],
                        )?;
                    }
                    None => {
                        execute(
                            conn,
                            "DELETE FROM account_tiers WHERE account_id = ?1",
                            [&id],
                        )?;
                    }
                }
                bump(conn)?;
                match &log {
                    Some(log) => super::operators::append_in(
                        conn,
                        &log.clone()
                            .with_before(before.as_deref().unwrap_or(DEFAULT_TIER)),
                    ),
                    None => Ok(()),
                }
            })
            .await
    }
}
