//! `GET /v1/pricing`: the caller's price tier and what it does to the list
//! price of each product and provider (docs/pricing.md).

use crate::envelope::{Envelope, Reply, ok};
use crate::extract::Caller;
use crate::state::AppState;
use axum::extract::State;
use billpay_domain::pricing::{DEFAULT_TIER, Rule, Tier};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default().routes(routes!(pricing))
}

#[derive(Serialize, ToSchema)]
pub struct PricingOut {
    /// The account's price tier; `default` is the list prices.
    #[schema(example = "reseller")]
    pub tier: String,
    /// For each product and provider sold, the rule in force; then any rule
    /// of one of its plans (or e-pin denominations), which wins over it.
    pub prices: Vec<PriceOut>,
}

#[derive(Serialize, ToSchema)]
pub struct PriceOut {
    #[schema(example = "airtime")]
    pub product: &'static str,
    #[schema(example = "mtn")]
    pub provider: String,
    /// A plan id, or an e-pin denomination in Naira; absent for the
    /// provider's own rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// `list_price`, `discount_percent` (charged = face value × (1 − value/100),
    /// half-up to the kobo; negative is a markup), `price` (a fixed price per
    /// unit) or `fee` (added to the face value once per purchase).
    #[schema(example = "discount_percent")]
    pub kind: &'static str,
    /// Percent for a discount, Naira for a price or a fee; absent for the list price.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = 2.5)]
    pub value: Option<f64>,
}

fn price_out(
    product: billpay_domain::Product,
    provider: &str,
    plan: Option<String>,
    rule: Option<&Rule>,
) -> PriceOut {
    let (kind, value) = match rule {
        None => ("list_price", None),
        Some(rule @ Rule::DiscountPercent(p)) => (rule.kind(), Some(p.0 as f64 / 100.0)),
        Some(rule @ (Rule::Price(k) | Rule::Fee(k))) => (rule.kind(), Some(k.as_naira_f64())),
    };
    PriceOut {
        product: product.service(),
        provider: provider.to_owned(),
        plan,
        kind,
        value,
    }
}

/// The caller's price tier and its effective discounts, prices and fees.
#[utoipa::path(get, path = "/pricing", tag = "catalogue",
    responses((status = 200, body = Envelope<PricingOut>)))]
pub async fn pricing(State(state): State<AppState>, caller: Caller) -> Reply<PricingOut> {
    let catalogue = state.purchasing.catalogue.get().await?;
    let book = state.purchasing.prices.get().await?;
    let list_prices = Tier::default();
    let tier = book.tier_of(caller.account_id).unwrap_or(&list_prices);
    let mut prices = Vec::new();
    for provider in catalogue.providers.iter().filter(|p| p.active) {
        for &product in &provider.services {
            let rule = tier.rule_for(product, &provider.slug, None);
            prices.push(price_out(product, &provider.slug, None, rule));
            let plans = tier.sorted_rules().into_iter().filter(|(scope, _)| {
                scope.product == product
                    && scope.plan.is_some()
                    && scope.provider.as_deref() == Some(&provider.slug)
            });
            for (scope, rule) in plans {
                prices.push(price_out(
                    product,
                    &provider.slug,
                    scope.plan.clone(),
                    Some(rule),
                ));
            }
        }
    }
    let name = if tier.name.is_empty() {
        DEFAULT_TIER
    } else {
        &tier.name
    };
    ok(PricingOut {
        tier: name.to_owned(),
        prices,
    })
}
