//! The seven purchase endpoints and their `/test` twins. Each handler turns
//! its request into an [`Order`] (provider, plan and price from the catalogue,
//! never from the client); [`place`] then either checks it (test mode) or
//! commits it in one atomic write and wakes the fulfilment worker.

use crate::envelope::ok;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, Caller};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::post;
use axum::{Extension, Json, Router};
use billpay_domain::catalogue::Provider;
use billpay_domain::{Kobo, Phone, Product, Reference};
use billpay_store::{NewPurchase, Transaction};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::ToSchema;

/// Live purchases debit the wallet; test ones only check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Live,
    Test,
}

pub fn router(mode: Mode) -> Router<AppState> {
    Router::new()
        .route("/airtime/purchase", post(airtime))
        .route("/data/purchase", post(data))
        .route("/epin/purchase", post(epin))
        .route("/cable/purchase", post(cable))
        .route("/electricity/purchase", post(electricity))
        .route("/education/purchase", post(education))
        .route("/bet/purchase", post(bet))
        .layer(Extension(mode))
}

/// A validated purchase, priced from the catalogue.
struct Order<'a> {
    product: Product,
    provider: &'a Provider,
    plan_id: Option<String>,
    label: String,
    recipient: String,
    amount: Kobo,
    /// The type's own fields, echoed in responses and kept on the transaction.
    details: Value,
}

async fn place(
    state: &AppState,
    caller: Caller,
    mode: Mode,
    reference: Reference,
    order: Order<'_>,
    request: Value,
) -> ApiResult<Json<Value>> {
    if mode == Mode::Test {
        let balance = state
            .store
            .check_purchase(caller.account_id, reference.as_str(), order.amount)
            .await?;
        return Ok(ok(json!({
            "test_mode": true,
            "message": "Test mode: nothing was deducted, recorded or sent",
            "request": request,
            "would_deduct": order.amount,
            "balance": balance,
        })));
    }
    let tx = state
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
            details: order.details,
        })
        .await?;
    state.purchases_waiting.notify_one();
    Ok(ok(accepted(&tx)))
}

/// The accepted response: the spec's electricity result, generalised.
pub fn accepted(tx: &Transaction) -> Value {
    let mut data = json!({
        "status": true,
        "message": "Transaction is processing",
        "reference_code": tx.code,
        "reference": tx.reference,
        "balance_before": tx.balance_before,
        "balance_after": tx.balance_after,
        "amount": tx.amount,
        "recipient": tx.recipient,
    });
    data[tx.product.label_field()] = json!(tx.label);
    if let (Some(out), Some(details)) = (data.as_object_mut(), tx.details.as_object()) {
        for (k, v) in details {
            out.entry(k.clone()).or_insert(v.clone());
        }
    }
    data
}

fn check_amount(amount: Kobo, min_naira: i64, max_naira: i64) -> ApiResult<()> {
    if amount < Kobo::from_naira(min_naira) {
        return Err(ApiError::MinimumAmount(format!(
            "Minimum amount is {min_naira} Naira"
        )));
    }
    if amount > Kobo::from_naira(max_naira) {
        return Err(ApiError::MaximumAmount(format!(
            "Maximum amount is {max_naira} Naira"
        )));
    }
    Ok(())
}

/// A string of `min..=max` ASCII digits.
pub fn digits(field: &str, value: &str, min: usize, max: usize) -> ApiResult<String> {
    let ok = (min..=max).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit());
    if ok {
        Ok(value.to_owned())
    } else {
        Err(ApiError::Validation(format!(
            "{field}: must be {min} to {max} digits"
        )))
    }
}

pub fn meter_type(value: u8) -> ApiResult<u8> {
    match value {
        1 | 2 => Ok(value),
        _ => Err(ApiError::Validation(
            "meter_type: must be 1 (prepaid) or 2 (postpaid)".into(),
        )),
    }
}

pub fn customer_id(value: &str) -> ApiResult<String> {
    let length = value.chars().count();
    if (1..=40).contains(&length) && !value.chars().any(char::is_control) {
        Ok(value.to_owned())
    } else {
        Err(ApiError::Validation(
            "customer_id: must be 1 to 40 characters".into(),
        ))
    }
}

fn quantity(value: u32, max: u32) -> ApiResult<i64> {
    if (1..=max).contains(&value) {
        Ok(i64::from(value))
    } else {
        Err(ApiError::Validation(format!(
            "quantity: must be 1 to {max}"
        )))
    }
}

fn times(price: Kobo, count: i64) -> ApiResult<Kobo> {
    price
        .checked_mul(count)
        .ok_or_else(|| ApiError::Validation("amount: too large".into()))
}

