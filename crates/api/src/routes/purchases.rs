//! The seven purchase endpoints and their `/test` twins. Each handler turns
//! its request into an [`Order`] (provider, plan and price from the catalogue,
//! never from the client); [`place`] then either checks it (test mode) or
//! commits it in one atomic write and wakes the fulfilment worker.

use crate::envelope::{Envelope, Reply, ok};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, Caller};
use crate::schema;
use crate::state::AppState;
use axum::extract::State;
use axum::routing::post;
use axum::{Extension, Router};
use billpay_domain::catalogue::Provider;
use billpay_domain::{Kobo, Phone, Product, Reference};
use billpay_store::{NewPurchase, Transaction};
use serde::{Deserialize, Deserializer, Serialize, de};
use serde_json::Value;
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
    details: OrderDetails,
}

/// The fields of an order that belong to its product (all optional here; each
/// product sets its own). Stored as the transaction's `details` and echoed in
/// the accepted response.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct OrderDetails {
    /// Airtime, data; cable and education when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// Data and cable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// Data: validity in days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<u32>,
    /// E-pins: fetch the pins with `GET /v1/epin/batch?batch_id=…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// E-pins: Naira.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<f64>)]
    pub denomination: Option<Kobo>,
    /// E-pins and education.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smartcard_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_type: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<String>,
}

/// `data` of a purchase: accepted (live) or checked (test twin).
#[derive(Serialize)]
#[serde(untagged)]
pub enum PurchaseOut {
    Accepted(Box<PurchaseAcceptedOut>),
    Test(TestPurchaseOut),
}

async fn place(
    state: &AppState,
    caller: Caller,
    mode: Mode,
    reference: Reference,
    order: Order<'_>,
    request: Value,
) -> Reply<PurchaseOut> {
    if mode == Mode::Test {
        let balance = state
            .store
            .check_purchase(caller.account_id, reference.as_str(), order.amount)
            .await?;
        return ok(PurchaseOut::Test(TestPurchaseOut {
            test_mode: true,
            message: "Test mode: nothing was deducted, recorded or sent",
            request,
            would_deduct: order.amount,
            balance,
        }));
    }
    // A provider the configured supplier does not sell (say, betting with
    // VTpass) is refused before any money moves.
    if !state.supplier.sells(order.product, &order.provider.slug) {
        return Err(ApiError::InvalidProvider);
    }
    let details = serde_json::to_value(&order.details)
        .map_err(|e| ApiError::Internal(format!("order details: {e}")))?;
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
            details,
        })
        .await?;
    state.purchases_waiting.notify_one();
    ok(PurchaseOut::Accepted(Box::new(accepted(tx)?)))
}

/// The accepted response: the spec's electricity result, generalised.
fn accepted(tx: Transaction) -> ApiResult<PurchaseAcceptedOut> {
    let details = serde_json::from_value(tx.details)
        .map_err(|e| ApiError::Internal(format!("stored order details: {e}")))?;
    Ok(PurchaseAcceptedOut {
        label: ProductLabel::new(tx.product, tx.label),
        status: true,
        message: "Transaction is processing",
        reference_code: tx.code,
        reference: tx.reference,
        balance_before: tx.balance_before,
        balance_after: tx.balance_after,
        amount: tx.amount,
        recipient: tx.recipient,
        details,
    })
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

/// Integer fields take any integral JSON number, `2` or `2.0`, as the
/// schema's `integer` type does.
pub fn whole_number<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    let number = serde_json::Number::deserialize(deserializer)?;
    let integral = |f: f64| f.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(&f);
    number
        .as_u64()
        .or_else(|| number.as_f64().filter(|f| integral(*f)).map(|f| f as u64))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| de::Error::custom("must be a whole number in range"))
}

fn times(price: Kobo, count: i64) -> ApiResult<Kobo> {
    price
        .checked_mul(count)
        .ok_or_else(|| ApiError::Validation("amount: too large".into()))
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": "order-airtime-0001"}))]
pub struct AirtimeIn {
    /// mtn, airtel, glo or 9mobile (or UUID).
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    #[schema(schema_with = schema::phone)]
    pub phone: Phone,
    /// Naira, 50 to 50 000, at most 2 decimal places.
    #[schema(value_type = f64, minimum = 50, maximum = 50000, multiple_of = 0.01, example = 500)]
    pub amount: Kobo,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": "08031234567", "reference": "order-data-0001"}))]
pub struct DataIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// A plan of the provider (`GET /v1/data-plans`).
    #[schema(min_length = 1)]
    pub plan_id: String,
    #[schema(schema_with = schema::phone)]
    pub phone: Phone,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "mtn", "denomination": 100, "quantity": 2, "reference": "order-epin-0001"}))]
