//! `GET /v1/account/upgrades`: the price tiers on offer, what each would
//! have saved the caller over its last 30 days' purchases, and whether it
//! may buy it; `POST /v1/account/upgrade`: buys one from the wallet, once per
//! `reference` (docs/pricing.md, "Upgrades"). The shop's upgrade page calls
//! the same operation, `billpay_operations::upgrades`.

use crate::envelope::{Envelope, Reply, ok};
use crate::error::ApiError;
use crate::extract::{ApiJson, Caller};
use crate::schema;
use crate::state::AppState;
use axum::extract::State;
use billpay_domain::pricing::DEFAULT_TIER;
use billpay_domain::{Kobo, Reference};
use billpay_operations::upgrades::{self, Offered, UpgradeError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(offers))
        .routes(routes!(upgrade))
}

#[derive(Serialize, ToSchema)]
pub struct UpgradesOut {
    /// The caller's price tier now; `default` is the list prices.
    #[schema(example = "default")]
    pub tier: String,
    pub offers: Vec<OfferOut>,
}

#[derive(Serialize, ToSchema)]
pub struct OfferOut {
    #[schema(example = "reseller")]
    pub tier: String,
    /// The one-time fee, Naira, paid from the wallet.
    #[schema(value_type = f64, example = 5000.0)]
    pub fee: Kobo,
    /// The KYC level needed (`null`: any).
    #[schema(example = 1)]
    pub min_kyc_level: Option<u8>,
    /// Naira spent over the last 30 days needed (`null`: none).
    #[schema(value_type = Option<f64>, example = 20000.0)]
    pub min_monthly_spend: Option<Kobo>,
    /// The caller is on this tier now.
    pub current: bool,
    /// The caller may buy it now.
    pub eligible: bool,
    /// Why not, when it may not (a condition not met).
    #[schema(example = json!(null))]
    pub unmet: Option<String>,
    /// Naira the caller's successful purchases of the last 30 days would
    /// have cost less at this tier (negative: more).
    #[schema(value_type = f64, example = 1250.5)]
    pub savings: Kobo,
    /// How many purchases `savings` is counted over.
    #[schema(example = 42)]
    pub purchases_counted: usize,
}

impl From<Offered> for OfferOut {
    fn from(o: Offered) -> Self {
        OfferOut {
            eligible: o.unmet.is_none() && !o.current,
            tier: o.offer.tier,
            fee: o.offer.fee,
            min_kyc_level: o.offer.min_kyc_level,
            min_monthly_spend: o.offer.min_monthly_spend,
            current: o.current,
            unmet: o.unmet,
            savings: o.savings,
            purchases_counted: o.purchases,
        }
    }
}

/// The price tiers on offer to the caller, with its savings at each.
#[utoipa::path(get, path = "/account/upgrades", tag = "wallet",
    responses((status = 200, body = Envelope<UpgradesOut>)))]
pub async fn offers(State(state): State<AppState>, caller: Caller) -> Reply<UpgradesOut> {
    let book = state.purchasing.prices.get().await?;
    let store = state.purchasing.store.as_ref();
    let offers = upgrades::offers_for(store, &book, caller.account_id)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let tier = book.accounts.get(&caller.account_id).cloned();
    ok(UpgradesOut {
        tier: tier.unwrap_or_else(|| DEFAULT_TIER.to_owned()),
        offers: offers.into_iter().map(OfferOut::from).collect(),
    })
}

/// Buys an upgrade: the tier, and a reference that makes a retry buy once.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"tier": "reseller", "reference": "upgrade-0001"}))]
pub struct UpgradeIn {
    /// A tier on offer (`GET /account/upgrades`).
    #[schema(example = "reseller", min_length = 1, max_length = 40)]
    pub tier: String,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Serialize, ToSchema)]
pub struct UpgradeOut {
    /// The tier bought: the caller's purchases are priced at it from now on.
    #[schema(example = "reseller")]
    pub tier: String,
    #[schema(example = "default")]
    pub tier_before: String,
    /// The fee debited, Naira.
    #[schema(value_type = f64, example = 5000.0)]
    pub fee: Kobo,
    #[schema(example = "upgrade-0001")]
    pub reference: String,
    /// The wallet balance now, Naira.
    #[schema(value_type = f64, example = 12000.0)]
    pub balance: Kobo,
    /// `true`: this reference had bought it already, nothing was charged now.
    pub repeated: bool,
    /// When it was bought (ISO 8601).
    #[schema(example = "2026-11-29T10:15:00.000+00:00")]
    pub created_at: String,
}

/// Buys a tier on offer from the wallet, once per `reference`; the tier
/// applies to the caller's next purchase on every node.
#[utoipa::path(post, path = "/account/upgrade", tag = "wallet", request_body = UpgradeIn,
    responses((status = 200, body = Envelope<UpgradeOut>)))]
pub async fn upgrade(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson { value: body, .. }: ApiJson<UpgradeIn>,
) -> Reply<UpgradeOut> {
    let store = state.purchasing.store.as_ref();
    let bought = upgrades::buy(store, caller.account_id, &body.tier, &body.reference)
        .await
        .map_err(|e| match e {
            UpgradeError::InsufficientBalance(fee) => ApiError::InsufficientBalance {
                balance: None,
                needed: Some(fee),
            },
            UpgradeError::Store(e) => e.into(),
            refused => ApiError::Validation(format!("tier: {refused}")),
        })?;
    let upgrade = bought.upgrade;
    ok(UpgradeOut {
        tier: upgrade.tier,
        tier_before: upgrade.tier_before,
        fee: upgrade.fee,
        reference: upgrade.reference,
        balance: bought.balance,
        repeated: bought.repeated,
        created_at: upgrade.created_at,
    })
}
