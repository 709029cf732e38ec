//! Price tiers: their rules, accounts' tiers and the version that moves on
//! every change; and the sales report's sums.

use super::PostgresStore;
use super::connection::{Client, PgTx, execute, query, query_one, query_opt};
use super::error::{PgError, PgResult};
use super::rows::get;
use crate::clock::now_rfc3339;
use crate::rules::{RuleRow, SALES_SQL, no_such_tier, price_book, scope_columns, tier_taken};
use crate::*;
use async_trait::async_trait;
use billpay_domain::pricing::{DEFAULT_TIER, PriceBook, Rule, Scope};
use billpay_domain::{AccountId, Kobo};
use std::sync::LazyLock;
use tokio_postgres::Row;

#[async_trait]
impl PricingStore for PostgresStore {
    async fn price_book(&self) -> StoreResult<(i64, PriceBook)> {
        self.autocommit(|c| Box::pin(load(c))).await
    }

    async fn pricing_version(&self) -> StoreResult<i64> {
        self.autocommit(|c| Box::pin(version(c))).await
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
            LazyLock::new(|| SALES_SQL.replace("{from}", "$1").replace("{until}", "$2"));
        self.autocommit(|c| {
            Box::pin(async move {
                let rows = query(c, &SQL, &[&from, &until]).await?;
                rows.iter().map(sales_group).collect()
            })
        })
        .await
    }
}

async fn version(c: &Client) -> PgResult<i64> {
    let row = query_one(c, "SELECT version FROM pricing_version WHERE id = 1", &[]).await?;
    get(&row, 0)
}

async fn bump(tx: &PgTx<'_>) -> PgResult<()> {
    let sql = "UPDATE pricing_version SET version = version + 1 WHERE id = 1";
    execute(tx, sql, &[]).await?;
    Ok(())
}

async fn require_tier(tx: &PgTx<'_>, tier: &str) -> PgResult<()> {
    let sql = "SELECT EXISTS(SELECT 1 FROM price_tiers WHERE name = $1)";
    match get::<bool>(&query_one(tx, sql, &[&tier]).await?, 0)? {
        true => Ok(()),
        false => Err(no_such_tier(tier).into()),
    }
}

/// The version is read first: a change committed while the rows are read
/// makes them newer than it, so the cache only reloads once more.
async fn load(c: &Client) -> PgResult<(i64, PriceBook)> {
    let version = version(c).await?;
    let tiers = query(c, "SELECT name FROM price_tiers", &[]).await?;
    let tiers = tiers.iter().map(|r| get(r, 0)).collect::<PgResult<_>>()?;
    let sql = "SELECT tier, product, provider, plan, kind, value FROM price_rules";
    let rules = query(c, sql, &[]).await?;
    let rules = rules
        .iter()
        .map(rule_row)
        .collect::<PgResult<Vec<RuleRow>>>()?;
    let accounts = query(c, "SELECT account_id, tier FROM account_tiers", &[]).await?;
    let accounts = accounts
        .iter()
        .map(|r| Ok((get(r, 0)?, get(r, 1)?)))
        .collect::<PgResult<_>>()?;
    Ok((version, price_book(tiers, rules, accounts)?))
}

fn rule_row(r: &Row) -> PgResult<RuleRow> {
    Ok((
        get(r, 0)?,
        get(r, 1)?,
        get(r, 2)?,
        get(r, 3)?,
        get(r, 4)?,
        get(r, 5)?,
    ))
}

fn sales_group(row: &Row) -> PgResult<SalesGroup> {
    let parse = |column: &str, text: String| {
        PgError::Store(StoreError::Backend(format!(
            "column {column}: cannot read {text:?}"
        )))
    };
    let product: String = get(row, "product")?;
    let status: String = get(row, "status")?;
    let account: String = get(row, "account_id")?;
    Ok(SalesGroup {
        hour: get(row, "hour")?,
        product: product
            .parse()
            .map_err(|_| parse("product", product.clone()))?,
        provider: get(row, "provider")?,
        supplier: get(row, "supplier")?,
        account_id: account
            .parse()
            .map_err(|_| parse("account_id", account.clone()))?,
        tier: get(row, "tier")?,
        status: status
            .parse()
            .map_err(|_| parse("status", status.clone()))?,
        purchases: get::<i64>(row, "purchases")? as u64,
        face_value: Kobo(get(row, "face_value")?),
        charged: Kobo(get(row, "charged")?),
        cost: Kobo(get(row, "cost")?),
        charged_with_cost: Kobo(get(row, "charged_with_cost")?),
        cost_unknown: get::<i64>(row, "cost_unknown")? as u64,
    })
}

