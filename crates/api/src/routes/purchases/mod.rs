//! The seven purchase endpoints and their `/test` twins. Each body becomes a
//! checked [`PurchaseRequest`] (`requests`), then either checked (test mode)
//! or bought by the one purchase operation, `billpay_operations::purchases`
//! (priced from the catalogue at the caller's tier, `billpay_domain::order`),
//! which the shop calls too.

mod requests;
mod responses;

pub use requests::{AirtimeIn, BetIn, CableIn, DataIn, EducationIn, ElectricityIn, EpinIn};
pub use responses::{ProductLabel, PurchaseAcceptedOut, PurchaseOut, TestPurchaseOut};

use crate::envelope::{Envelope, Reply, ok};
use crate::error::ApiError;
use crate::extract::{ApiJson, Caller};
use crate::state::AppState;
use axum::Extension;
use axum::extract::State;
use billpay_domain::PurchaseRequest;
use responses::accepted;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Live purchases debit the wallet; test ones only check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Live,
    Test,
}

pub fn router(mode: Mode) -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(airtime))
        .routes(routes!(data))
        .routes(routes!(epin))
        .routes(routes!(cable))
        .routes(routes!(electricity))
        .routes(routes!(education))
        .routes(routes!(bet))
        .layer(Extension(mode))
}

/// Every purchase: check the body's rules, then buy it (live) or check it
/// (test), through the purchase operation the shop calls too
/// (`billpay_operations::purchases::Purchasing`).
async fn purchase<In>(
    state: AppState,
    mode: Mode,
    caller: Caller,
    ApiJson { value, raw }: ApiJson<In>,
) -> Reply<PurchaseOut>
where
    PurchaseRequest: TryFrom<In, Error = ApiError>,
{
    let request = PurchaseRequest::try_from(value)?;
    let buyer = caller.buyer();
    match mode {
        Mode::Live => {
            let tx = state.purchasing.buy(&buyer, request).await?;
            ok(PurchaseOut::Accepted(Box::new(accepted(tx))))
        }
        Mode::Test => {
            let checked = state.purchasing.check(&buyer, request).await?;
            ok(PurchaseOut::Test(TestPurchaseOut {
                test_mode: true,
                message: "Test mode: nothing was deducted, recorded or sent",
                request: raw,
                would_deduct: checked.would_deduct,
                face_value: checked.face_value,
                balance: checked.balance,
            }))
        }
    }
}

/// Send airtime to a Nigerian phone number.
#[utoipa::path(post, path = "/airtime/purchase", tag = "purchases", request_body = AirtimeIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference, limit_exceeded"), (status = 403, description = "suspended: the key or its account; blocked: the account or the recipient is on the operator's blocklist")))]
pub async fn airtime(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    body: ApiJson<AirtimeIn>,
) -> Reply<PurchaseOut> {
    purchase(state, mode, caller, body).await
}

/// Buy a data bundle; the price is the plan's.
#[utoipa::path(post, path = "/data/purchase", tag = "purchases", request_body = DataIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, invalid_plan, insufficient_balance, duplicate_reference, limit_exceeded"), (status = 403, description = "suspended: the key or its account; blocked: the account or the recipient is on the operator's blocklist")))]
pub async fn data(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    body: ApiJson<DataIn>,
) -> Reply<PurchaseOut> {
    purchase(state, mode, caller, body).await
}

/// Buy recharge e-pins; fetch them later with `GET /v1/epin/batch`.
#[utoipa::path(post, path = "/epin/purchase", tag = "purchases", request_body = EpinIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, insufficient_balance, duplicate_reference, limit_exceeded"), (status = 403, description = "suspended: the key or its account; blocked: the account or the recipient is on the operator's blocklist")))]
pub async fn epin(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    body: ApiJson<EpinIn>,
) -> Reply<PurchaseOut> {
    purchase(state, mode, caller, body).await
}

/// Pay a cable TV subscription; the price is the plan's.
#[utoipa::path(post, path = "/cable/purchase", tag = "purchases", request_body = CableIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, invalid_plan, insufficient_balance, duplicate_reference, limit_exceeded"), (status = 403, description = "suspended: the key or its account; blocked: the account or the recipient is on the operator's blocklist")))]
pub async fn cable(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    body: ApiJson<CableIn>,
) -> Reply<PurchaseOut> {
    purchase(state, mode, caller, body).await
}

/// Buy an electricity token (prepaid) or pay a postpaid bill.
#[utoipa::path(post, path = "/electricity/purchase", tag = "purchases", request_body = ElectricityIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference, limit_exceeded"), (status = 403, description = "suspended: the key or its account; blocked: the account or the recipient is on the operator's blocklist")))]
pub async fn electricity(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    body: ApiJson<ElectricityIn>,
) -> Reply<PurchaseOut> {
    purchase(state, mode, caller, body).await
}

/// Buy exam result-checker pins; the price is the provider's pin price.
#[utoipa::path(post, path = "/education/purchase", tag = "purchases", request_body = EducationIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, insufficient_balance, duplicate_reference, limit_exceeded"), (status = 403, description = "suspended: the key or its account; blocked: the account or the recipient is on the operator's blocklist")))]
pub async fn education(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    body: ApiJson<EducationIn>,
) -> Reply<PurchaseOut> {
    purchase(state, mode, caller, body).await
}

/// Fund a betting wallet.
#[utoipa::path(post, path = "/bet/purchase", tag = "purchases", request_body = BetIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference, limit_exceeded"), (status = 403, description = "suspended: the key or its account; blocked: the account or the recipient is on the operator's blocklist")))]
pub async fn bet(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    body: ApiJson<BetIn>,
) -> Reply<PurchaseOut> {
    purchase(state, mode, caller, body).await
}
