//! `POST /v1/batches`, `GET /v1/batches/{reference}`, `GET /v1/batches` and
//! the `/test/batches` twin (issue 50, docs/bulk.md): many purchases sent at
//! once, each item a purchase body with its `product`, placed in order in the
//! background through the one purchase operation
//! (`billpay_operations::batches`). The whole request is refused, changing
//! nothing, only for its shape (not JSON, no items or more than 1 000, an
//! item without a known product or a valid reference, a reference twice);
//! anything else refuses one item alone.

use crate::envelope::{Envelope, Success};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, ApiQuery, Caller, json_bytes, parse_body};
use crate::routes::purchases::{
    AirtimeIn, BetIn, CableIn, DataIn, EducationIn, ElectricityIn, EpinIn,
};
use crate::schema;
use crate::state::AppState;
use axum::Json;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::StatusCode;
use billpay_domain::{Kobo, Product, PurchaseRequest, Reference};
use billpay_operations::batches::{ItemCheck, ItemReader, ItemSaid, ItemState, MAX_ITEMS, Refused};
use billpay_operations::purchases::PurchaseError;
use billpay_store::{Batch, BatchItem, BatchStatus, NewBatchItem};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::HashMap;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A batch's body may be this large (1 000 items of about 1 KiB).
pub const BATCH_BODY_LIMIT: usize = 1024 * 1024;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(create))
        .routes(routes!(list))
        .routes(routes!(show))
}

/// The test twin: `/test/batches`.
pub fn test_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::default().routes(routes!(check))
}

/// A batch of purchases.
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"reference": "staff-airtime-2026-06", "items": [
    {"product": "airtime", "provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": "staff-airtime-2026-06-001"},
    {"product": "data", "provider_id": "glo", "plan_id": "glo-1gb", "phone": "08051234567", "reference": "staff-airtime-2026-06-002"}]}))]
pub struct BatchIn {
    /// The batch's own reference, unique per account: the same batch sent
    /// again buys nothing more and is answered as it is.
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
    /// 1 to 1 000 purchases, placed in this order.
    #[schema(min_items = 1, max_items = 1000)]
    pub items: Vec<BatchItemIn>,
}

/// One purchase: `product` and the body of that product's purchase endpoint
/// (`AirtimeIn`, `DataIn`, `CableIn`, `ElectricityIn`, `EducationIn`,
/// `EpinIn`, `BetIn`), its own `reference` included. Its other fields are
/// checked when it is placed: a wrong one refuses this item alone.
#[derive(Deserialize, ToSchema)]
pub struct BatchItemIn {
    #[schema(value_type = String, pattern = "^(airtime|data|cable|electricity|education|epin|betting)$", example = "airtime")]
    pub product: Product,
    /// The purchase's reference: unique per account, like any purchase's.
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

/// A batch body: its parsed shape, and each item's text exactly as sent
/// (kept as the item's body, so no number is rounded on the way).
pub struct BatchBody {
    batch: BatchIn,
    items: Vec<NewBatchItem>,
}

/// The items' exact texts.
#[derive(Deserialize)]
struct RawItems<'a> {
    #[serde(borrow)]
    items: Vec<&'a RawValue>,
}

impl<S: Send + Sync> FromRequest<S> for BatchBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        let bytes = json_bytes(req, BATCH_BODY_LIMIT).await?;
        let ApiJson { value: batch, .. } = parse_body::<BatchIn>(&bytes)?;
        check_items(&batch.items)?;
        let raw: RawItems =
            serde_json::from_slice(&bytes).map_err(|e| ApiError::InvalidJson(e.to_string()))?;
        let items = batch
            .items
            .iter()
            .zip(raw.items)
            .map(|(item, text)| NewBatchItem {
                reference: item.reference.to_string(),
                product: item.product,
                body: text.get().to_owned(),
            })
            .collect();
        Ok(BatchBody { batch, items })
    }
}

