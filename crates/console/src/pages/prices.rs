//! Prices and the catalogue: the price tiers and their rules, the providers
//! and plans on or off sale, and the differences with a supplier's plan
//! list with an "apply" button. Each change is the operation the CLI's
//! `billpay tier …`, `provider/plan enable|disable` and `catalogue sync`
//! call, so only an owner may make it and each is in the operator log.

use super::{Chrome, Done, Notice, PageError, PageResult, actor, done, refused, render};
use crate::ConsoleState;
use crate::form::Refill;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::pricing::{Rule, Scope, Tier};
use billpay_domain::{Kobo, Product};
use billpay_operations::OpsError;
use billpay_operations::catalogue::{self, Sellable, set_on_sale};
use billpay_operations::pricing::{self, RuleInput, ScopeInput};
use billpay_operations::sync::{Difference, sync};
use billpay_operations::upgrades::{self, OfferInput};
use billpay_store::offer_described;
use billpay_supplier::Supplier;
use billpay_webkit::CsrfForm;
use billpay_webkit::format::naira;
use serde::Deserialize;

const HOME: &str = "/admin/prices";

pub struct TierRow {
    pub name: String,
    pub accounts: String,
    /// An API tier: its accounts see the dashboard's developer pages.
    pub developer_access: bool,
    pub rules: Vec<RuleRow>,
}

pub struct RuleRow {
    pub product: &'static str,
    pub provider: String,
    pub plan: String,
    /// Where it applies, as a person reads it ("data · MTN Nigeria · MTN 1GB (SME, 7 days)").
    pub scope: String,
    pub rule: String,
    /// The last known supplier cost and the margin of the plans it prices.
    pub margin: String,
    /// It prices a plan below that cost.
    pub below: bool,
}

pub struct SellableRow {
    /// What the on/off form names: a provider's slug or a plan's id.
    pub target: String,
    pub provider: String,
    pub name: String,
    /// A data plan's type (SME, Gifting, Corporate Gifting), "Cable" for a bouquet.
    pub kind: String,
    pub price: String,
    /// The last known supplier cost, and the list price less it.
    pub cost: String,
    pub margin: String,
    pub below: bool,
    pub active: bool,
}

pub struct DifferenceRow {
    pub kind: &'static str,
    pub provider: String,
    pub plan: String,
    pub detail: String,
}

/// The plan and provider tables' search and filters (GET, kept in the form).
#[derive(Deserialize, Default, Clone)]
#[serde(default)]
pub struct PlanFilters {
    /// Part of a plan's id, name, type or provider, any case.
    pub q: String,
    /// `data` or `cable`; empty: both.
    pub product: String,
    /// A provider's slug; empty: all.
    pub provider: String,
    /// `on` or `off`; empty: both.
    pub sale: String,
}

impl PlanFilters {
    fn any(&self) -> bool {
        !(self.q.trim().is_empty()
            && self.product.is_empty()
            && self.provider.is_empty()
            && self.sale.is_empty())
    }

    fn keeps(&self, product: &str, provider: &str, active: bool, texts: &[&str]) -> bool {
        let q = self.q.trim().to_lowercase();
        (self.product.is_empty() || self.product == product)
            && (self.provider.is_empty() || self.provider.eq_ignore_ascii_case(provider))
            && match self.sale.as_str() {
                "on" => active,
                "off" => !active,
                _ => true,
            }
            && (q.is_empty() || texts.iter().any(|t| t.to_lowercase().contains(&q)))
    }
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
    /// How many plans there are, whatever the filters.
    plans_total: usize,
    /// Slugs of the providers that sell data or cable plans (the filter's choices).
    plan_providers: Vec<String>,
    filters: PlanFilters,
    filtered: bool,
    suppliers: Vec<String>,
    /// A refused form of this page, drawn again with its message and input.
    refill: Refill,
    /// A rule refused for pricing plans below cost: the plans, and the
    /// "set it anyway" button.
    below_cost: Vec<String>,
    /// The tiers on offer for customers to buy, each as the log says it.
    offers: Vec<(String, String)>,
    /// The referral commission per product, as the log says it (issue 49).
    referral_rates: Vec<(String, String)>,
    /// The first-funding bonus ("" for none) and the least a bonus move may
    /// be, as typed in Naira, for the settings form.
    referral_settings: (String, String),
}

