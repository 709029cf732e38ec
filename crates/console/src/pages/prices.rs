//! Prices and the catalogue: the price tiers and their rules, the providers
//! and plans on or off sale, and the differences with a supplier's plan
//! list with an "apply" button. Each change is the operation the CLI's
//! `billpay tier …`, `provider/plan enable|disable` and `catalogue sync`
//! call, so only an owner may make it and each is in the operator log.

use super::{Chrome, Done, Notice, PageError, PageResult, actor, done, refused, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use billpay_domain::Product;
use billpay_domain::catalogue::Catalogue;
use billpay_operations::catalogue::{Sellable, set_on_sale};
use billpay_operations::pricing::{self, RuleInput, ScopeInput};
use billpay_operations::sync::{Difference, sync};
use billpay_supplier::Supplier;
use billpay_webkit::CsrfForm;
use billpay_webkit::format::naira;
use serde::Deserialize;

const HOME: &str = "/admin/prices";

pub struct TierRow {
    pub name: String,
    pub accounts: String,
    pub rules: Vec<RuleRow>,
}

pub struct RuleRow {
    pub product: &'static str,
    pub provider: String,
    pub plan: String,
    pub rule: String,
}

pub struct SellableRow {
    /// What the on/off form names: a provider's slug or a plan's id.
    pub target: String,
    pub provider: String,
    pub name: String,
    pub price: String,
    pub active: bool,
}

pub struct DifferenceRow {
    pub kind: &'static str,
    pub provider: String,
    pub plan: String,
    pub detail: String,
}

#[derive(Template)]
#[template(path = "prices.html")]
struct PricesPage {
    chrome: Chrome,
    tiers: Vec<TierRow>,
    tier_names: Vec<String>,
    products: Vec<&'static str>,
    providers: Vec<SellableRow>,
    plans: Vec<SellableRow>,
    suppliers: Vec<&'static str>,
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    let store = state.store.as_ref();
    let (_, book) = store.price_book().await?;
    let tiers: Vec<TierRow> = pricing::tiers(store)
        .await
        .map_err(refused)?
        .into_iter()
        .map(|summary| TierRow {
            accounts: summary
                .accounts
                .map_or_else(|| "every other".into(), |n| n.to_string()),
            rules: book
                .tiers
                .get(&summary.name)
                .map(rule_rows)
                .unwrap_or_default(),
            name: summary.name,
        })
        .collect();
    let (_, catalogue) = store.catalogue().await?;
    Ok(render(&PricesPage {
        chrome: Chrome::new(&signed_in, "prices", &done),
        tier_names: tiers.iter().skip(1).map(|t| t.name.clone()).collect(),
        tiers,
        products: Product::ALL.iter().map(|p| p.service()).collect(),
        providers: provider_rows(&catalogue),
        plans: plan_rows(&catalogue),
        suppliers: state.suppliers.iter().map(|s| s.name()).collect(),
    }))
}

/// A tier's rules, sorted by where they apply.
fn rule_rows(tier: &billpay_domain::pricing::Tier) -> Vec<RuleRow> {
    let mut rows: Vec<RuleRow> = tier
        .rules
        .iter()
        .map(|(scope, rule)| RuleRow {
            product: scope.product.service(),
            provider: scope.provider.clone().unwrap_or_default(),
            plan: scope.plan.clone().unwrap_or_default(),
            rule: rule.to_string(),
        })
        .collect();
    rows.sort_by(|a, b| (a.product, &a.provider, &a.plan).cmp(&(b.product, &b.provider, &b.plan)));
    rows
}

fn provider_rows(catalogue: &Catalogue) -> Vec<SellableRow> {
    catalogue
        .providers
        .iter()
        .map(|p| SellableRow {
            target: p.slug.clone(),
            provider: p.slug.clone(),
            name: format!(
                "{} ({})",
                p.name,
                p.services
                    .iter()
                    .map(|s| s.service())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            price: p.price.map(naira).unwrap_or_default(),
            active: p.active,
        })
        .collect()
}

fn plan_rows(catalogue: &Catalogue) -> Vec<SellableRow> {
    let data = catalogue
        .data_plans
        .iter()
        .map(|p| (&p.plan_id, &p.provider, &p.name, p.price, p.active));
    let cable = catalogue
        .cable_plans
        .iter()
        .map(|p| (&p.plan_id, &p.provider, &p.name, p.price, p.active));
    data.chain(cable)
        .map(|(plan_id, provider, name, price, active)| SellableRow {
            target: plan_id.clone(),
            provider: provider.clone(),
            name: name.clone(),
            price: naira(price),
            active,
        })
        .collect()
}

#[derive(Deserialize)]
pub struct NewTier {
    name: String,
}

pub async fn create_tier(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<NewTier>,
) -> PageResult {
    let name = form.name.trim();
    pricing::create_tier(state.store.as_ref(), actor(&signed_in), name)
        .await
        .map_err(refused)?;
    Ok(done(HOME, Notice::TierCreated))
}

#[derive(Deserialize)]
pub struct RuleForm {
    tier: String,
    product: String,
    #[serde(default)]
    provider: String,
    #[serde(default)]
    plan: String,
    /// `discount_percent`, `price`, `fee`, or `remove`.
    kind: String,
    #[serde(default)]
    value: String,
}

/// Sets (adds or replaces) the rule of a tier at a scope, or removes it.
pub async fn set_rule(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<RuleForm>,
) -> PageResult {
    let value = form.value.trim().to_owned();
    let rule = match form.kind.as_str() {
        "discount_percent" => Some(RuleInput::DiscountPercent(value)),
        "price" => Some(RuleInput::Price(value)),
        "fee" => Some(RuleInput::Fee(value)),
        "remove" => None,
        _ => {
            return Err(PageError::bad_request(
                "kind must be discount_percent, price, fee or remove",
            ));
        }
    };
    let optional = |s: &str| Some(s.trim()).filter(|s| !s.is_empty()).map(str::to_owned);
    let (provider, plan) = (optional(&form.provider), optional(&form.plan));
    let scope = ScopeInput {
        product: form.product.trim(),
        provider: provider.as_deref(),
        plan: plan.as_deref(),
    };
    let tier = form.tier.trim();
    let removing = rule.is_none();
    let changed = pricing::set_rule(state.store.as_ref(), actor(&signed_in), tier, scope, rule)
        .await
        .map_err(refused)?;
    let notice = match (removing, changed) {
        (false, _) => Notice::RuleSet,
        (true, true) => Notice::RuleRemoved,
        (true, false) => Notice::NoSuchRule,
    };
    Ok(done(HOME, notice))
}

#[derive(Deserialize)]
pub struct OnSaleForm {
    /// `provider` or `plan`.
    kind: String,
    target: String,
    /// `on` or `off`.
    sale: String,
}

pub async fn set_sale(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<OnSaleForm>,
) -> PageResult {
    let kind = match form.kind.as_str() {
        "provider" => Sellable::Provider,
        "plan" => Sellable::Plan,
        _ => return Err(PageError::bad_request("kind must be provider or plan")),
    };
    let on_sale = match form.sale.as_str() {
        "on" => true,
        "off" => false,
        _ => return Err(PageError::bad_request("sale must be on or off")),
    };
    let store = state.store.as_ref();
    let what = set_on_sale(store, actor(&signed_in), kind, &form.target, on_sale)
        .await
        .map_err(refused)?;
    tracing::debug!(%what, on_sale, "sale changed from the console");
    let notice = if on_sale {
        Notice::OnSale
    } else {
        Notice::OffSale
    };
    Ok(done(HOME, notice))
}

#[derive(Deserialize, Default)]
pub struct SupplierQuery {
    #[serde(default)]
    supplier: String,
}

#[derive(Template)]
#[template(path = "sync.html")]
struct SyncPage {
    chrome: Chrome,
    supplier: String,
    differences: Vec<DifferenceRow>,
    applied: bool,
}

/// The differences with a supplier's plan lists (asked now), nothing changed.
pub async fn differences(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(query): Query<SupplierQuery>,
) -> PageResult {
    run_sync(&state, &signed_in, &query.supplier, false).await
}

/// The same comparison, applied: the supplier's prices taken and the plans
/// it no longer sells taken off sale.
pub async fn apply(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(query): CsrfForm<SupplierQuery>,
) -> PageResult {
    run_sync(&state, &signed_in, &query.supplier, true).await
}

async fn run_sync(
    state: &ConsoleState,
    signed_in: &SignedIn,
    name: &str,
    apply_changes: bool,
) -> PageResult {
    let supplier = supplier_named(state, name)?;
    let synced = sync(
        state.store.as_ref(),
        actor(signed_in),
        supplier.as_ref(),
        apply_changes,
    )
    .await
    .map_err(refused)?;
    Ok(render(&SyncPage {
        chrome: Chrome::new(signed_in, "prices", &Done::default()),
        supplier: supplier.name().to_owned(),
        differences: synced.differences.iter().map(difference_row).collect(),
        applied: synced.applied,
    }))
}

fn supplier_named(
    state: &ConsoleState,
    name: &str,
) -> Result<std::sync::Arc<dyn Supplier>, PageError> {
    state
        .suppliers
        .iter()
        .find(|s| s.name() == name)
        .cloned()
        .ok_or_else(|| {
            PageError::bad_request(format!("no configured supplier {name:?} lists its plans"))
        })
}

fn difference_row(difference: &Difference) -> DifferenceRow {
    match difference {
        Difference::Price {
            provider,
            plan_id,
            ours,
            theirs,
        } => DifferenceRow {
            kind: "price",
            provider: provider.clone(),
            plan: plan_id.clone(),
            detail: format!("ours {ours}, theirs {theirs}"),
        },
        Difference::Missing { provider, plan_id } => DifferenceRow {
            kind: "missing",
            provider: provider.clone(),
            plan: plan_id.clone(),
            detail: "no longer sold there: taken off sale when applied".into(),
        },
        Difference::New {
            provider,
            variation_code,
            name,
            price,
        } => DifferenceRow {
            kind: "new",
            provider: provider.clone(),
            plan: variation_code.clone(),
            detail: format!("{name} at {price}: add it to the catalogue TOML yourself"),
        },
    }
}
