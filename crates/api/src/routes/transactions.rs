//! `GET /v1/transaction/status` and `GET /v1/epin/batch`. Another account's
//! transaction is indistinguishable from a missing one (404).

use crate::envelope::ok;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiQuery, Caller};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use billpay_domain::{Product, TxStatus};
use billpay_store::{Transaction, TxLookup};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/transaction/status", get(status))
        .route("/epin/batch", get(epin_batch))
}

#[derive(Deserialize, IntoParams)]
pub struct StatusQuery {
    /// The service's reference (from the accepted response or webhook).
    pub reference_code: Option<String>,
    /// Or the client's own reference.
    pub reference: Option<String>,
}

#[derive(Deserialize, IntoParams)]
pub struct BatchQuery {
    pub batch_id: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct TransactionStatusOut {
    pub reference_code: String,
    pub reference: String,
    pub event: String,
    /// processing, successful or failed.
    pub status: String,
    pub message: String,
    pub amount: f64,
    pub recipient: String,
    pub plan: Option<String>,
    pub item: Option<String>,
    /// Electricity token or exam pins, once generated.
    pub pin: Option<String>,
    /// E-pins only.
    pub batch_id: Option<String>,
    pub balance_before: f64,
    pub balance_after: f64,
    pub created_at: String,
    pub completed_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct EpinOut {
    pub serial: String,
    pub pin: String,
    /// YYYY-MM-DD.
    pub expires_on: String,
}

#[derive(Serialize, ToSchema)]
pub struct EpinBatchOut {
    pub batch_id: String,
    pub status: String,
    pub provider: String,
    pub denomination: f64,
    pub quantity: u32,
    /// Empty until the batch is successful.
    pub pins: Vec<EpinOut>,
}

/// The status record of a transaction (contract "Transaction status").
pub fn status_view(tx: &Transaction) -> Value {
    let mut data = json!({
        "reference_code": tx.code,
        "reference": tx.reference,
        "event": tx.product.event(),
        "status": tx.status,
        "message": tx.message,
        "amount": tx.amount,
        "recipient": tx.recipient,
        "balance_before": tx.balance_before,
        "balance_after": tx.balance_after,
        "created_at": tx.created_at,
        "completed_at": tx.completed_at,
    });
    data[tx.product.label_field()] = json!(tx.label);
    if tx.product.delivers_pin() {
        data["pin"] = tx.result.get("pin").cloned().unwrap_or(Value::Null);
    }
    if tx.product == Product::Electricity
        && let Some(units) = tx.result.get("units")
    {
        data["units"] = units.clone();
    }
    if tx.product == Product::Epin {
        data["batch_id"] = tx.details.get("batch_id").cloned().unwrap_or(Value::Null);
    }
    data
}

/// Status of a purchase by `reference_code` (or the client's `reference`).
#[utoipa::path(get, path = "/v1/transaction/status", tag = "transactions", params(StatusQuery),
    responses((status = 200, body = TransactionStatusOut), (status = 404, description = "not_found"), (status = 422, description = "validation_error")))]
pub async fn status(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<StatusQuery>,
) -> ApiResult<Json<Value>> {
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
        .store
        .transaction(Some(caller.account_id), lookup)
        .await?
        .ok_or_else(|| ApiError::NotFound("Transaction not found".into()))?;
    Ok(ok(status_view(&tx)))
}

/// The e-pins of a batch (empty until the batch is successful).
#[utoipa::path(get, path = "/v1/epin/batch", tag = "transactions", params(BatchQuery),
    responses((status = 200, body = EpinBatchOut), (status = 404, description = "not_found"), (status = 422, description = "validation_error")))]
pub async fn epin_batch(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<BatchQuery>,
) -> ApiResult<Json<Value>> {
    let batch_id = query
        .batch_id
        .filter(|b| !b.is_empty())
        .ok_or_else(|| ApiError::Validation("batch_id: is required".into()))?;
    let tx = state
        .store
        .transaction(Some(caller.account_id), TxLookup::BatchId(batch_id))
        .await?
        .ok_or_else(|| ApiError::NotFound("Batch not found".into()))?;
    let pins = match tx.status {
        TxStatus::Successful => tx.result.get("pins").cloned().unwrap_or(json!([])),
        _ => json!([]),
    };
    Ok(ok(json!({
        "batch_id": tx.details.get("batch_id"),
        "status": tx.status,
        "provider": tx.provider,
        "denomination": tx.details.get("denomination"),
        "quantity": tx.details.get("quantity"),
        "pins": pins,
    })))
}
