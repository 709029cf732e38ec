//! The success envelope `{"code": 200, "status": "success", "data": …}`, and
//! the layer that turns any error response not made by us into the error envelope.

use crate::error::ApiError;
use axum::Json;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;

pub fn ok<T: Serialize>(data: T) -> Json<serde_json::Value> {
    Json(json!({ "code": 200, "status": "success", "data": data }))
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