#[derive(Deserialize, Default)]
pub struct PricesQuery {
    #[serde(flatten)]
    filters: PlanFilters,
    #[serde(flatten)]
    done: Done,
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(query): Query<PricesQuery>,
) -> PageResult {
    let page = prices_page(&state, &signed_in, &query, Refill::none(), Vec::new()).await?;
    Ok(render(&page))
}

async fn prices_page(
    state: &ConsoleState,
    signed_in: &SignedIn,
    query: &PricesQuery,
    refill: Refill,
    below_cost: Vec<String>,
) -> Result<PricesPage, PageError> {
    let store = state.store.as_ref();
    let (_, book) = store.price_book().await?;
    let (_, catalogue) = store.catalogue().await?;
    let costs = pricing::last_costs(store).await.map_err(refused)?;
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
                .map(|tier| rule_rows(&catalogue, tier, &costs))
                .unwrap_or_default(),
            developer_access: summary.developer_access,
            name: summary.name,
        })
        .collect();
    let filters = &query.filters;
    let all_plans = plan_rows(&catalogue, &costs, &PlanFilters::default());
    let mut plan_providers: Vec<String> = all_plans.iter().map(|p| p.provider.clone()).collect();
    plan_providers.dedup();
    Ok(PricesPage {
        chrome: Chrome::new(signed_in, "prices", &query.done),
        tier_names: tiers.iter().skip(1).map(|t| t.name.clone()).collect(),
        tiers,
        products: Product::ALL.iter().map(|p| p.service()).collect(),
        providers: provider_rows(&catalogue, filters),
        plans_total: all_plans.len(),
        plans: plan_rows(&catalogue, &costs, filters),
        plan_providers,
        filtered: filters.any(),
        filters: filters.clone(),
        suppliers: state
            .suppliers
            .iter()
            .map(|s| s.name().to_owned())
            .collect(),
        refill,
        below_cost,
        offers: store
            .tier_offers()
            .await?
            .iter()
            .map(|o| (o.tier.clone(), offer_described(o)))
            .collect(),
        referral_rates: store
            .referral_rates()
            .await?
            .iter()
            .map(|r| {
                let described = billpay_store::referral_rate_described(Some(r));
                (r.product.service().to_owned(), described)
            })
            .collect(),
        referral_settings: referral_settings_typed(store.referral_settings().await?),
    })
}

/// The referral settings as the form types them: "250.00", "" for none.
fn referral_settings_typed(settings: billpay_store::ReferralSettings) -> (String, String) {
    (
        settings
            .first_funding_bonus
            .map(|bonus| bonus.to_string())
            .unwrap_or_default(),
        settings.min_withdrawal.to_string(),
    )
}

/// "₦582.00 · margin −₦22.00" (the list price or rule's price less the cost).
fn cost_and_margin(cost: Kobo, price: Kobo) -> (String, String) {
    let margin = price.0 - cost.0;
    let sign = if margin < 0 { "−" } else { "" };
    (naira(cost), format!("{sign}{}", naira(Kobo(margin.abs()))))
}

/// A tier's rules, sorted by where they apply, each with the cost and
/// margin of the plans it prices (where their cost is known).
fn rule_rows(catalogue: &Catalogue, tier: &Tier, costs: &pricing::Costs) -> Vec<RuleRow> {
    let mut rules: Vec<(&Scope, &Rule)> = tier.rules.iter().collect();
    rules.sort_by(|a, b| a.0.cmp(b.0));
    rules
        .into_iter()
        .map(|(scope, rule)| {
            let margins = pricing::margins(catalogue, tier, scope, *rule, costs);
            let lowest = margins.iter().min_by_key(|m| m.margin());
            let margin = match (margins.len(), lowest) {
                (_, None) => "no plan it prices has a known cost yet".to_owned(),
                (1, Some(m)) => {
                    let (cost, margin) = cost_and_margin(m.cost, m.price);
                    format!("price {}, cost {cost}, margin {margin}", naira(m.price))
                }
                (n, Some(m)) => {
                    let (cost, margin) = cost_and_margin(m.cost, m.price);
                    format!(
                        "{n} plans with a known cost; lowest margin {margin} ({}: price {}, cost {cost})",
                        m.plan,
                        naira(m.price)
                    )
                }
            };
            RuleRow {
                product: scope.product.service(),
                provider: scope.provider.clone().unwrap_or_default(),
                plan: scope.plan.clone().unwrap_or_default(),
                scope: catalogue.scope_label(scope),
                rule: rule.to_string(),
                below: lowest.is_some_and(|m| m.margin() < 0),
                margin,
            }
        })
        .collect()
}

