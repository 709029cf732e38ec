//! `GET /v1/referrals`: the caller's referral code and sign-up link, its
//! referees (names masked), what they earned and what is pending, the bonus
//! balance and its history; `POST /v1/referrals/withdraw`: moves bonus to
//! the wallet once per `reference` (docs/referrals.md). The dashboard's
//! referrals page calls the same operations, `billpay_operations::referrals`.

use crate::envelope::{Envelope, Reply, ok};
use crate::error::ApiError;
use crate::extract::{ApiJson, Caller};
use crate::schema;
use crate::state::AppState;
use axum::extract::State;
use billpay_domain::{Kobo, Reference};
use billpay_operations::referrals::{self, WithdrawError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(overview))
        .routes(routes!(withdraw))
}

#[derive(Serialize, ToSchema)]
pub struct ReferralsOut {
    /// The caller's referral code (any case is read the same).
    #[schema(example = "K7QM2XD")]
    pub code: String,
    /// The sign-up link with the code, on the address customers reach the
    /// shop at (`public_url`).
    #[schema(example = "https://shop.example/dashboard/signup?ref=K7QM2XD")]
    pub link: String,
    /// How many customers signed up with the code.
    #[schema(example = 3)]
    pub referees_count: u64,
    /// Commissions and bonuses earned, less what reversals took back, Naira.
    #[schema(value_type = f64, example = 45.5)]
    pub earned: Kobo,
    /// What the referees' purchases still processing would earn at today's rates, Naira.
    #[schema(value_type = f64, example = 1.5)]
    pub pending: Kobo,
    /// Moved to the wallet so far, Naira.
    #[schema(value_type = f64, example = 20.0)]
    pub withdrawn: Kobo,
    /// The bonus balance, Naira: not spendable until moved to the wallet;
    /// negative when a reversal took back a commission already moved (owed).
    #[schema(value_type = f64, example = 25.5)]
    pub bonus_balance: Kobo,
    /// The least one move may be, Naira.
    #[schema(value_type = f64, example = 0.0)]
    pub min_withdrawal: Kobo,
    pub referees: Vec<RefereeOut>,
    /// The bonus balance's latest entries, newest first.
    pub history: Vec<BonusEntryOut>,
}

#[derive(Serialize, ToSchema)]
pub struct RefereeOut {
    /// The referee's name, masked.
    #[schema(example = "A** O**")]
    pub name: String,
    /// When they signed up (ISO 8601).
    #[schema(example = "2026-11-29T10:15:00.000+00:00")]
    pub joined_at: String,
    /// `earning`, `no commission` (their details matched the caller's) or `void`.
    #[schema(example = "earning")]
    pub state: String,
    /// What they earned the caller, less reversals, Naira.
    #[schema(value_type = f64, example = 15.0)]
    pub earned: Kobo,
}

#[derive(Serialize, ToSchema)]
pub struct BonusEntryOut {
    /// `commission`, `reversal`, `first_funding` or `withdrawal`.
    #[schema(example = "commission")]
    pub kind: String,
    /// Naira, signed.
    #[schema(value_type = f64, example = 1.5)]
    pub amount: Kobo,
    #[schema(value_type = f64, example = 25.5)]
    pub balance_after: Kobo,
    /// A withdrawal's reference.
    #[schema(example = json!(null))]
    pub reference: Option<String>,
    #[schema(example = "2026-11-29T10:15:00.000+00:00")]
    pub created_at: String,
}

/// The caller's referral code, link, referees and bonus balance.
#[utoipa::path(get, path = "/referrals", tag = "wallet",
    responses((status = 200, body = Envelope<ReferralsOut>)))]
pub async fn overview(State(state): State<AppState>, caller: Caller) -> Reply<ReferralsOut> {
    let store = state.purchasing.store.as_ref();
    let view = referrals::overview(store, caller.account_id).await?;
    ok(ReferralsOut {
        link: format!("{}{}", state.public_url, view.link_path),
        code: view.code,
        referees_count: view.totals.referees,
        earned: view.totals.earned,
        pending: view.totals.pending,
        withdrawn: view.totals.withdrawn,
        bonus_balance: view.totals.balance,
        min_withdrawal: view.min_withdrawal,
        referees: view
            .referees
            .into_iter()
            .map(|r| RefereeOut {
                name: r.name,
                joined_at: r.joined_at,
                state: r.state.to_owned(),
                earned: r.earned,
            })
            .collect(),
        history: view
            .history
            .into_iter()
            .map(|e| BonusEntryOut {
                kind: e.kind,
                amount: e.amount,
                balance_after: e.balance_after,
                reference: e.reference.filter(|_| e.amount < Kobo::ZERO),
                created_at: e.created_at,
            })
            .collect(),
    })
}

/// Moves bonus to the wallet: the amount, and a reference that makes a
/// retry move once.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"amount": 500, "reference": "bonus-0001"}))]
pub struct WithdrawIn {
    /// Naira, more than 0 and at least the owner's minimum (at most a trillion, the most any amount may be).
    #[schema(value_type = f64, minimum = 0.01, maximum = 1_000_000_000_000.0, multiple_of = 0.01, example = 500.0)]
    pub amount: Kobo,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Serialize, ToSchema)]
pub struct WithdrawOut {
    /// Naira moved.
    #[schema(value_type = f64, example = 500.0)]
    pub amount: Kobo,
    #[schema(example = "bonus-0001")]
    pub reference: String,
    /// The bonus balance now, Naira.
    #[schema(value_type = f64, example = 25.5)]
    pub bonus_balance: Kobo,
    /// The wallet balance now, Naira.
    #[schema(value_type = f64, example = 12000.0)]
    pub balance: Kobo,
    /// `true`: this reference had moved it already, nothing moved now.
    pub repeated: bool,
}

/// Moves `amount` of the caller's bonus balance to its wallet, once per `reference`.
#[utoipa::path(post, path = "/referrals/withdraw", tag = "wallet", request_body = WithdrawIn,
    responses((status = 200, body = Envelope<WithdrawOut>), (status = 422, description = "validation_error; minimum_amount: below the owner's least move; insufficient_balance: more than the bonus balance; duplicate_reference: the reference moved another amount")))]
pub async fn withdraw(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson { value: body, .. }: ApiJson<WithdrawIn>,
) -> Reply<WithdrawOut> {
    let store = state.purchasing.store.as_ref();
    let amount = body.amount;
    let moved = referrals::withdraw(store, caller.account_id, amount, &body.reference)
        .await
        .map_err(|e| match e {
            WithdrawError::NotPositive => ApiError::Validation(e.to_string()),
            WithdrawError::BelowMinimum(_) => ApiError::MinimumAmount(e.to_string()),
            WithdrawError::MoreThanBalance(_) => ApiError::BalanceShort(e.to_string()),
            WithdrawError::OtherAmount(_) => ApiError::ReferenceReused(e.to_string()),
            WithdrawError::Store(e) => e.into(),
        })?;
    ok(WithdrawOut {
        amount: moved.amount,
        reference: moved.reference,
        bonus_balance: moved.bonus_balance,
        balance: moved.wallet_balance,
        repeated: moved.repeated,
    })
}
