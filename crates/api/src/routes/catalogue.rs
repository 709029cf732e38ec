//! Catalogue listings: providers, data categories and plans, cable plans,
//! e-pin denominations. Filters take a provider's UUID or slug. Prices are
//! the caller's: its account's price tier applied to the list price
//! (`Purchasing::prices`, the shop's too; an item under the floor is not listed).

use crate::envelope::{Envelope, Reply, ok};
use crate::error::ApiError;
use crate::extract::{ApiQuery, Caller};
use crate::state::AppState;
use axum::extract::{Path, State};
use billpay_domain::catalogue::{Catalogue, Provider};
use billpay_domain::pricing::denomination_key;
use billpay_domain::{Kobo, Product};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(providers))
        .routes(routes!(providers_by_service))
        .routes(routes!(data_categories))
        .routes(routes!(data_plans))
        .routes(routes!(cable_plans))
        .routes(routes!(epin_denominations))
}

#[derive(Serialize, ToSchema)]
pub struct ProviderOut {
    pub id: uuid::Uuid,
    pub slug: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub services: Vec<String>,
    pub active: bool,
    /// Education only: price of one pin, Naira.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    pub price: Option<Kobo>,
}

impl From<&Provider> for ProviderOut {
    fn from(p: &Provider) -> Self {
        ProviderOut {
            id: p.id,
            slug: p.slug.clone(),
            name: p.name.clone(),
            kind: p.kind.clone(),
            services: p.services.iter().map(|s| s.service().to_owned()).collect(),
            active: p.active,
            price: p.price,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct CategoryOut {
    pub id: String,
    pub name: String,
    pub provider: String,
}

#[derive(Serialize, ToSchema)]
pub struct PlanOut {
    pub plan_id: String,
    pub name: String,
    /// What this key's account pays for it (Naira): its price tier's price.
    #[schema(value_type = f64)]
    pub price: Kobo,
    /// The plan's list price (Naira).
    #[schema(value_type = f64)]
    pub face_value: Kobo,
    /// Validity in days.
    pub duration: u32,
    /// Data plans only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    pub provider: String,
}

#[derive(Serialize, ToSchema)]
pub struct DenominationOut {
    pub provider: String,
    /// The pin's value (Naira).
    #[schema(value_type = f64)]
    pub denomination: Kobo,
    /// What this key's account pays for one pin (Naira).
    #[schema(value_type = f64)]
    pub price: Kobo,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProviderFilter {
    /// Provider UUID or slug.
    pub provider: Option<String>,
    /// Data plans only: category id.
    pub category: Option<String>,
}

/// Resolves an optional `provider` filter to a slug; an unknown one lists nothing
/// rather than everything.
fn provider_slug(catalogue: &Catalogue, filter: &Option<String>) -> Option<Option<String>> {
    match filter {
        None => Some(None),
        Some(wanted) => catalogue.provider(wanted).map(|p| Some(p.slug.clone())),
    }
}

fn matches(filter: &Option<Option<String>>, slug: &str) -> bool {
    match filter {
        Some(None) => true,
        Some(Some(wanted)) => wanted == slug,
        None => false,
    }
}

/// All providers.
#[utoipa::path(get, path = "/providers", tag = "catalogue",
    responses((status = 200, body = Envelope<Vec<ProviderOut>>)))]
pub async fn providers(State(state): State<AppState>) -> Reply<Vec<ProviderOut>> {
    let catalogue = state.purchasing.catalogue.get().await?;
    let list: Vec<ProviderOut> = catalogue.providers.iter().map(ProviderOut::from).collect();
    ok(list)
}

/// Providers offering a service: airtime, data, cable, electricity, education, epin or betting.
#[utoipa::path(get, path = "/providers/{service}", tag = "catalogue",
    params(("service" = String, Path, description = "airtime, data, cable, electricity, education, epin or betting",
        example = "airtime", pattern = "^(airtime|data|cable|electricity|education|epin|betting)$")),
    responses((status = 200, body = Envelope<Vec<ProviderOut>>), (status = 404, description = "Unknown service")))]
pub async fn providers_by_service(
    State(state): State<AppState>,
    Path(service): Path<String>,
) -> Reply<Vec<ProviderOut>> {
    let product: Product = service
        .parse()
        .map_err(|_| ApiError::NotFound(format!("Unknown service type '{service}'")))?;
    let catalogue = state.purchasing.catalogue.get().await?;
    let list: Vec<ProviderOut> = catalogue
        .providers
        .iter()
        .filter(|p| p.services.contains(&product))
        .map(ProviderOut::from)
        .collect();
    ok(list)
}