/// 1 to [`MAX_ITEMS`] items, each reference once.
fn check_items(items: &[BatchItemIn]) -> Result<(), ApiError> {
    if items.is_empty() {
        return Err(ApiError::Validation("items: give at least one item".into()));
    }
    if items.len() > MAX_ITEMS {
        return Err(ApiError::Validation(format!(
            "items: at most {MAX_ITEMS} items in a batch, this one has {}",
            items.len()
        )));
    }
    let mut seen = HashMap::with_capacity(items.len());
    for (n, item) in items.iter().enumerate() {
        if let Some(first) = seen.insert(item.reference.as_str(), n) {
            return Err(ApiError::Validation(format!(
                "items[{n}].reference: is also the reference of items[{first}]"
            )));
        }
    }
    Ok(())
}

/// Where a batch is.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum BatchState {
    /// Its items are being placed, in order.
    Placing,
    /// Every item is placed or refused; some purchases are still processing.
    Fulfilling,
    /// Every item has its final outcome (the `batch.completed` webhook is sent).
    Completed,
}

impl From<BatchStatus> for BatchState {
    fn from(status: BatchStatus) -> Self {
        match status {
            BatchStatus::Placing => BatchState::Placing,
            BatchStatus::Fulfilling => BatchState::Fulfilling,
            BatchStatus::Completed => BatchState::Completed,
        }
    }
}

/// A batch and its items counted by outcome.
#[derive(Serialize, ToSchema)]
pub struct BatchSummaryOut {
    pub reference: String,
    pub batch_id: String,
    pub status: BatchState,
    /// RFC 3339.
    pub created_at: String,
    pub completed_at: Option<String>,
    pub counts: CountsOut,
    /// What the batch's purchases charged (Naira), failed ones refunded.
    #[schema(value_type = f64)]
    pub charged: Kobo,
}

/// A batch's items by outcome.
#[derive(Serialize, ToSchema)]
pub struct CountsOut {
    pub total: u32,
    /// Not placed yet.
    pub queued: u32,
    pub processing: u32,
    pub successful: u32,
    /// Failed at the supplier and refunded.
    pub failed: u32,
    /// Never placed (balance, a limit, a used reference, a wrong field): nothing charged.
    pub refused: u32,
}

impl From<&Batch> for BatchSummaryOut {
    fn from(batch: &Batch) -> Self {
        let counts = batch.counts;
        BatchSummaryOut {
            reference: batch.reference.clone(),
            batch_id: batch.id.clone(),
            status: batch.status.into(),
            created_at: batch.created_at.clone(),
            completed_at: batch.completed_at.clone(),
            counts: CountsOut {
                total: counts.items,
                queued: counts.queued,
                processing: counts.processing,
                successful: counts.successful,
                failed: counts.failed,
                refused: counts.refused,
            },
            charged: counts.charged,
        }
    }
}

/// A batch, its counts and its items in order.
#[derive(Serialize, ToSchema)]
pub struct BatchOut {
    #[serde(flatten)]
    pub batch: BatchSummaryOut,
    pub items: Vec<BatchItemOut>,
}

/// What became of an item.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ItemStatus {
    Queued,
    Processing,
    Successful,
    Failed,
    Refused,
}

/// One item and its outcome.
#[derive(Serialize, ToSchema)]
pub struct BatchItemOut {
    /// Its place in the batch, from 0.
    pub position: u32,
    pub reference: String,
    #[schema(value_type = String, example = "airtime")]
    pub product: Product,
    pub status: ItemStatus,
    /// Its purchase (`GET /v1/transaction/status?reference_code=…`), once placed.
    pub reference_code: Option<String>,
    /// What it charged (Naira), once placed; a failed one was refunded.
    #[schema(value_type = Option<f64>)]
    pub amount: Option<Kobo>,
    /// Refused: the error's slug (`insufficient_balance`, `limit_exceeded`,
    /// `duplicate_reference`, `validation_error`…).
    pub error: Option<String>,
    /// The purchase's message, or why it was refused.
    pub message: Option<String>,
}

