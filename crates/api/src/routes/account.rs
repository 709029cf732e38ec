//! `GET /v1/account`: the caller's account, its KYC level, its limits and
//! what it used of them (docs/limits.md). The balance stays its own
//! endpoint, so its hot path reads nothing more.

use crate::envelope::{Envelope, Reply, ok};
use crate::extract::Caller;
use crate::state::AppState;
use axum::extract::State;
use billpay_domain::Kobo;
use billpay_store::limits::Limits;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default().routes(routes!(account))
}

/// Limits in Naira or purchases; `null`: no limit.
#[derive(Serialize, ToSchema)]
pub struct LimitsOut {
    /// Largest single purchase, Naira.
    #[schema(value_type = Option<f64>, example = 10000.0)]
    pub max_purchase: Option<Kobo>,
    /// Spent per Lagos day, Naira.
    #[schema(value_type = Option<f64>, example = 50000.0)]
    pub daily_value: Option<Kobo>,
    /// Purchases per Lagos day.
    #[schema(example = 20)]
    pub daily_count: Option<i64>,
    /// Spent over the last 30 Lagos days, Naira.
    #[schema(value_type = Option<f64>, example = 300000.0)]
    pub monthly_value: Option<Kobo>,
    /// Purchases over the last 30 Lagos days.
    #[schema(example = 300)]
    pub monthly_count: Option<i64>,
    /// Largest wallet balance, Naira: above it, level 0's limits apply.
    #[schema(value_type = Option<f64>, example = 300000.0)]
    pub max_balance: Option<Kobo>,
    /// Spent on one recipient per Lagos day, Naira.
    #[schema(value_type = Option<f64>, example = 20000.0)]
    pub per_recipient_daily: Option<Kobo>,
}

impl From<Limits> for LimitsOut {
    fn from(l: Limits) -> Self {
        LimitsOut {
            max_purchase: l.max_purchase,
            daily_value: l.daily_value,
            daily_count: l.daily_count,
            monthly_value: l.monthly_value,
            monthly_count: l.monthly_count,
            max_balance: l.max_balance,
            per_recipient_daily: l.per_recipient_daily,
        }
    }
}

/// What the account spent: today (Lagos) and over the last 30 Lagos days.
#[derive(Serialize, ToSchema)]
pub struct UsageOut {
    #[schema(value_type = f64, example = 3500.0)]
    pub daily_value: Kobo,
    #[schema(example = 3)]
    pub daily_count: i64,
    #[schema(value_type = f64, example = 42000.0)]
    pub monthly_value: Kobo,
    #[schema(example = 31)]
    pub monthly_count: i64,
}

#[derive(Serialize, ToSchema)]
pub struct AccountOut {
    #[schema(example = "0b0e3c1e-8a4f-4b7e-9d6a-2f1c3e4d5a6b")]
    pub account_id: String,
    #[schema(example = "Test Co")]
    pub name: String,
    /// 0 (email and phone verified), 1 (BVN or NIN verified), 2 (approved by the operator).
    #[schema(example = 1)]
    pub kyc_level: u8,
    /// The limits that apply (the account's own over its level's).
    pub limits: LimitsOut,
    pub usage: UsageOut,
    /// Naira that the daily and 30-day value limits still let the account
    /// spend today (`null`: neither applies).
    #[schema(value_type = Option<f64>, example = 46500.0)]
    pub left_today: Option<Kobo>,
    /// The balance is over the largest balance: level 0's limits apply until
    /// the operator reviews the account.
    pub held_to_level0: bool,
}

/// The caller's account: its KYC level, its limits and what it used of them.
#[utoipa::path(get, path = "/account", tag = "wallet",
    responses((status = 200, body = Envelope<AccountOut>)))]
pub async fn account(State(state): State<AppState>, caller: Caller) -> Reply<AccountOut> {
    let id = caller.account_id;
    let account = state.store.account(id).await?;
    let account =
        account.ok_or_else(|| crate::error::ApiError::NotFound("account not found".into()))?;
    let view = state.store.account_limits(id).await?;
    let left_today = view.left_today();
    ok(AccountOut {
        account_id: id.to_string(),
        name: account.name,
        kyc_level: view.kyc.level,
        limits: view.limits.into(),
        usage: UsageOut {
            daily_value: view.usage.daily_value,
            daily_count: view.usage.daily_count,
            monthly_value: view.usage.monthly_value,
            monthly_count: view.usage.monthly_count,
        },
        left_today,
        held_to_level0: view.held_to_level0,
    })
}
