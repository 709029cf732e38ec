//! The two shapes every `/v1` answer takes: the success envelope
//! `{"code": 200, "status": "success", "data": …}` (typed: the OpenAPI
//! document is generated from these same types) and the error envelope
//! `{"code", "status": "error", "message", "error"}`; plus the layer that turns
//! any error response not made by us into the error envelope.

use crate::error::{ApiError, ApiResult};
use axum::Json;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// A successful answer: `data` is the endpoint's own type.
#[derive(Debug, Serialize, ToSchema)]
pub struct Envelope<T> {
    /// 200; 202 for a batch accepted to be placed in the background.
    #[schema(minimum = 200, maximum = 202)]
    pub code: u16,
    pub status: Success,
    pub data: T,
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Success {
    Success,
}

/// Every error: `code` is the HTTP status, `error` a stable slug, `message` for people.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    #[schema(minimum = 400, maximum = 599)]
    pub code: u16,
    pub status: Failure,
    pub message: String,
    /// e.g. validation_error, invalid_provider, insufficient_balance, rate_limited.
    pub error: &'static str,
    /// `duplicate_reference` only: the `reference_code` of the transaction
    /// that already has this reference (`GET /v1/transaction/status?reference_code=…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_code: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Failure {
    Error,
}

/// What a handler returns: the envelope around its typed `data`, or an error.
pub type Reply<T> = ApiResult<Json<Envelope<T>>>;

pub fn ok<T: Serialize>(data: T) -> Reply<T> {
    Ok(Json(Envelope {
        code: 200,
        status: Success::Success,
        data,
    }))
}

/// Errors from axum itself (405, rejected bodies…) arrive as plain text or empty:
/// rewrite them so a client never sees anything but the JSON envelope.
pub async fn ensure_json_errors(response: Response) -> Response {
    let is_error = response.status().is_client_error() || response.status().is_server_error();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !is_error || is_json {
        return response;
    }
    let mut rewritten = ApiError::from_status(response.status()).into_response();
    // Keep rate-limit headers and the like.
    for (name, value) in response.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rewritten.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rewritten
}
