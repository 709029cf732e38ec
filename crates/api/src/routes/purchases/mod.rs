//! The seven purchase endpoints and their `/test` twins. Each body becomes a
//! checked [`PurchaseRequest`] (`requests`), is priced from the catalogue
//! (`billpay_domain::order`), then either checked (test mode, [`check`]) or
//! bought ([`buy`], the one purchase operation the shop calls too).

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
use billpay_domain::order;
use billpay_store::{NewPurchase, Refusal, StoreError, Transaction, TxLookup};
use responses::accepted;
use serde_json::Value;
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

/// Every purchase: check the body's rules, then buy it (live) or check it (test).
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
    match mode {
        Mode::Live => {
            let tx = buy(&state, caller, request).await?;
            ok(PurchaseOut::Accepted(Box::new(accepted(tx))))
        }
        Mode::Test => check(&state, caller, request, raw).await,
    }
}

/// The purchase operation, whoever asks: the API's seven endpoints and the
/// shop's pages (`billpay_dashboard`) both call this, never a copy. Prices
/// `request` at the caller's tier, refuses a provider no configured supplier
/// sells, then commits it in one atomic write (reference, debit,
/// transaction, ledger entry) and wakes the fulfilment worker, which
/// delivers it and queues its webhook to `caller.key_id`.
pub async fn buy(
    state: &AppState,
    caller: Caller,
    request: PurchaseRequest,
) -> Result<Transaction, ApiError> {
    let reference = request.reference.clone();
    let catalogue = state.catalogue.get().await?;
    let prices = state.prices.get().await?;
    let order = order::price(&catalogue, &prices, caller.account_id, request)?;
    // A provider no configured supplier sells (say, betting when only a
    // supplier without betting is configured) is refused before any money moves.
    if !state.suppliers.sells(order.product, &order.provider.slug) {
        return Err(ApiError::InvalidProvider);
    }
    let amount = order.amount;
    let placed = state
        .store
        .place_purchase(NewPurchase {
            account_id: caller.account_id,
            key_id: caller.key_id,
            reference: reference.to_string(),
            product: order.product,
            provider: order.provider.slug.clone(),
            plan_id: order.plan_id,
            label: order.label,
            recipient: order.recipient,
            amount: order.amount,
            face_value: order.face_value,
            tier: order.tier,
            details: order.details,
        })
        .await;
    let tx = match placed {
        Ok(tx) => tx,
        Err(e) => return Err(refused(state, &caller, &reference, amount, e).await),
    };
    match tx.held_for.as_deref() {
        // Held for review (docs/limits.md): logged and counted, never the recipient.
        Some(rule) => {
            tracing::warn!(account = %caller.account_id, code = tx.code, rule, "purchase held for review");
            let reason = held_reason(rule);
            metrics::counter!("billpay_purchases_held_total", "reason" => reason).increment(1);
        }
        None => state.purchases_waiting.notify_one(),
    }
    Ok(tx)
}

/// A refused purchase, said in full: a used reference names the transaction
/// that has it, a short balance says the balance and what was needed (both
/// read after the refusal; the refusal itself was atomic).
async fn refused(
    state: &AppState,
    caller: &Caller,
    reference: &billpay_domain::Reference,
    needed: billpay_domain::Kobo,
    e: StoreError,
) -> ApiError {
    match e {
        StoreError::Refused(Refusal::DuplicateReference) => {
            let lookup = TxLookup::Reference(reference.to_string());
            let existing = state
                .store
                .transaction(Some(caller.account_id), lookup)
                .await;
            ApiError::DuplicateReference(existing.ok().flatten().map(|tx| tx.code))
        }
        StoreError::Refused(Refusal::InsufficientBalance) => ApiError::InsufficientBalance {
            balance: state.store.balance(caller.account_id).await.ok(),
            needed: Some(needed),
        },
        StoreError::Refused(refusal @ (Refusal::Blocked | Refusal::LimitExceeded(_))) => {
            fraud_refusal(caller, refusal)
        }
        other => other.into(),
    }
}

/// A purchase refused by the blocklist or a limit: logged (never the
/// recipient: it is a person's number) and counted for `/metrics`.
fn fraud_refusal(caller: &Caller, refusal: Refusal) -> ApiError {
    let reason = match &refusal {
        Refusal::Blocked => "blocked",
        Refusal::LimitExceeded(limit) => limit.kind.as_str(),
        _ => "other",
    };
    tracing::warn!(account = %caller.account_id, reason, "purchase refused");
    metrics::counter!("billpay_purchases_refused_total", "reason" => reason).increment(1);
    StoreError::Refused(refusal).into()
}

/// A held purchase's rule as a metric label (a fixed set of values).
fn held_reason(rule: &str) -> &'static str {
    match billpay_store::limits::LimitKind::parse(rule) {
        Some(kind) => kind.as_str(),
        None if rule == billpay_store::limits::OVER_BALANCE => billpay_store::limits::OVER_BALANCE,
        None => "other",
    }
}

/// Test mode: the checks of a live purchase (priced the same), changing nothing.
async fn check(
    state: &AppState,
    caller: Caller,
    request: PurchaseRequest,
    raw: Value,
) -> Reply<PurchaseOut> {
    let reference = request.reference.clone();
    let catalogue = state.catalogue.get().await?;
    let prices = state.prices.get().await?;
    let order = order::price(&catalogue, &prices, caller.account_id, request)?;
    let balance = match state
        .store
        .check_purchase(
            caller.account_id,
            reference.as_str(),
            &order.recipient,
            order.amount,
        )
        .await
    {
        Ok(balance) => balance,
        Err(e) => return Err(refused(state, &caller, &reference, order.amount, e).await),
    };
    ok(PurchaseOut::Test(TestPurchaseOut {
        test_mode: true,
        message: "Test mode: nothing was deducted, recorded or sent",
        request: raw,
        would_deduct: order.amount,
        face_value: order.face_value,
        balance,
    }))
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
