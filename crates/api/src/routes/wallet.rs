//! `GET /v1/wallet/balance`.

use crate::envelope::{Envelope, Reply, ok};
use crate::extract::Caller;
use crate::state::AppState;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default().routes(routes!(balance))
}

#[derive(Serialize, ToSchema)]
pub struct BalanceOut {
    /// Naira.
    #[schema(value_type = f64, example = 12500.0)]
    pub balance: billpay_domain::Kobo,
    #[schema(example = "NGN")]
    pub currency: &'static str,
}

/// Wallet balance of the caller's account.
#[utoipa::path(get, path = "/wallet/balance", tag = "wallet",
    responses((status = 200, body = Envelope<BalanceOut>)))]
pub async fn balance(State(state): State<AppState>, caller: Caller) -> Reply<BalanceOut> {
    let balance = state.store.balance(caller.account_id).await?;
    ok(BalanceOut {
        balance,
        currency: "NGN",
    })
}
