//! Request extractors that answer in the contract's envelope: JSON bodies
//! (415, 413, 400, 422 with the field named) and the authenticated caller.

use crate::error::ApiError;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use billpay_domain::{AccountId, KeyId};
use serde::de::DeserializeOwned;

/// Bodies over this are refused with 413.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A JSON body parsed into `T`, keeping the raw value (test mode echoes it).
pub struct ApiJson<T> {
    pub value: T,
    pub raw: serde_json::Value,
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
        if !is_json {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = axum::body::to_bytes(req.into_body(), BODY_LIMIT)
            .await
            .map_err(|_| ApiError::PayloadTooLarge)?;
        let raw: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| ApiError::InvalidJson(e.to_string()))?;
        if !raw.is_object() {
            return Err(ApiError::Validation("body must be a JSON object".into()));
        }
        let value = serde_path_to_error::deserialize(&raw).map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner().to_string();
            ApiError::Validation(describe(&field, &inner))
        })?;
        Ok(ApiJson { value, raw })
    }
}

/// `amount: must have at most 2 decimal places`, `phone: missing`, …
fn describe(field: &str, serde_message: &str) -> String {
    if let Some(name) = serde_message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        return format!("{name}: is required");
    }
    let message = serde_message
        .split(" at line ")
        .next()
        .unwrap_or(serde_message);
    if field == "." {
        message.to_owned()
    } else {
        format!("{field}: {message}")
    }
}

/// The authenticated API key and its account, set by the auth middleware.
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub account_id: AccountId,
    pub key_id: KeyId,
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Caller>()
            .copied()
            .ok_or(ApiError::MissingApiKey)
    }
}

/// Query strings parsed into `T`; a bad one is a 422 naming the problem.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| ApiQuery(q.0))
            .map_err(|e| {
                ApiError::Validation(
                    e.body_text()
                        .replace("Failed to deserialize query string: ", "query: "),
                )
            })
    }
}
