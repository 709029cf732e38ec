//! Price tiers: create one, set or remove its rules, put an account on one
//! (docs/pricing.md). Every product, provider and plan a rule names must be
//! in the catalogue, so a typo is refused instead of silently never matching.

use crate::{Actor, OpsError, OpsResult, Permission, invalid, optional_reason, quoted};
use billpay_domain::catalogue::Catalogue;
use billpay_domain::order::{MIN_CHARGE, below_floor};
use billpay_domain::pricing::{
    BasisPoints, DEFAULT_TIER, Rule, Scope, Tier, denomination_key, valid_tier_name,
};
use billpay_domain::{AccountId, Kobo, Naira, Product};
use billpay_store::work;
use billpay_store::{Store, StoreError};

/// A rule as typed: one of the three, each value still text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleInput {
    /// Percent, at most 2 decimals; negative is a markup.
    DiscountPercent(String),
    /// Naira, a fixed price per unit.
    Price(String),
    /// Naira, added once per purchase.
    Fee(String),
}

/// Where a rule applies, as typed.
#[derive(Debug, Clone, Default)]
pub struct ScopeInput<'a> {
    pub product: &'a str,
    pub provider: Option<&'a str>,
    pub plan: Option<&'a str>,
}

/// A tier as listed: its name, how many rules it has and accounts are on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierSummary {
    pub name: String,
    pub rules: usize,
    /// `None` for `default`: every account on no other tier.
    pub accounts: Option<usize>,
    /// An API tier: its accounts see the dashboard's developer pages.
    pub developer_access: bool,
}

pub async fn create_tier(store: &dyn Store, actor: Actor, name: &str) -> OpsResult<()> {
    actor.require(Permission::ChangeCatalogue)?;
    if name == DEFAULT_TIER {
        return Err(invalid(
            &["name"],
            "default is the list prices and always exists",
        ));
    }
    if !valid_tier_name(name) {
        return Err(invalid(
            &["name"],
            format!(
                "{} must be 1 to 40 of a-z, 0-9, - and _, starting with a letter or digit",
                quoted(name)
            ),
        ));
    }
    let mut log = actor.log("pricing.tier", name);
    log.after = Some("created".to_owned());
    store
        .write((name.to_owned(), log), |tx, (name, log)| {
            Box::pin(work::create_tier_logged(tx, name, log))
        })
        .await
        .map_err(refused)?;
    tracing::info!(%actor, tier = name, "price tier created");
    Ok(())
}

/// Makes `tier` an API tier (`on`: every account on it sees the dashboard's
/// API keys and webhooks pages, at once) or not; logged. `default` cannot
/// be one: it is every account's, buyers' too.
pub async fn set_tier_developer_access(
    store: &dyn Store,
    actor: Actor,
    tier: &str,
    on: bool,
) -> OpsResult<()> {
    actor.require(Permission::ChangeCatalogue)?;
    if tier == DEFAULT_TIER {
        let why = "default is every account's tier, buyers' too: give developer access to a named tier or to an account";
        return Err(invalid(&["tier"], why));
    }
    let mut log = actor.log("pricing.tier_developer_access", tier);
    log.after = Some(if on { "on" } else { "off" }.to_owned());
    store
        .write((tier.to_owned(), on, log), |tx, (tier, on, log)| {
            Box::pin(work::set_tier_developer_access_logged(tx, tier, *on, log))
        })
        .await
        .map_err(not_found)?;
    tracing::info!(%actor, tier, on, "tier developer access changed");
    Ok(())
}

/// Sets the rule of `tier` at `scope` (`Some`), or removes it (`None`;
/// `false` when there was none).
pub async fn set_rule(
    store: &dyn Store,
    actor: Actor,
    tier: &str,
    scope: ScopeInput<'_>,
    rule: Option<RuleInput>,
    allow_below_cost: bool,
) -> OpsResult<bool> {
    actor.require(Permission::ChangeCatalogue)?;
    if tier == DEFAULT_TIER {
        return Err(invalid(
            &["tier"],
            "default is the list prices: create a tier and give it rules",
        ));
    }
    let (_, catalogue) = store.catalogue().await?;
    let scope = checked_scope(&catalogue, &scope)?;
    let rule = rule.map(|r| checked_rule(&scope, r)).transpose()?;
    if let Some(rule) = rule {
        let (_, book) = store.price_book().await?;
        refuse_below_floor(&catalogue, book.tiers.get(tier), &scope, rule)?;
        if !allow_below_cost {
            let below = below_cost(store, &catalogue, tier, &scope, rule).await?;
            if !below.is_empty() {
                return Err(OpsError::BelowCost(below));
            }
        }
    }
    let what = rule.map_or_else(|| "removed".to_owned(), |r| r.to_string());
    let mut log = actor.log("pricing.rule", tier);
    log.after = Some(format!("{}: {what}", catalogue.scope_label(&scope)));
    // Logged with the change, when it changed something (a set always does).
    let changed = store
        .write(
            (tier.to_owned(), scope.clone(), rule, log),
            |tx, (tier, scope, rule, log)| {
                Box::pin(work::set_price_rule_logged(tx, tier, scope, *rule, log))
            },
        )
        .await
        .map_err(not_found)?;
    tracing::info!(%actor, tier, scope = %catalogue.scope_label(&scope), rule = what, "price rule set");
    Ok(changed)
}