impl From<ItemState> for ItemStatus {
    fn from(state: ItemState) -> Self {
        match state {
            ItemState::Queued => ItemStatus::Queued,
            ItemState::Processing => ItemStatus::Processing,
            ItemState::Successful => ItemStatus::Successful,
            ItemState::Failed => ItemStatus::Failed,
            ItemState::Refused => ItemStatus::Refused,
        }
    }
}

impl From<BatchItem> for BatchItemOut {
    fn from(item: BatchItem) -> Self {
        let said = ItemSaid::of(&item.outcome);
        BatchItemOut {
            position: item.position,
            reference: item.reference,
            product: item.product,
            status: said.state.into(),
            reference_code: said.code,
            amount: said.amount,
            error: said.error,
            message: said.message,
        }
    }
}

/// The batch with its items, in the envelope.
type BatchReply = ApiResult<(StatusCode, Json<Envelope<BatchOut>>)>;

fn answer(status: StatusCode, batch: &Batch, items: Vec<BatchItem>) -> BatchReply {
    let data = BatchOut {
        batch: batch.into(),
        items: items.into_iter().map(BatchItemOut::from).collect(),
    };
    let envelope = Envelope {
        code: status.as_u16(),
        status: Success::Success,
        data,
    };
    Ok((status, Json(envelope)))
}

/// Buy many things at once: up to 1 000 purchases, answered at once (202)
/// and placed in order in the background, each an ordinary purchase found by
/// its own reference. The same batch reference again answers the batch as it
/// is and buys nothing more. An item that does not fit the balance or a
/// limit, or whose reference is used, is refused alone; a failed one is
/// refunded. When every item has its outcome, the key's webhook receives
/// `batch.completed`, its body the `BatchCompleted` schema (docs/bulk.md).
#[utoipa::path(post, path = "/batches", tag = "batches", request_body = BatchIn,
    responses((status = 202, body = Envelope<BatchOut>, description = "Accepted: placed in the background; `GET /v1/batches/{reference}` follows it"),
        (status = 413, description = "payload_too_large: the body is over 1 MiB"),
        (status = 422, description = "validation_error: no items or more than 1 000, an item without a known product or a valid reference, a reference given twice")))]
pub async fn create(State(state): State<AppState>, caller: Caller, body: BatchBody) -> BatchReply {
    let reference = body.batch.reference.to_string();
    let (batch, _) = state
        .batches
        .create(&caller.buyer(), reference, body.items)
        .await?;
    let items = state
        .purchasing
        .store
        .batch_items(&batch.id)
        .await
        .map_err(PurchaseError::Store)?;
    answer(StatusCode::ACCEPTED, &batch, items)
}

/// A batch: its counts, what it charged and each item's outcome.
#[utoipa::path(get, path = "/batches/{reference}", tag = "batches",
    params(("reference" = String, Path, description = "The batch's reference")),
    responses((status = 200, body = Envelope<BatchOut>), (status = 404, description = "not_found: no batch of yours has this reference")))]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(reference): Path<String>,
) -> BatchReply {
    let found = state.batches.find(&caller.buyer(), &reference).await?;
    let Some((batch, items)) = found else {
        return Err(ApiError::NotFound(format!(
            "No batch has the reference '{reference}'"
        )));
    };
    answer(StatusCode::OK, &batch, items)
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// How many, newest first (default 20, at most 100).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

/// Your batches, newest first, each counted (without its items).
#[utoipa::path(get, path = "/batches", tag = "batches", params(ListQuery),
    responses((status = 200, body = Envelope<Vec<BatchSummaryOut>>)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> crate::envelope::Reply<Vec<BatchSummaryOut>> {
    let limit = query.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        let why = format!("limit: must be 1 to 100, not {limit}");
        return Err(ApiError::Validation(why));
    }
    let batches = state
        .purchasing
        .store
        .batches(caller.account_id, limit)
        .await
        .map_err(PurchaseError::Store)?;
    crate::envelope::ok(batches.iter().map(BatchSummaryOut::from).collect())
}

/// `data` of the test twin: each item checked, nothing deducted or recorded.
#[derive(Serialize, ToSchema)]
pub struct BatchCheckOut {
    pub test_mode: bool,
    pub message: &'static str,
    pub reference: String,
    /// What the items that fit would charge together (Naira).
    #[schema(value_type = f64)]
    pub would_deduct: Kobo,
    /// How many would be placed.
    pub fit: u32,
    /// How many would be refused.
    pub refused: u32,
    pub items: Vec<ItemCheckOut>,
}

/// One item checked.
#[derive(Serialize, ToSchema)]
pub struct ItemCheckOut {
    pub position: u32,
    pub reference: String,
    /// What it would charge (Naira), when it fits.
    #[schema(value_type = Option<f64>)]
    pub would_deduct: Option<Kobo>,
    /// What the recipient would get (Naira), when it fits.
    #[schema(value_type = Option<f64>)]
    pub face_value: Option<Kobo>,
    /// Why it would be refused: the error's slug (the running total past the
    /// balance is `insufficient_balance`).
    pub error: Option<String>,
    pub message: Option<String>,
}

/// Checks every item as its purchase would be checked, in order, and the
/// running total against the balance; nothing is deducted or recorded.
#[utoipa::path(post, path = "/batches", tag = "batches", request_body = BatchIn,
    responses((status = 200, body = Envelope<BatchCheckOut>),
        (status = 413, description = "payload_too_large: the body is over 1 MiB"),
        (status = 422, description = "validation_error: no items or more than 1 000, an item without a known product or a valid reference, a reference given twice")))]
