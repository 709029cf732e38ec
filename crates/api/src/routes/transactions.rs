//! `GET /v1/transaction/status` and `GET /v1/epin/batch`. Another account's
//! transaction is indistinguishable from a missing one (404).

use crate::envelope::{Envelope, Reply, ok};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiQuery, Caller};
use crate::routes::purchases::ProductLabel;
use crate::state::AppState;
use axum::extract::State;
use billpay_domain::{EpinCard, Kobo, Product, TxStatus};
use billpay_store::{Transaction, TxLookup};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AnyOfBuilder, ObjectBuilder, Schema, Type};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(status))
        .routes(routes!(epin_batch))
}

#[derive(Deserialize)]
pub struct StatusQuery {
    pub reference_code: Option<String>,
    pub reference: Option<String>,
}

#[derive(Deserialize)]
pub struct BatchQuery {
    pub batch_id: Option<String>,
}

/// The status lookup's query: `reference_code` or `reference`, at least one.
/// OpenAPI states such an either-or as one exploded object parameter whose
/// schema is an `anyOf`.
pub struct StatusLookup;

impl utoipa::PartialSchema for StatusLookup {
    fn schema() -> RefOr<Schema> {
        let by = |field: &str, description: &str| {
            ObjectBuilder::new()
                .property(
                    field,
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .min_length(Some(1)),
                )
                .required(field)
                .description(Some(description))
        };
        AnyOfBuilder::new()
            .item(by(
                "reference_code",
                "The service's reference (from the accepted response or webhook)",
            ))
            .item(by("reference", "Your own reference"))
            .into()
    }
}

impl ToSchema for StatusLookup {}

#[derive(Serialize, ToSchema)]
pub struct TransactionStatusOut {
    pub reference_code: String,
    pub reference: String,
    #[schema(example = "electricity.purchase")]
    pub event: &'static str,
    /// processing, successful or failed.
    #[schema(value_type = String, example = "successful")]
    pub status: TxStatus,
    pub message: String,
    /// What was charged (Naira): `balance_before − balance_after`.
    #[schema(value_type = f64)]
    pub amount: Kobo,
    /// What the recipient gets (Naira): the airtime, token, pin or wallet
    /// value, or the plan's list price. Differs from `amount` when the
    /// account's price tier discounts it or adds a fee.
    #[schema(value_type = f64)]
    pub face_value: Kobo,
    pub recipient: String,
    #[serde(flatten)]
    pub label: ProductLabel,
    /// Electricity token or exam pins, once generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    /// Electricity: units (kWh) of the token, once generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<f64>,
    /// E-pins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    #[schema(value_type = f64)]
    pub balance_before: Kobo,
    #[schema(value_type = f64)]
    pub balance_after: Kobo,
    pub created_at: String,
    /// Null while processing.
    pub completed_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct EpinOut {
    pub serial: String,
    pub pin: String,
    /// YYYY-MM-DD.
    pub expires_on: String,
}

impl From<&EpinCard> for EpinOut {
    fn from(card: &EpinCard) -> EpinOut {
        EpinOut {
            serial: card.serial.clone(),
            pin: card.pin.clone(),
            expires_on: card.expires_on.clone(),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct EpinBatchOut {
    pub batch_id: String,
    #[schema(value_type = String, example = "successful")]
    pub status: TxStatus,
    pub provider: String,
    #[schema(value_type = f64)]
    pub denomination: Kobo,
    pub quantity: i64,
    /// Empty until the batch is successful.
    pub pins: Vec<EpinOut>,
}

/// The status record of a transaction (contract "Transaction status").
pub fn status_view(tx: Transaction) -> ApiResult<TransactionStatusOut> {
    let delivery = tx.delivery()?;
    let pin = delivery.pin.filter(|_| tx.product.delivers_pin());
    let units = delivery
        .units
        .filter(|_| tx.product == Product::Electricity);
    let batch_id = match tx.product {
        Product::Epin => tx.details.batch_id.clone(),
        _ => None,
    };
    Ok(TransactionStatusOut {
        event: tx.product.event(),
        label: ProductLabel::new(tx.product, tx.label),
        reference_code: tx.code,
        reference: tx.reference,
        status: tx.status,
        message: tx.message,
        amount: tx.amount,
        face_value: tx.face_value,
        recipient: tx.recipient,
        pin,
        units,
        batch_id,
        balance_before: tx.balance_before,
        balance_after: tx.balance_after,
        created_at: tx.created_at,
        completed_at: tx.completed_at,
    })
}

/// Status of a purchase by `reference_code` (or the client's `reference`).
#[utoipa::path(get, path = "/transaction/status", tag = "transactions",
    params(("lookup" = StatusLookup, Query, style = Form, explode,
        description = "`reference_code` (the service's) or `reference` (yours)")),
    responses((status = 200, body = Envelope<TransactionStatusOut>), (status = 404, description = "not_found")))]
pub async fn status(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<StatusQuery>,
) -> Reply<TransactionStatusOut> {
    let lookup = match (query.reference_code, query.reference) {
        (Some(code), _) if !code.is_empty() => TxLookup::Code(code),
        (_, Some(reference)) if !reference.is_empty() => TxLookup::Reference(reference),
        _ => {
            return Err(ApiError::Validation(
                "reference_code: is required (or reference)".into(),
            ));
        }
    };
    let tx = state
        .purchasing
        .store
        .transaction(Some(caller.account_id), lookup)
        .await?
        .ok_or_else(|| ApiError::NotFound("Transaction not found".into()))?;
    ok(status_view(tx)?)
}

/// The e-pins of a batch (empty until the batch is successful).
#[utoipa::path(get, path = "/epin/batch", tag = "transactions",
    params(("batch_id" = String, Query, min_length = 1, description = "From the accepted e-pin purchase")),
    responses((status = 200, body = Envelope<EpinBatchOut>), (status = 404, description = "not_found")))]
pub async fn epin_batch(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<BatchQuery>,
) -> Reply<EpinBatchOut> {
    let batch_id = query
        .batch_id
        .filter(|b| !b.is_empty())
        .ok_or_else(|| ApiError::Validation("batch_id: is required".into()))?;
    let tx = state
        .purchasing
        .store
        .transaction(Some(caller.account_id), TxLookup::BatchId(batch_id))
        .await?
        .ok_or_else(|| ApiError::NotFound("Batch not found".into()))?;
    ok(batch_view(tx)?)
}

fn batch_view(tx: Transaction) -> ApiResult<EpinBatchOut> {
    let pins = match tx.status {
        TxStatus::Successful => tx.delivery()?.cards().map(EpinOut::from).collect(),
        _ => Vec::new(),
    };
    let details = tx.details;
    Ok(EpinBatchOut {
        batch_id: details.batch_id.unwrap_or_default(),
        status: tx.status,
        provider: tx.provider,
        denomination: details.denomination.unwrap_or_default(),
        quantity: details.quantity.unwrap_or_default(),
        pins,
    })
}
