//! `GET /v1/wallet/balance` and `GET /v1/wallet/funding-accounts` (where the
//! caller's customers pay by bank transfer).

use crate::envelope::{Envelope, Reply, ok};
use crate::extract::Caller;
use crate::state::AppState;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(balance))
        .routes(routes!(funding_accounts))
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
    let balance = state.purchasing.store.balance(caller.account_id).await?;
    ok(BalanceOut {
        balance,
        currency: "NGN",
    })
}

/// A bank account reserved for the caller at a funding gateway: a transfer
/// to it from any Nigerian bank credits the wallet.
#[derive(Serialize, ToSchema)]
pub struct FundingAccountOut {
    /// The gateway that reserved it.
    #[schema(example = "monnify")]
    pub gateway: String,
    #[schema(example = "Wema bank")]
    pub bank_name: String,
    /// NUBAN, 10 digits.
    #[schema(example = "5000000001")]
    pub account_number: String,
    #[schema(example = "Test Co")]
    pub account_name: String,
}

#[derive(Serialize, ToSchema)]
pub struct FundingAccountsOut {
    /// Empty until the operator reserves accounts (`billpay funding reserve`).
    pub accounts: Vec<FundingAccountOut>,
}

/// The bank accounts that fund the caller's wallet by transfer.
#[utoipa::path(get, path = "/wallet/funding-accounts", tag = "wallet",
    responses((status = 200, body = Envelope<FundingAccountsOut>)))]
pub async fn funding_accounts(
    State(state): State<AppState>,
    caller: Caller,
) -> Reply<FundingAccountsOut> {
    let held = state
        .purchasing
        .store
        .reserved_accounts(Some(caller.account_id))
        .await?;
    let accounts = held.into_iter().map(|a| FundingAccountOut {
        gateway: a.gateway,
        bank_name: a.bank_name,
        account_number: a.account_number,
        account_name: a.account_name,
    });
    ok(FundingAccountsOut {
        accounts: accounts.collect(),
    })
}
