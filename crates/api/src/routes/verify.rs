//! Verification of a smartcard, meter or betting account. The only handlers
//! that call the supplier inline; their `/test` twins answer from the sandbox
//! rules without calling anyone.

use crate::envelope::ok;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, Caller};
use crate::routes::purchases::{Mode, customer_id, digits, meter_type};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::post;
use axum::{Extension, Json, Router};
use billpay_domain::Product;
use billpay_supplier::sandbox::SandboxSupplier;
use billpay_supplier::{Verification, VerifyRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::Duration;
use utoipa::ToSchema;

/// A verification that takes longer than this is answered 503.
const SUPPLIER_TIMEOUT: Duration = Duration::from_secs(15);

pub fn router(mode: Mode) -> Router<AppState> {
    Router::new()
        .route("/cable/verify", post(cable))
        .route("/electricity/verify", post(electricity))
        .route("/bet/verify", post(bet))
        .layer(Extension(mode))
}

#[derive(Deserialize, ToSchema)]
pub struct CableVerifyIn {
    pub provider_id: String,
    /// 6 to 20 digits.
    pub smartcard_number: String,
}

#[derive(Deserialize, ToSchema)]
pub struct ElectricityVerifyIn {
    pub provider_id: String,
    /// 1 to 20 digits.
    pub meter_number: String,
    /// 1 prepaid, 2 postpaid.
    pub meter_type: u8,
}

#[derive(Deserialize, ToSchema)]
pub struct BetVerifyIn {
    pub provider_id: String,
    /// 1 to 40 characters.
    pub customer_id: String,
}

/// `data` of a verification; the number verified is under its own field name.
#[derive(Serialize, ToSchema)]
pub struct VerificationOut {
    pub customer_name: String,
    pub provider: String,
    /// Electricity only.
    pub address: Option<String>,
    /// Electricity only.
    pub meter_type: Option<u8>,
    /// Test calls only.
    pub test_mode: Option<bool>,
}

async fn run(
    state: &AppState,
    mode: Mode,
    request: VerifyRequest,
    number_field: &'static str,
    what: &'static str,
) -> ApiResult<Json<Value>> {
    let answer = match mode {
        Mode::Test => SandboxSupplier::verify_now(&request),
        Mode::Live => tokio::time::timeout(SUPPLIER_TIMEOUT, state.supplier.verify(&request))
            .await
            .map_err(|_| ApiError::SupplierUnavailable)?
            .map_err(|e| {
                tracing::warn!(error = %e, "verification failed at the supplier");
                ApiError::SupplierUnavailable
            })?,
    };
    let Verification::Found {
        customer_name,
        address,
    } = answer
    else {
        return Err(ApiError::CustomerNotFound(what));
    };
    let mut data = json!({ "customer_name": customer_name, number_field: request.number, "provider": request.provider });
    if let Some(meter_type) = request.meter_type {
        data["meter_type"] = json!(meter_type);
        data["address"] = json!(address);
    }
    if mode == Mode::Test {
        data["test_mode"] = json!(true);
    }
    Ok(ok(data))
}

/// Verify a cable TV smartcard.
#[utoipa::path(post, path = "/v1/cable/verify", tag = "verification", request_body = CableVerifyIn,
    responses((status = 200, body = VerificationOut), (status = 422, description = "validation_error, invalid_provider, customer_not_found"), (status = 503, description = "supplier_unavailable")))]
pub async fn cable(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    _caller: Caller,
    ApiJson { value: req, .. }: ApiJson<CableVerifyIn>,
) -> ApiResult<Json<Value>> {
    let number = digits("smartcard_number", &req.smartcard_number, 6, 20)?;
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Cable)?;
    let request = VerifyRequest {
        product: Product::Cable,
        provider: provider.slug.clone(),
        number,
        meter_type: None,
    };
    run(&state, mode, request, "smartcard_number", "smartcard").await
}

/// Verify an electricity meter.
#[utoipa::path(post, path = "/v1/electricity/verify", tag = "verification", request_body = ElectricityVerifyIn,
    responses((status = 200, body = VerificationOut), (status = 422, description = "validation_error, invalid_provider, customer_not_found"), (status = 503, description = "supplier_unavailable")))]
pub async fn electricity(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    _caller: Caller,
    ApiJson { value: req, .. }: ApiJson<ElectricityVerifyIn>,
) -> ApiResult<Json<Value>> {
    let number = digits("meter_number", &req.meter_number, 1, 20)?;
    let meter_type = meter_type(req.meter_type)?;
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Electricity)?;
    let request = VerifyRequest {
        product: Product::Electricity,
        provider: provider.slug.clone(),
        number,
        meter_type: Some(meter_type),
    };
    run(&state, mode, request, "meter_number", "meter").await
}

/// Verify a betting account.
#[utoipa::path(post, path = "/v1/bet/verify", tag = "verification", request_body = BetVerifyIn,
    responses((status = 200, body = VerificationOut), (status = 422, description = "validation_error, invalid_provider, customer_not_found"), (status = 503, description = "supplier_unavailable")))]
pub async fn bet(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    _caller: Caller,
    ApiJson { value: req, .. }: ApiJson<BetVerifyIn>,
) -> ApiResult<Json<Value>> {
    let number = customer_id(&req.customer_id)?;
    let catalogue = state.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Betting)?;
    let request = VerifyRequest {
        product: Product::Betting,
        provider: provider.slug.clone(),
        number,
        meter_type: None,
    };
    run(&state, mode, request, "customer_id", "betting customer").await
}