/// Data plan categories (SME, gifting, corporate gifting…).
#[utoipa::path(get, path = "/data-plans/categories", tag = "catalogue", params(ProviderFilter),
    responses((status = 200, body = Envelope<Vec<CategoryOut>>)))]
pub async fn data_categories(
    State(state): State<AppState>,
    ApiQuery(filter): ApiQuery<ProviderFilter>,
) -> Reply<Vec<CategoryOut>> {
    let catalogue = state.purchasing.catalogue.get().await?;
    let provider = provider_slug(&catalogue, &filter.provider);
    let list: Vec<CategoryOut> = catalogue
        .data_categories
        .iter()
        .filter(|c| matches(&provider, &c.provider))
        .map(|c| CategoryOut {
            id: c.id.clone(),
            name: c.name.clone(),
            provider: c.provider.clone(),
        })
        .collect();
    ok(list)
}

/// Active data plans (v1.1: `duration` in days, `name` without validity).
#[utoipa::path(get, path = "/data-plans", tag = "catalogue", params(ProviderFilter),
    responses((status = 200, body = Envelope<Vec<PlanOut>>)))]
pub async fn data_plans(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(filter): ApiQuery<ProviderFilter>,
) -> Reply<Vec<PlanOut>> {
    let catalogue = state.purchasing.catalogue.get().await?;
    let prices = state.purchasing.prices(caller.account_id).await?;
    let provider = provider_slug(&catalogue, &filter.provider);
    let list: Vec<PlanOut> = catalogue
        .data_plans
        .iter()
        .filter(|p| p.active && matches(&provider, &p.provider))
        .filter(|p| filter.category.as_ref().is_none_or(|c| *c == p.category))
        .filter_map(|p| {
            let price = prices.unit(Product::Data, &p.provider, Some(&p.plan_id), p.price)?;
            Some((p, price))
        })
        .map(|(p, price)| PlanOut {
            plan_id: p.plan_id.clone(),
            name: p.name.clone(),
            price,
            face_value: p.price,
            duration: p.duration,
            category: Some(p.category.clone()),
            provider: p.provider.clone(),
        })
        .collect();
    ok(list)
}

/// Active cable TV plans.
#[utoipa::path(get, path = "/cable-plans", tag = "catalogue", params(ProviderFilter),
    responses((status = 200, body = Envelope<Vec<PlanOut>>)))]
pub async fn cable_plans(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(filter): ApiQuery<ProviderFilter>,
) -> Reply<Vec<PlanOut>> {
    let catalogue = state.purchasing.catalogue.get().await?;
    let prices = state.purchasing.prices(caller.account_id).await?;
    let provider = provider_slug(&catalogue, &filter.provider);
    let list: Vec<PlanOut> = catalogue
        .cable_plans
        .iter()
        .filter(|p| p.active && matches(&provider, &p.provider))
        .filter_map(|p| {
            let price = prices.unit(Product::Cable, &p.provider, Some(&p.plan_id), p.price)?;
            Some((p, price))
        })
        .map(|(p, price)| PlanOut {
            plan_id: p.plan_id.clone(),
            name: p.name.clone(),
            price,
            face_value: p.price,
            duration: p.duration,
            category: None,
            provider: p.provider.clone(),
        })
        .collect();
    ok(list)
}

/// Recharge e-pin denominations.
#[utoipa::path(get, path = "/recharge-pins/denominations", tag = "catalogue", params(ProviderFilter),
    responses((status = 200, body = Envelope<Vec<DenominationOut>>)))]
pub async fn epin_denominations(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(filter): ApiQuery<ProviderFilter>,
) -> Reply<Vec<DenominationOut>> {
    let catalogue = state.purchasing.catalogue.get().await?;
    let prices = state.purchasing.prices(caller.account_id).await?;
    let provider = provider_slug(&catalogue, &filter.provider);
    let list: Vec<DenominationOut> = catalogue
        .epin_denominations
        .iter()
        .filter(|d| matches(&provider, &d.provider))
        .filter_map(|d| {
            let key = denomination_key(d.denomination);
            let price = prices.unit(Product::Epin, &d.provider, Some(&key), d.denomination)?;
            Some(DenominationOut {
                provider: d.provider.clone(),
                denomination: d.denomination,
                price,
            })
        })
        .collect();
    ok(list)
}