pub async fn check(
    State(state): State<AppState>,
    caller: Caller,
    body: BatchBody,
) -> crate::envelope::Reply<BatchCheckOut> {
    let checks = state.batches.check(&caller.buyer(), &body.items).await;
    let mut out = BatchCheckOut {
        test_mode: true,
        message: "Test mode: nothing was deducted, recorded or sent",
        reference: body.batch.reference.to_string(),
        would_deduct: Kobo(0),
        fit: 0,
        refused: 0,
        items: Vec::with_capacity(checks.len()),
    };
    for (position, (item, check)) in body.items.iter().zip(checks).enumerate() {
        let (would_deduct, face_value, error, message) = match check {
            ItemCheck::Fits(fits) => {
                out.fit += 1;
                out.would_deduct = Kobo(out.would_deduct.0 + fits.would_deduct.0);
                (Some(fits.would_deduct), Some(fits.face_value), None, None)
            }
            ItemCheck::Refused(Refused { error, message }) => {
                out.refused += 1;
                (None, None, Some(error), Some(message))
            }
        };
        out.items.push(ItemCheckOut {
            position: position as u32,
            reference: item.reference.clone(),
            would_deduct,
            face_value,
            error,
            message,
        });
    }
    crate::envelope::ok(out)
}

/// The API's reading of a batch item (the purchase endpoints' own body
/// types and rules) and of a refusal (the contract's slugs), for the batch
/// runner.
pub struct ApiItems;

impl ItemReader for ApiItems {
    fn request(&self, product: Product, body: &str) -> Result<PurchaseRequest, Refused> {
        let body = body.as_bytes();
        match product {
            Product::Airtime => read::<AirtimeIn>(body),
            Product::Data => read::<DataIn>(body),
            Product::Epin => read::<EpinIn>(body),
            Product::Cable => read::<CableIn>(body),
            Product::Electricity => read::<ElectricityIn>(body),
            Product::Education => read::<EducationIn>(body),
            Product::Betting => read::<BetIn>(body),
        }
        .map_err(refused)
    }

    fn refused(&self, error: PurchaseError) -> Refused {
        refused(error.into())
    }
}

/// A purchase body, read as its endpoint reads it.
fn read<In: DeserializeOwned>(body: &[u8]) -> Result<PurchaseRequest, ApiError>
where
    PurchaseRequest: TryFrom<In, Error = ApiError>,
{
    let ApiJson { value, .. } = parse_body::<In>(body)?;
    PurchaseRequest::try_from(value)
}

fn refused(error: ApiError) -> Refused {
    Refused {
        error: error.slug().to_owned(),
        message: error.to_string(),
    }
}
