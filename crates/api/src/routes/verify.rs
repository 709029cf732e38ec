//! Verification of a smartcard, meter or betting account. The only handlers
//! that call a supplier inline (the first of the product's route, with its
//! own codes for the provider); their `/test` twins answer from the sandbox
//! rules without calling anyone.

use crate::envelope::{Envelope, Reply, ok};
use crate::error::ApiError;
use crate::extract::whole_number;
use crate::extract::{ApiJson, Caller};
use crate::routes::purchases::Mode;
use crate::schema;
use crate::state::AppState;
use axum::Extension;
use axum::extract::State;
use billpay_domain::{CustomerId, MeterNumber, MeterType, Product, SmartcardNumber};
use billpay_supplier::sandbox::SandboxSupplier;
use billpay_supplier::{SupplierCodes, Verification, VerifyRequest};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router(mode: Mode) -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(cable))
        .routes(routes!(electricity))
        .routes(routes!(bet))
        .layer(Extension(mode))
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "dstv", "smartcard_number": "7012345678"}))]
pub struct CableVerifyIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// 6 to 20 digits.
    #[schema(pattern = "^[0-9]{6,20}$", min_length = 6, max_length = 20)]
    pub smartcard_number: String,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "ikeja-electric", "meter_number": "45012345678", "meter_type": 1}))]
pub struct ElectricityVerifyIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// 1 to 20 digits.
    #[schema(pattern = "^[0-9]{1,20}$", min_length = 1, max_length = 20)]
    pub meter_number: String,
    /// 1 prepaid, 2 postpaid.
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1, maximum = 2)]
    pub meter_type: u8,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "bet9ja", "customer_id": "1234567"}))]
pub struct BetVerifyIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    #[schema(schema_with = schema::customer_id)]
    pub customer_id: String,
}

/// `data` of a verification; the number verified is under its own field name.
#[derive(Default, Serialize, ToSchema)]
pub struct VerificationOut {
    pub customer_name: String,
    pub provider: String,
    /// Cable only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smartcard_number: Option<String>,
    /// Electricity only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meter_number: Option<String>,
    /// Betting only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<String>,
    /// Electricity only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Electricity only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meter_type: Option<u8>,
    /// Test calls only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_mode: Option<bool>,
}

async fn run(
    state: &AppState,
    mode: Mode,
    request: VerifyRequest,
    what: &'static str,
) -> Reply<VerificationOut> {
    let answer = match mode {
        Mode::Test => SandboxSupplier::verify_now(&request),
        // the purchase operation's verification (the shop's too); too slow: 503
        Mode::Live => state.purchasing.ask_supplier(&request).await?,
    };
    // a cable subscriber's current bouquet is the shop's (no API field)
    let Verification::Found {
        customer_name,
        address,
        ..
    } = answer
    else {
        return Err(ApiError::CustomerNotFound(what));
    };
    let number = Some(request.number);
    let mut data = VerificationOut {
        customer_name,
        provider: request.provider,
        test_mode: (mode == Mode::Test).then_some(true),
        ..Default::default()
    };
    match request.product {
        Product::Electricity => {
            data.meter_number = number;
            data.meter_type = request.meter_type;
            data.address = address;
        }
        Product::Cable => data.smartcard_number = number,
        _ => data.customer_id = number,
    }
    ok(data)
}

/// Verify a cable TV smartcard.
#[utoipa::path(post, path = "/cable/verify", tag = "verification", operation_id = "verify_cable", request_body = CableVerifyIn,
    responses((status = 200, body = Envelope<VerificationOut>), (status = 422, description = "validation_error, invalid_provider, customer_not_found"), (status = 503, description = "supplier_unavailable")))]
pub async fn cable(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    _caller: Caller,
    ApiJson { value: req, .. }: ApiJson<CableVerifyIn>,
) -> Reply<VerificationOut> {
    let number = SmartcardNumber::parse(&req.smartcard_number)?.into();
    let catalogue = state.purchasing.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Cable)?;
    let request = VerifyRequest {
        product: Product::Cable,
        provider: provider.slug.clone(),
        codes: SupplierCodes::new(),
        number,
        meter_type: None,
    };
    run(&state, mode, request, "smartcard").await
}

/// Verify an electricity meter.
#[utoipa::path(post, path = "/electricity/verify", tag = "verification", operation_id = "verify_electricity", request_body = ElectricityVerifyIn,
    responses((status = 200, body = Envelope<VerificationOut>), (status = 422, description = "validation_error, invalid_provider, customer_not_found"), (status = 503, description = "supplier_unavailable")))]
pub async fn electricity(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    _caller: Caller,
    ApiJson { value: req, .. }: ApiJson<ElectricityVerifyIn>,
) -> Reply<VerificationOut> {
    let number = MeterNumber::parse(&req.meter_number)?.into();
    let meter_type = MeterType::parse(req.meter_type)?.code();
    let catalogue = state.purchasing.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Electricity)?;
    let request = VerifyRequest {
        product: Product::Electricity,
        provider: provider.slug.clone(),
        codes: SupplierCodes::new(),
        number,
        meter_type: Some(meter_type),
    };
    run(&state, mode, request, "meter").await
}

/// Verify a betting account.
#[utoipa::path(post, path = "/bet/verify", tag = "verification", operation_id = "verify_bet", request_body = BetVerifyIn,
    responses((status = 200, body = Envelope<VerificationOut>), (status = 422, description = "validation_error, invalid_provider, customer_not_found"), (status = 503, description = "supplier_unavailable")))]
pub async fn bet(
    State(state): State<AppState>,
    Extension(mode): Extension<Mode>,
    _caller: Caller,
    ApiJson { value: req, .. }: ApiJson<BetVerifyIn>,
) -> Reply<VerificationOut> {
    let number = CustomerId::parse(&req.customer_id)?.into();
    let catalogue = state.purchasing.catalogue.get().await?;
    let provider = catalogue.provider_for(&req.provider_id, Product::Betting)?;
    let request = VerifyRequest {
        product: Product::Betting,
        provider: provider.slug.clone(),
        codes: SupplierCodes::new(),
        number,
        meter_type: None,
    };
    run(&state, mode, request, "betting customer").await
}