fn provider_rows(catalogue: &Catalogue, filters: &PlanFilters) -> Vec<SellableRow> {
    catalogue
        .providers
        .iter()
        .filter(|p| {
            let sells = |product: &str| p.services.iter().any(|s| s.service() == product);
            let product = if filters.product.is_empty() || sells(&filters.product) {
                filters.product.as_str()
            } else {
                "-"
            };
            filters.keeps(product, &p.slug, p.active, &[&p.slug, &p.name])
        })
        .map(|p| SellableRow {
            target: p.slug.clone(),
            provider: p.slug.clone(),
            name: p.name.clone(),
            kind: p
                .services
                .iter()
                .map(|s| s.service())
                .collect::<Vec<_>>()
                .join(", "),
            price: p.price.map(naira).unwrap_or_default(),
            cost: String::new(),
            margin: String::new(),
            below: false,
            active: p.active,
        })
        .collect()
}

fn plan_rows(
    catalogue: &Catalogue,
    costs: &pricing::Costs,
    filters: &PlanFilters,
) -> Vec<SellableRow> {
    let data = catalogue.data_plans.iter().map(|p| {
        let kind = catalogue.data_plan_type(p).to_owned();
        (
            "data",
            &p.plan_id,
            &p.provider,
            &p.name,
            kind,
            p.price,
            p.active,
        )
    });
    let cable = catalogue.cable_plans.iter().map(|p| {
        let kind = "Cable".to_owned();
        (
            "cable",
            &p.plan_id,
            &p.provider,
            &p.name,
            kind,
            p.price,
            p.active,
        )
    });
    data.chain(cable)
        .filter(|(product, plan_id, provider, name, kind, _, active)| {
            filters.keeps(product, provider, *active, &[plan_id, provider, name, kind])
        })
        .map(|(_, plan_id, provider, name, kind, price, active)| {
            let cost = costs.get(&(provider.clone(), plan_id.clone()));
            let (cost_text, margin) =
                cost.map_or_else(Default::default, |&c| cost_and_margin(c, price));
            SellableRow {
                target: plan_id.clone(),
                provider: provider.clone(),
                name: name.clone(),
                kind,
                price: naira(price),
                cost: cost_text,
                margin,
                below: cost.is_some_and(|&c| price < c),
                active,
            }
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
    let created = pricing::create_tier(state.store.as_ref(), actor(&signed_in), name).await;
    if let Err(e) = created {
        let values = vec![("name", form.name.clone())];
        return refused_form(&state, &signed_in, "new-tier", e, values).await;
    }
    Ok(done(HOME, Notice::TierCreated))
}

#[derive(Deserialize)]
pub struct TierAccess {
    tier: String,
    /// `on` or `off`.
    access: String,
}

/// Makes a tier an API tier or not (logged by the operation).
pub async fn set_tier_developer_access(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<TierAccess>,
) -> PageResult {
    let on = form.access == "on";
    let set =
        pricing::set_tier_developer_access(state.store.as_ref(), actor(&signed_in), &form.tier, on);
    if let Err(e) = set.await {
        let values = vec![("tier", form.tier.clone())];
        return refused_form(&state, &signed_in, "tier-access", e, values).await;
    }
    Ok(done(HOME, Notice::TierDeveloperAccess))
}

/// The prices page again with `form` refused (its message beside the field,
/// what was typed kept), answered with the refusal's status.
async fn refused_form(
    state: &ConsoleState,
    signed_in: &SignedIn,
    form: &'static str,
    error: OpsError,
    values: Vec<(&'static str, String)>,
) -> PageResult {
    let below_cost = match &error {
        OpsError::BelowCost(plans) => plans.iter().map(ToString::to_string).collect(),
        _ => Vec::new(),
    };
    let (status, refill) = if below_cost.is_empty() {
        Refill::refused(form, error, values)?
    } else {
        let message = "This rule sells plans below their last known supplier cost.";
        (
            StatusCode::CONFLICT,
            Refill::new(form, None, message, values),
        )
    };
    let page = prices_page(
        state,
        signed_in,
        &PricesQuery::default(),
        refill,
        below_cost,
    )
    .await?;
    Ok((status, render(&page)).into_response())
}

#[derive(Deserialize)]
pub struct OfferForm {
    tier: String,
    #[serde(default)]
    fee: String,
    #[serde(default)]
    kyc_level: String,
    #[serde(default)]
    min_monthly_spend: String,
}

/// Offers a tier for customers to buy for a fee (owner; replaces its offer).
pub async fn offer(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<OfferForm>,
) -> PageResult {
    let input = OfferInput {
        fee: &form.fee,
        kyc_level: Some(form.kyc_level.as_str()),
        min_monthly_spend: Some(form.min_monthly_spend.as_str()),
    };
    let store = state.store.as_ref();
    if let Err(e) = upgrades::offer(store, actor(&signed_in), &form.tier, input).await {
        let values = vec![
            ("tier", form.tier.clone()),
            ("fee", form.fee.clone()),
            ("kyc_level", form.kyc_level.clone()),
            ("min_monthly_spend", form.min_monthly_spend.clone()),
        ];
        return refused_form(&state, &signed_in, "offer-tier", e, values).await;
    }
    Ok(done(HOME, Notice::TierOffered))
}

#[derive(Deserialize)]
pub struct ReferralRateForm {
    product: String,
    /// Blank: no commission on the product.
    #[serde(default)]
    percent: String,
    #[serde(default)]
    days: String,
}

/// Sets or (a blank percent) removes the referral commission on a product (owner).
pub async fn set_referral_rate(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ReferralRateForm>,
) -> PageResult {
    let values = || {
        vec![
            ("product", form.product.clone()),
            ("percent", form.percent.clone()),
            ("days", form.days.clone()),
        ]
    };
    let Ok(product) = form.product.parse::<Product>() else {
        let e = OpsError::Invalid(billpay_operations::Invalid {
            fields: &["product"],
            rule: "must be one of the products".into(),
        });
        return refused_form(&state, &signed_in, "referral-rate", e, values()).await;
    };
    let percent = Some(form.percent.trim()).filter(|p| !p.is_empty());
    let days = match form.days.trim() {
        "" => None,
        typed => match typed.parse::<i64>() {
            Ok(days) => Some(days),
            Err(_) => {
                let e = OpsError::Invalid(billpay_operations::Invalid {
                    fields: &["days"],
                    rule: "must be a number of days".into(),
                });
                return refused_form(&state, &signed_in, "referral-rate", e, values()).await;
            }
        },
    };
    let store = state.store.as_ref();
    if let Err(e) =
        billpay_operations::referrals::set_rate(store, actor(&signed_in), product, percent, days)
            .await
    {
        return refused_form(&state, &signed_in, "referral-rate", e, values()).await;
    }
    Ok(done(HOME, Notice::ReferralRateSet))
}

#[derive(Deserialize)]
pub struct ReferralSettingsForm {
    /// Blank: no bonus on a referee's first funding.
    #[serde(default)]
    first_funding_bonus: String,
    min_withdrawal: String,
}

/// Sets the referrer's first-funding bonus and the least a bonus move may be (owner).
pub async fn set_referral_settings(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ReferralSettingsForm>,
) -> PageResult {
    let set = billpay_operations::referrals::set_settings(
        state.store.as_ref(),
        actor(&signed_in),
        Some(&form.first_funding_bonus),
        Some(&form.min_withdrawal),
    )
    .await;
    if let Err(e) = set {
        let values = vec![
            ("first_funding_bonus", form.first_funding_bonus),
            ("min_withdrawal", form.min_withdrawal),
        ];
        return refused_form(&state, &signed_in, "referral-settings", e, values).await;
    }
    Ok(done(HOME, Notice::ReferralSettingsSet))
}

#[derive(Deserialize)]
pub struct WithdrawForm {
    tier: String,
}

/// Withdraws a tier's offer (owner); the upgrades bought stay.
pub async fn withdraw_offer(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<WithdrawForm>,
) -> PageResult {
    upgrades::withdraw(state.store.as_ref(), actor(&signed_in), &form.tier)
        .await
        .map_err(refused)?;
    Ok(done(HOME, Notice::OfferWithdrawn))
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
    /// `1`: the owner saw the plans it prices below cost and sets it anyway.
    #[serde(default)]
    confirm_below_cost: String,
}

/// Sets (adds or replaces) the rule of a tier at a scope, or removes it. A
/// rule that prices a plan below its last known supplier cost is set only
/// when confirmed (`confirm_below_cost=1`, the button of the page that
/// warned); refused, the form comes back with what was typed.
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
    let confirmed = form.confirm_below_cost == "1";
    let store = state.store.as_ref();
    let set = pricing::set_rule(store, actor(&signed_in), tier, scope, rule, confirmed).await;
    let changed = match set {
        Ok(changed) => changed,
        Err(e) => {
            let values = vec![
                ("tier", form.tier.clone()),
                ("product", form.product.clone()),
                ("provider", form.provider.clone()),
                ("plan", form.plan.clone()),
                ("kind", form.kind.clone()),
                // The rule's value is what `discount_percent`, `price` or `fee` name.
                ("value", form.value.clone()),
            ];
            let e = match e {
                OpsError::Invalid(mut invalid)
                    if matches!(invalid.fields, ["discount_percent" | "price" | "fee"]) =>
                {
                    invalid.fields = &["value"];
                    OpsError::Invalid(invalid)
                }
                other => other,
            };
            return refused_form(&state, &signed_in, "set-rule", e, values).await;
        }
    };
    let notice = match (removing, changed) {
        (false, _) if confirmed => Notice::RuleSetBelowCost,
        (false, _) => Notice::RuleSet,
        (true, true) => Notice::RuleRemoved,
        (true, false) => Notice::NoSuchRule,
    };
    Ok(done(HOME, notice))
}

#[derive(Deserialize)]
pub struct ListPriceForm {
    plan: String,
    price: String,
}

/// A data or cable plan's list price, as `catalogue::set_list_price`
/// (the catalogue written again, logged as `catalogue.price`).
pub async fn set_list_price(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ListPriceForm>,
) -> PageResult {
    let store = state.store.as_ref();
    let set = catalogue::set_list_price(store, actor(&signed_in), &form.plan, &form.price).await;
    match set {
        Ok(_) => Ok(done(HOME, Notice::ListPriceSet)),
        Err(e) => {
            let values = vec![("plan", form.plan), ("price", form.price)];
            refused_form(&state, &signed_in, "list-price", e, values).await
        }
    }
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
            PageError::bad_request(format!("no configured supplier “{name}” lists its plans"))
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
            detail: format!("ours {}, theirs {}", naira(*ours), naira(*theirs)),
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
            detail: format!(
                "{name} at {}: add it to the catalogue TOML yourself",
                naira(*price)
            ),
        },
        Difference::Matched {
            provider,
            plan_id,
            code,
            name,
            cost,
        } => DifferenceRow {
            kind: "matched",
            provider: provider.clone(),
            plan: plan_id.clone(),
            detail: format!(
                "its plan {code} ({name}), expected cost {}: mapped when applied",
                naira(*cost)
            ),
        },
        Difference::Cost {
            provider,
            plan_id,
            expected,
            theirs,
        } => DifferenceRow {
            kind: "cost",
            provider: provider.clone(),
            plan: plan_id.clone(),
            detail: format!(
                "expected cost {}, listed {}: recorded when applied",
                expected.map_or_else(|| "unknown".to_owned(), naira),
                naira(*theirs)
            ),
        },
        Difference::Unmatched { provider, plan_id } => DifferenceRow {
            kind: "unmatched",
            provider: provider.clone(),
            plan: plan_id.clone(),
            detail: "no plan of its list: not sold there".into(),
        },
    }
}