/// Puts `account` on `tier`; `default` returns it to list prices.
pub async fn set_account_tier(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    tier: &str,
) -> OpsResult<()> {
    set_account_tier_because(store, actor, account, tier, None).await
}

/// [`set_account_tier`] with the reason typed for it; logged in the same
/// transaction (the tier before → after).
pub async fn set_account_tier_because(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    tier: &str,
    reason: Option<&str>,
) -> OpsResult<()> {
    actor.require(Permission::ChangeCatalogue)?;
    let named = (tier != DEFAULT_TIER).then_some(tier);
    let mut log = actor.log("pricing.account_tier", account.to_string());
    log.after = Some(tier.to_owned());
    log.reason = optional_reason(reason)?;
    store
        .write(
            (account, named.map(str::to_owned), log),
            |tx, (account, named, log)| {
                Box::pin(work::set_account_tier_logged(
                    tx,
                    *account,
                    named.as_deref(),
                    log,
                ))
            },
        )
        .await
        .map_err(not_found)?;
    tracing::info!(%actor, %account, tier, "account tier set");
    Ok(())
}

/// The tier an account is on (`default`: list prices).
pub async fn account_tier(store: &dyn Store, account: AccountId) -> OpsResult<String> {
    let (_, book) = store.price_book().await?;
    Ok(book
        .accounts
        .get(&account)
        .cloned()
        .unwrap_or_else(|| DEFAULT_TIER.to_owned()))
}

/// Every tier, `default` first.
pub async fn tiers(store: &dyn Store) -> OpsResult<Vec<TierSummary>> {
    let (_, book) = store.price_book().await?;
    let developer_tiers = store.developer_tiers().await?;
    let on = |name: &str| book.accounts.values().filter(|t| *t == name).count();
    let mut named: Vec<TierSummary> = book
        .tiers
        .values()
        .map(|t| TierSummary {
            name: t.name.clone(),
            rules: t.rules.len(),
            accounts: Some(on(&t.name)),
            developer_access: developer_tiers.contains(&t.name),
        })
        .collect();
    named.sort_by(|a, b| a.name.cmp(&b.name));
    let list = TierSummary {
        name: DEFAULT_TIER.to_owned(),
        rules: 0,
        accounts: None,
        developer_access: false,
    };
    let mut all = vec![list];
    all.extend(named);
    Ok(all)
}

/// One tier with its rules and how many accounts are on it.
pub async fn tier(store: &dyn Store, name: &str) -> OpsResult<(Tier, usize)> {
    let (_, book) = store.price_book().await?;
    if name == DEFAULT_TIER {
        let list = Tier {
            name: DEFAULT_TIER.to_owned(),
            ..Tier::default()
        };
        return Ok((list, 0));
    }
    let tier = book
        .tiers
        .get(name)
        .cloned()
        .ok_or_else(|| OpsError::NotFound(format!("no tier named {name}")))?;
    let accounts = book.accounts.values().filter(|t| *t == name).count();
    Ok((tier, accounts))
}

/// A data or cable plan's price under a rule beside its last known supplier
/// cost: a warning when the price is below it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanMargin {
    /// The plan, as a person reads it ("data · MTN Nigeria · MTN 1GB (SME, 7 days)").
    pub plan: String,
    /// Its price under the rule.
    pub price: Kobo,
    /// What its supplier last charged for it.
    pub cost: Kobo,
}

impl PlanMargin {
    /// Price less cost; negative: sold at a loss.
    pub fn margin(&self) -> i64 {
        self.price.0 - self.cost.0
    }
}

impl std::fmt::Display for PlanMargin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at {} is below its last supplier cost {} (a loss of {} each)",
            self.plan,
            Naira(self.price),
            Naira(self.cost),
            Naira(Kobo(-self.margin()))
        )
    }
}

/// Last known supplier costs by (provider, plan id) ([`last_costs`]).
pub type Costs = std::collections::HashMap<(String, String), Kobo>;