impl PostgresStore {
    /// [`PricingStore::create_tier`], with `log` in the same transaction when given.
    pub(super) async fn create_tier_with(
        &self,
        name: &str,
        log: Option<NewLogEntry>,
    ) -> StoreResult<()> {
        let name = name.to_owned();
        self.write(move |tx| {
            let (name, log) = (name.clone(), log.clone());
            Box::pin(async move {
                let sql = "INSERT INTO price_tiers (name, created_at) VALUES ($1, $2)
                           ON CONFLICT DO NOTHING";
                if execute(tx, sql, &[&name, &now_rfc3339()]).await? == 0 {
                    return Err(tier_taken(&name).into());
                }
                bump(tx).await?;
                if let Some(log) = log {
                    super::operators::append_in(tx, &log).await?;
                }
                Ok(())
            })
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
        self.write(move |tx| {
            let (tier, scope, log) = (tier.clone(), scope.clone(), log.clone());
            Box::pin(async move {
                bump(tx).await?; // first: pricing changes take turns on its row
                require_tier(tx, &tier).await?;
                let (product, provider, plan) = scope_columns(&scope);
                let changed = match rule {
                    Some(rule) => {
                        let sql =
                            "INSERT INTO price_rules (tier, product, provider, plan, kind, value)
                             VALUES ($1, $2, $3, $4, $5, $6)
                             ON CONFLICT (tier, product, provider, plan)
                             DO UPDATE SET kind = excluded.kind, value = excluded.value";
                        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] = [
                            &tier,
                            &product,
                            &provider,
                            &plan,
                            &rule.kind(),
                            &rule.value(),
                        ];
                        execute(tx, sql, &params).await?
                    }
                    None => {
                        let sql = "DELETE FROM price_rules
                             WHERE tier = $1 AND product = $2 AND provider = $3 AND plan = $4";
                        execute(tx, sql, &[&tier, &product, &provider, &plan]).await?
                    }
                };
                if let (true, Some(log)) = (changed > 0, log) {
                    super::operators::append_in(tx, &log).await?;
                }
                Ok(changed > 0)
            })
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
        let id = account.to_string();
        self.write(move |tx| {
            let (tier, id, log) = (tier.clone(), id.clone(), log.clone());
            Box::pin(async move {
                bump(tx).await?;
                let sql = "SELECT EXISTS(SELECT 1 FROM accounts WHERE id = $1)";
                if !get::<bool>(&query_one(tx, sql, &[&id]).await?, 0)? {
                    return Err(StoreError::NotFound("account").into());
                }
                let sql = "SELECT tier FROM account_tiers WHERE account_id = $1";
                let before: Option<String> = match query_opt(tx, sql, &[&id]).await? {
                    Some(row) => Some(get(&row, 0)?),
                    None => None,
                };
                match &tier {
                    Some(tier) => {
                        require_tier(tx, tier).await?;
                        let sql = "INSERT INTO account_tiers (account_id, tier) VALUES ($1, $2)
                             ON CONFLICT (account_id) DO UPDATE SET tier = excluded.tier";
                        execute(tx, sql, &[&id, tier]).await?;
                    }
                    None => {
                        let sql = "DELETE FROM account_tiers WHERE account_id = $1";
                        execute(tx, sql, &[&id]).await?;
                    }
                }
                if let Some(log) = log {
                    let before = before.as_deref().unwrap_or(DEFAULT_TIER);
                    super::operators::append_in(tx, &log.with_before(before)).await?;
                }
                Ok(())
            })
        })
        .await
    }
}