#[derive(Deserialize, ToSchema)]
pub struct AirtimeIn {
    /// Provider UUID or slug (mtn, airtel, glo, 9mobile).
    pub provider_id: String,
    #[schema(value_type = String, example = "08031234567")]
    pub phone: Phone,
    /// Naira, 50 to 50 000.
    #[schema(value_type = f64, example = 500)]
    pub amount: Kobo,
    #[schema(value_type = String, example = "order-0001")]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
pub struct DataIn {
    pub provider_id: String,
    pub plan_id: String,
    #[schema(value_type = String)]
    pub phone: Phone,
    #[schema(value_type = String)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
pub struct EpinIn {
    pub provider_id: String,
    /// Naira; one of the provider's denominations.
    #[schema(value_type = f64, example = 100)]
    pub denomination: Kobo,
    /// 1 to 100.
    pub quantity: u32,
    #[schema(value_type = String)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
pub struct CableIn {
    pub provider_id: String,
    pub plan_id: String,
    /// 6 to 20 digits.
    pub smartcard_number: String,
    #[schema(value_type = Option<String>)]
    pub phone: Option<Phone>,
    #[schema(value_type = String)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
pub struct ElectricityIn {
    /// Provider UUID or slug, e.g. ikeja-electric.
    pub provider_id: String,
    /// Naira, 1 000 to 500 000.
    #[schema(value_type = f64, example = 5000)]
    pub amount: Kobo,
    /// 1 to 20 digits.
    pub meter_number: String,
    /// 1 prepaid, 2 postpaid.
    pub meter_type: u8,
    /// Default "Unknown Customer".
    pub recipient_name: Option<String>,
    #[schema(value_type = String)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
pub struct EducationIn {
    /// waec, neco, nabteb or jamb (or UUID).
    pub provider_id: String,
    /// 1 to 10.
    pub quantity: u32,
    #[schema(value_type = Option<String>)]
    pub phone: Option<Phone>,
    #[schema(value_type = String)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
pub struct BetIn {
    pub provider_id: String,
    /// 1 to 40 characters.
    pub customer_id: String,
    /// Naira, 100 to 500 000.
    #[schema(value_type = f64)]
    pub amount: Kobo,
    #[schema(value_type = String)]
    pub reference: Reference,
}

/// Accepted live purchase (`data` of the envelope). Test calls answer `TestPurchaseOut`.
#[derive(Serialize, ToSchema)]
pub struct PurchaseAcceptedOut {
    pub status: bool,
    pub message: String,
    pub reference_code: String,
    pub reference: String,
    pub balance_before: f64,
    pub balance_after: f64,
    pub amount: f64,
    /// Data and cable purchases.
    pub plan: Option<String>,
    /// Other purchases.
    pub item: Option<String>,
    pub recipient: String,
}

#[derive(Serialize, ToSchema)]
pub struct TestPurchaseOut {
    pub test_mode: bool,
    pub message: String,
    pub request: Value,
    pub would_deduct: f64,
    pub balance: f64,
}

/// Send airtime to a Nigerian phone number.
#[utoipa::path(post, path = "/v1/airtime/purchase", tag = "purchases", request_body = AirtimeIn,
    responses((status = 200, body = PurchaseAcceptedOut), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference")))]
pub async fn airtime(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<AirtimeIn>,
) -> ApiResult<Json<Value>> {
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Airtime)?;
    check_amount(req.amount, 50, 50_000)?;
    let order = Order {
        product: Product::Airtime,
        provider,
        plan_id: None,
        label: format!("{} Airtime", provider.name),
        recipient: req.phone.to_string(),
        amount: req.amount,
        details: json!({ "phone": req.phone }),
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Buy a data bundle; the price is the plan's.
#[utoipa::path(post, path = "/v1/data/purchase", tag = "purchases", request_body = DataIn,
    responses((status = 200, body = PurchaseAcceptedOut), (status = 422, description = "validation_error, invalid_provider, invalid_plan, insufficient_balance, duplicate_reference")))]
pub async fn data(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<DataIn>,
) -> ApiResult<Json<Value>> {
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Data)?;
    let plan = catalogue.data_plan(provider, &req.plan_id)?;
    let order = Order {
        product: Product::Data,
        provider,
        plan_id: Some(plan.plan_id.clone()),
        label: plan.name.clone(),
        recipient: req.phone.to_string(),
        amount: plan.price,
        details: json!({ "phone": req.phone, "plan_id": plan.plan_id, "duration": plan.duration }),
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Buy recharge e-pins; fetch them later with `GET /v1/epin/batch`.
#[utoipa::path(post, path = "/v1/epin/purchase", tag = "purchases", request_body = EpinIn,
    responses((status = 200, body = PurchaseAcceptedOut), (status = 422, description = "validation_error, invalid_provider, insufficient_balance, duplicate_reference")))]
pub async fn epin(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<EpinIn>,
) -> ApiResult<Json<Value>> {
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Epin)?;
    let count = quantity(req.quantity, 100)?;
    let denomination = catalogue
        .epin_denomination(provider, req.denomination)
        .ok_or_else(|| {
            ApiError::Validation(format!(
                "denomination: {} does not sell a {} Naira e-pin",
                provider.slug, req.denomination
            ))
        })?;
    let batch_id = new_batch_id();
    let order = Order {
        product: Product::Epin,
        provider,
        plan_id: None,
        label: format!("{} {} e-PIN", provider.name, denomination.denomination),
        recipient: batch_id.clone(),
        amount: times(denomination.denomination, count)?,
        details: json!({ "batch_id": batch_id, "denomination": denomination.denomination, "quantity": count }),
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Letters only after the time, so the sandbox's digit rules never match a batch.
fn new_batch_id() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let letters: String = (0..6)
        .map(|_| char::from(b'A' + rng.random_range(0..26u8)))
        .collect();
    format!("EP{}{letters}", billpay_store::clock::now_ms())
}

/// Pay a cable TV subscription; the price is the plan's.
#[utoipa::path(post, path = "/v1/cable/purchase", tag = "purchases", request_body = CableIn,
    responses((status = 200, body = PurchaseAcceptedOut), (status = 422, description = "validation_error, invalid_provider, invalid_plan, insufficient_balance, duplicate_reference")))]
pub async fn cable(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<CableIn>,
) -> ApiResult<Json<Value>> {
    let smartcard = digits("smartcard_number", &req.smartcard_number, 6, 20)?;
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Cable)?;
    let plan = catalogue.cable_plan(provider, &req.plan_id)?;
    let order = Order {
        product: Product::Cable,
        provider,
        plan_id: Some(plan.plan_id.clone()),
        label: plan.name.clone(),
        recipient: smartcard.clone(),
        amount: plan.price,
        details: json!({ "smartcard_number": smartcard, "phone": req.phone, "plan_id": plan.plan_id }),
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Buy an electricity token (prepaid) or pay a postpaid bill.
#[utoipa::path(post, path = "/v1/electricity/purchase", tag = "purchases", request_body = ElectricityIn,
    responses((status = 200, body = PurchaseAcceptedOut), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference")))]
pub async fn electricity(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<ElectricityIn>,
) -> ApiResult<Json<Value>> {
    let meter = digits("meter_number", &req.meter_number, 1, 20)?;
    let meter_type = meter_type(req.meter_type)?;
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Electricity)?;
    check_amount(req.amount, 1_000, 500_000)?;
    let recipient_name = req
        .recipient_name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "Unknown Customer".into());
    let order = Order {
        product: Product::Electricity,
        provider,
        plan_id: None,
        label: provider.name.clone(),
        recipient: meter.clone(),
        amount: req.amount,
        details: json!({ "meter_number": meter, "meter_type": meter_type, "recipient_name": recipient_name }),
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Buy exam result-checker pins; the price is the provider's pin price.
#[utoipa::path(post, path = "/v1/education/purchase", tag = "purchases", request_body = EducationIn,
    responses((status = 200, body = PurchaseAcceptedOut), (status = 422, description = "validation_error, invalid_provider, insufficient_balance, duplicate_reference")))]
pub async fn education(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<EducationIn>,
) -> ApiResult<Json<Value>> {
    let count = quantity(req.quantity, 10)?;
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Education)?;
    let price = provider.price.ok_or(ApiError::InvalidProvider)?;
    let order = Order {
        product: Product::Education,
        provider,
        plan_id: None,
        label: format!("{} PIN", provider.name),
        recipient: req.phone.as_ref().map(Phone::to_string).unwrap_or_default(),
        amount: times(price, count)?,
        details: json!({ "quantity": count, "phone": req.phone }),
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Fund a betting wallet.
#[utoipa::path(post, path = "/v1/bet/purchase", tag = "purchases", request_body = BetIn,
    responses((status = 200, body = PurchaseAcceptedOut), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference")))]
pub async fn bet(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<BetIn>,
) -> ApiResult<Json<Value>> {
    let customer = customer_id(&req.customer_id)?;
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Betting)?;
    check_amount(req.amount, 100, 500_000)?;
    let order = Order {
        product: Product::Betting,
        provider,
        plan_id: None,
        label: format!("{} wallet funding", provider.name),
        recipient: customer.clone(),
        amount: req.amount,
        details: json!({ "customer_id": customer }),
    };
    place(&state, caller, mode, req.reference, order, raw).await
}