/// The data and cable plans with a known cost that `rule` at `scope` prices,
/// where it is `tier`'s rule in force (no more specific rule covers the
/// plan), with their price under it. Pure: the console lists these beside
/// each rule, [`set_rule`] refuses a rule with one below cost unless allowed.
pub fn margins(
    catalogue: &Catalogue,
    tier: &Tier,
    scope: &Scope,
    rule: Rule,
    costs: &Costs,
) -> Vec<PlanMargin> {
    let data = catalogue
        .data_plans
        .iter()
        .map(|p| (Product::Data, &p.provider, &p.plan_id, p.price));
    let cable = catalogue
        .cable_plans
        .iter()
        .map(|p| (Product::Cable, &p.provider, &p.plan_id, p.price));
    let mut margins = Vec::new();
    for (product, provider, plan, list_price) in data.chain(cable) {
        let covered = scope.product == product
            && scope.provider.as_ref().is_none_or(|p| p == provider)
            && scope.plan.as_ref().is_none_or(|p| p == plan);
        if !covered || tier.rule_for(product, provider, Some(plan)) != Some(&rule) {
            continue;
        }
        let Some(&cost) = costs.get(&(provider.clone(), plan.clone())) else {
            continue;
        };
        let Some(price) = rule.apply(list_price, 1) else {
            continue;
        };
        let at = Scope {
            product,
            provider: Some(provider.clone()),
            plan: Some(plan.clone()),
        };
        margins.push(PlanMargin {
            plan: catalogue.scope_label(&at),
            price,
            cost,
        });
    }
    margins
}

/// The plans `rule` at `scope` would sell below their last known supplier
/// cost ([`margins`] under the tier with the rule set). Apart from the
/// rule's own checks: a warning the owner may confirm, not a rule.
async fn below_cost(
    store: &dyn Store,
    catalogue: &Catalogue,
    tier: &str,
    scope: &Scope,
    rule: Rule,
) -> OpsResult<Vec<PlanMargin>> {
    let (_, book) = store.price_book().await?;
    let mut tier = book.tiers.get(tier).cloned().unwrap_or_default();
    tier.rules.insert(scope.clone(), rule);
    let costs = last_costs(store).await?;
    let mut below = margins(catalogue, &tier, scope, rule, &costs);
    below.retain(|m| m.margin() < 0);
    Ok(below)
}

/// The last known supplier cost of every data and cable plan that has one,
/// by (provider, plan id): the most recent successful purchase's `cost`.
pub async fn last_costs(store: &dyn Store) -> OpsResult<Costs> {
    Ok(store
        .last_plan_costs()
        .await?
        .into_iter()
        .map(|c| ((c.provider, c.plan_id), c.cost))
        .collect())
}

/// The scope, each part checked against the catalogue; an e-pin
/// denomination is stored in one spelling (`100`, never `100.00`).
fn checked_scope(catalogue: &Catalogue, input: &ScopeInput) -> OpsResult<Scope> {
    let product: Product = input.product.trim().to_lowercase().parse().map_err(|_| {
        let known: Vec<&str> = Product::ALL.iter().map(|p| p.service()).collect();
        invalid(
            &["product"],
            format!(
                "must be one of {}, not {}",
                known.join(", "),
                quoted(input.product)
            ),
        )
    })?;
    // Slugs and plan ids are lower case in the catalogue; a person may type "MTN".
    let slug = input.provider.map(|s| s.trim().to_lowercase());
    let plan = input.plan.map(|p| p.trim().to_lowercase());
    let Some(slug) = slug else {
        if plan.is_some() {
            return Err(invalid(&["plan"], "needs a provider"));
        }
        return Ok(Scope {
            product,
            provider: None,
            plan: None,
        });
    };
    let provider = catalogue
        .provider(&slug)
        .filter(|p| p.services.contains(&product))
        .ok_or_else(|| {
            invalid(
                &["provider"],
                format!(
                    "must be a provider that sells {product}; {} is not one",
                    quoted(&slug)
                ),
            )
        })?;
    let plan = plan
        .map(|plan| checked_plan(catalogue, product, &provider.slug, &plan))
        .transpose()?;
    Ok(Scope {
        product,
        provider: Some(provider.slug.clone()),
        plan,
    })
}