pub struct EpinIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// Naira; one of the provider's denominations (`GET /v1/recharge-pins/denominations`).
    #[schema(value_type = f64, minimum = 0, multiple_of = 0.01, example = 100)]
    pub denomination: Kobo,
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1, maximum = 100)]
    pub quantity: u32,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": "7012345678", "phone": "08031234567", "reference": "order-cable-0001"}))]
pub struct CableIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// A plan of the provider (`GET /v1/cable-plans`).
    #[schema(min_length = 1)]
    pub plan_id: String,
    /// 6 to 20 digits.
    #[schema(pattern = "^[0-9]{6,20}$", min_length = 6, max_length = 20)]
    pub smartcard_number: String,
    #[schema(schema_with = schema::optional_phone)]
    pub phone: Option<Phone>,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "ikeja-electric", "amount": 5000, "meter_number": "45012345678", "meter_type": 1, "recipient_name": "Ada Obi", "reference": "order-power-0001"}))]
pub struct ElectricityIn {
    /// e.g. ikeja-electric (or UUID).
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// Naira, 1 000 to 500 000, at most 2 decimal places.
    #[schema(value_type = f64, minimum = 1000, maximum = 500000, multiple_of = 0.01, example = 5000)]
    pub amount: Kobo,
    /// 1 to 20 digits.
    #[schema(pattern = "^[0-9]{1,20}$", min_length = 1, max_length = 20)]
    pub meter_number: String,
    /// 1 prepaid, 2 postpaid.
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1, maximum = 2)]
    pub meter_type: u8,
    /// Default "Unknown Customer".
    pub recipient_name: Option<String>,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "waec", "quantity": 1, "phone": "08031234567", "reference": "order-exam-0001"}))]
pub struct EducationIn {
    /// waec, neco, nabteb or jamb (or UUID).
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1, maximum = 10)]
    pub quantity: u32,
    #[schema(schema_with = schema::optional_phone)]
    pub phone: Option<Phone>,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "bet9ja", "customer_id": "1234567", "amount": 1000, "reference": "order-bet-0001"}))]
pub struct BetIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    #[schema(schema_with = schema::customer_id)]
    pub customer_id: String,
    /// Naira, 100 to 500 000, at most 2 decimal places.
    #[schema(value_type = f64, minimum = 100, maximum = 500000, multiple_of = 0.01)]
    pub amount: Kobo,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

/// What was bought: `plan` for data and cable, `item` for the other products.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProductLabel {
    /// Data and cable purchases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Other purchases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
}

impl ProductLabel {
    pub fn new(product: Product, label: String) -> ProductLabel {
        match product.has_plan() {
            true => ProductLabel {
                plan: Some(label),
                item: None,
            },
            false => ProductLabel {
                plan: None,
                item: Some(label),
            },
        }
    }
}

/// Accepted live purchase (`data` of the envelope). Test calls answer `TestPurchaseOut`.
#[derive(Serialize, ToSchema)]
pub struct PurchaseAcceptedOut {
    pub status: bool,
    #[schema(example = "Transaction is processing")]
    pub message: &'static str,
    pub reference_code: String,
    pub reference: String,
    #[schema(value_type = f64)]
    pub balance_before: Kobo,
    #[schema(value_type = f64)]
    pub balance_after: Kobo,
    #[schema(value_type = f64)]
    pub amount: Kobo,
    #[serde(flatten)]
    pub label: ProductLabel,
    pub recipient: String,
    #[serde(flatten)]
    pub details: OrderDetails,
}

/// `data` of a test twin's purchase: what a live call would have deducted.
#[derive(Serialize, ToSchema)]
pub struct TestPurchaseOut {
    pub test_mode: bool,
    pub message: &'static str,
    /// The request body, echoed.
    pub request: Value,
    #[schema(value_type = f64)]
    pub would_deduct: Kobo,
    #[schema(value_type = f64)]
    pub balance: Kobo,
}