fn checked_plan(
    catalogue: &Catalogue,
    product: Product,
    provider: &str,
    plan: &str,
) -> OpsResult<String> {
    let unknown = || {
        invalid(
            &["plan"],
            format!(
                "must be one of {provider}'s {product} plans; {} is not one",
                quoted(plan)
            ),
        )
    };
    match product {
        Product::Data => catalogue
            .data_plans
            .iter()
            .find(|p| p.provider == provider && p.plan_id == plan)
            .map(|p| p.plan_id.clone())
            .ok_or_else(unknown),
        Product::Cable => catalogue
            .cable_plans
            .iter()
            .find(|p| p.provider == provider && p.plan_id == plan)
            .map(|p| p.plan_id.clone())
            .ok_or_else(unknown),
        Product::Epin => {
            let value = Kobo::parse_naira(plan).map_err(|_| unknown())?;
            catalogue
                .epin_denominations
                .iter()
                .find(|d| d.provider == provider && d.denomination == value)
                .map(|d| denomination_key(d.denomination))
                .ok_or_else(unknown)
        }
        _ => Err(invalid(
            &["plan"],
            "only data and cable plans and e-pin denominations can be priced on their own",
        )),
    }
}

/// The rule's value parsed; a fixed price only where there is a unit with
/// a list price: a plan, an e-pin denomination, an exam pin's provider.
fn checked_rule(scope: &Scope, input: RuleInput) -> OpsResult<Rule> {
    let naira = |field: &'static [&'static str], text: &str| {
        Kobo::parse_typed_naira(text)
            .map_err(|e| invalid(field, format!("{e}, not {}", quoted(text))))
    };
    match input {
        RuleInput::DiscountPercent(text) => BasisPoints::parse_percent(&text)
            .map(Rule::DiscountPercent)
            .map_err(|e| invalid(&["discount_percent"], format!("{e}, not {}", quoted(&text)))),
        RuleInput::Fee(text) => naira(&["fee"], &text).map(Rule::Fee),
        RuleInput::Price(text) => {
            let fixed_unit = scope.plan.is_some()
                || (scope.product == Product::Education && scope.provider.is_some());
            if !fixed_unit {
                return Err(invalid(
                    &["price"],
                    "is for one plan (data, cable), one e-pin denomination or an exam pin's provider; use a discount or a fee here",
                ));
            }
            let price = naira(&["price"], &text)?;
            if price <= Kobo::ZERO {
                return Err(invalid(&["price"], "must be more than 0"));
            }
            Ok(Rule::Price(price))
        }
    }
}

/// Refuses `rule` at `scope` of `tier` (now `current`) when it would price
/// something the catalogue sells under the least a purchase can charge,
/// naming each; what was already under it is not held against this rule.
fn refuse_below_floor(
    catalogue: &Catalogue,
    current: Option<&Tier>,
    scope: &Scope,
    rule: Rule,
) -> OpsResult<()> {
    let current = current.cloned().unwrap_or_default();
    let before = below_floor(catalogue, &current);
    let mut after = current;
    after.rules.insert(scope.clone(), rule);
    let new: Vec<String> = below_floor(catalogue, &after)
        .into_iter()
        .filter(|item| !before.contains(item))
        .map(|item| item.to_string())
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    let field: &'static [&'static str] = match rule {
        Rule::DiscountPercent(_) => &["discount_percent"],
        Rule::Price(_) => &["price"],
        Rule::Fee(_) => &["fee"],
    };
    Err(invalid(
        field,
        format!(
            "{rule} would charge less than {MIN_CHARGE} Naira, the least a purchase can charge: {}",
            new.join("; ")
        ),
    ))
}

/// Refuses a catalogue (an import, a supplier sync's prices) in which a tier
/// would price something under the least a purchase can charge, naming the
/// tier and each item.
pub async fn check_catalogue_floor(store: &dyn Store, catalogue: &Catalogue) -> OpsResult<()> {
    let (_, book) = store.price_book().await?;
    let mut tiers: Vec<&Tier> = book.tiers.values().collect();
    tiers.sort_by(|a, b| a.name.cmp(&b.name));
    let problems: Vec<String> = tiers
        .into_iter()
        .flat_map(|tier| {
            below_floor(catalogue, tier)
                .into_iter()
                .map(move |item| format!("tier {}: {item}", tier.name))
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    Err(OpsError::Refused(format!(
        "the catalogue's prices would charge less than {MIN_CHARGE} Naira, the least a purchase can charge: {}; change those rules first",
        problems.join("; ")
    )))
}

/// A store refusal about the name (taken) as the operator's error.
fn refused(e: StoreError) -> OpsError {
    match e {
        StoreError::Invalid(message) => OpsError::Refused(message),
        other => other.into(),
    }
}

/// A store refusal about a missing tier or account as "not found".
fn not_found(e: StoreError) -> OpsError {
    match e {
        StoreError::Invalid(message) => OpsError::NotFound(message),
        StoreError::NotFound(what) => OpsError::NotFound(format!("{what} not found")),
        other => other.into(),
    }
}