/// Send airtime to a Nigerian phone number.
#[utoipa::path(post, path = "/v1/airtime/purchase", tag = "purchases", request_body = AirtimeIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference")))]
pub async fn airtime(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<AirtimeIn>,
) -> Reply<PurchaseOut> {
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
        details: OrderDetails {
            phone: Some(req.phone.to_string()),
            ..Default::default()
        },
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Buy a data bundle; the price is the plan's.
#[utoipa::path(post, path = "/v1/data/purchase", tag = "purchases", request_body = DataIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, invalid_plan, insufficient_balance, duplicate_reference")))]
pub async fn data(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<DataIn>,
) -> Reply<PurchaseOut> {
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
        details: OrderDetails {
            phone: Some(req.phone.to_string()),
            plan_id: Some(plan.plan_id.clone()),
            duration: Some(plan.duration),
            ..Default::default()
        },
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Buy recharge e-pins; fetch them later with `GET /v1/epin/batch`.
#[utoipa::path(post, path = "/v1/epin/purchase", tag = "purchases", request_body = EpinIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, insufficient_balance, duplicate_reference")))]
pub async fn epin(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<EpinIn>,
) -> Reply<PurchaseOut> {
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
        details: OrderDetails {
            batch_id: Some(batch_id),
            denomination: Some(denomination.denomination),
            quantity: Some(count),
            ..Default::default()
        },
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
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, invalid_plan, insufficient_balance, duplicate_reference")))]
pub async fn cable(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<CableIn>,
) -> Reply<PurchaseOut> {
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
        details: OrderDetails {
            smartcard_number: Some(smartcard),
            phone: req.phone.as_ref().map(Phone::to_string),
            plan_id: Some(plan.plan_id.clone()),
            ..Default::default()
        },
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Buy an electricity token (prepaid) or pay a postpaid bill.
#[utoipa::path(post, path = "/v1/electricity/purchase", tag = "purchases", request_body = ElectricityIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference")))]
pub async fn electricity(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<ElectricityIn>,
) -> Reply<PurchaseOut> {
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
        details: OrderDetails {
            meter_number: Some(meter),
            meter_type: Some(meter_type),
            recipient_name: Some(recipient_name),
            ..Default::default()
        },
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Buy exam result-checker pins; the price is the provider's pin price.
#[utoipa::path(post, path = "/v1/education/purchase", tag = "purchases", request_body = EducationIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, insufficient_balance, duplicate_reference")))]
pub async fn education(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<EducationIn>,
) -> Reply<PurchaseOut> {
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
        details: OrderDetails {
            quantity: Some(count),
            phone: req.phone.as_ref().map(Phone::to_string),
            ..Default::default()
        },
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

/// Fund a betting wallet.
#[utoipa::path(post, path = "/v1/bet/purchase", tag = "purchases", request_body = BetIn,
    responses((status = 200, body = Envelope<PurchaseAcceptedOut>), (status = 422, description = "validation_error, invalid_provider, minimum_amount, maximum_amount, insufficient_balance, duplicate_reference")))]
pub async fn bet(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    caller: Caller,
    ApiJson { value: req, raw }: ApiJson<BetIn>,
) -> Reply<PurchaseOut> {
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
        details: OrderDetails {
            customer_id: Some(customer),
            ..Default::default()
        },
    };
    place(&state, caller, mode, req.reference, order, raw).await
}

#[cfg(test)]
mod tests {
    #[derive(serde::Deserialize)]
    struct Count {
        #[serde(deserialize_with = "super::whole_number")]
        n: u8,
    }

    fn count(json_number: &str) -> Result<u8, serde_json::Error> {
        serde_json::from_str::<Count>(&format!("{{\"n\": {json_number}}}")).map(|c| c.n)
    }

    #[test]
    fn whole_numbers_in_any_json_form() {
        for two in ["2", "2.0", "2e0", "0.2e1"] {
            assert_eq!(count(two).unwrap(), 2, "{two}");
        }
        for refused in ["2.5", "-1", "-1.0", "256", "1e300", "\"2\"", "null"] {
            assert!(count(refused).is_err(), "{refused}");
        }
    }
}
