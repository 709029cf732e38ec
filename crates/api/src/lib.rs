//! The HTTP API: axum routes under `/v1`, the error envelope, auth and rate
//! limiting, the OpenAPI document at `/openapi.json` and its Swagger UI page at
//! `/docs` (assets compiled into the binary: it works offline).
//!
//! Request flow: auth middleware (key → caller admitted by the purchase
//! operation, `billpay_operations::purchases::Purchasing::admit`: the key's
//! status, then its rate budget) → extractor
//! (JSON into typed, validated fields) → handler (catalogue lookups, one store
//! call) → envelope. Handlers never call the supplier for a purchase; only the
//! verification endpoints call it inline.

pub mod auth;
mod body;
pub mod envelope;
pub mod error;
pub mod extract;
pub mod key_cache;
pub mod openapi;
pub mod routes;
pub mod schema;
pub mod state;

pub use state::AppState;

use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router, middleware};
use error::ApiError;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;
use utoipa_swagger_ui::{self as swagger_ui, SwaggerUi};

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    let (v1, v1_paths) = routes::v1().split_for_parts();
    // Serialized once: the document of exactly the routes served.
    let document = serde_json::to_vec(&openapi::document_of(v1_paths)).expect("plain data");
    let document = (
        [(header::CONTENT_TYPE, "application/json")],
        Bytes::from(document),
    );
    let v1 = v1.fallback(not_found).layer(middleware::from_fn_with_state(
        state.clone(),
        auth::authenticate,
    ));
    Router::new()
        .nest("/v1", v1)
        .route("/openapi.json", get(move || async move { document }))
        .merge(docs())
        .route(
            "/health",
            get(|| async { Json(serde_json::json!({"status": "ok"})) }),
        )
        .route("/", get(index))
        .fallback(not_found)
        .layer(middleware::map_response(envelope::ensure_json_errors))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::Internal("handler panicked".into()).into_response()
        }))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Swagger UI at `/docs`, with headers it still works under: its own
/// scripts only, inline styles (React sets them), same-origin requests (its
/// "try it out"), and never framed.
fn docs() -> Router<AppState> {
    const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; font-src 'self' data:; connect-src 'self'; \
         frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
    let swagger = SwaggerUi::new("/docs").config(swagger_ui::Config::from("/openapi.json"));
    Router::from(swagger).layer(middleware::map_response(
        |mut response: Response| async move {
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CSP),
            );
            headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
            headers.insert(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            );
            headers.insert(
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            );
            response
        },
    ))
}

/// `GET /`: where to go. A browser gets a page of links; a client, the
/// same links as JSON in the envelope.
async fn index(headers: axum::http::HeaderMap) -> Response {
    const LINKS: [(&str, &str, &str); 4] = [
        ("docs", "/docs", "API documentation (Swagger UI)"),
        ("openapi", "/openapi.json", "OpenAPI document"),
        ("dashboard", "/dashboard", "Customer dashboard"),
        (
            "api",
            "/v1",
            "The API (an API key as Authorization: Bearer)",
        ),
    ];
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    if !wants_html {
        let data: serde_json::Map<String, serde_json::Value> = LINKS
            .iter()
            .map(|(name, path, _)| ((*name).to_owned(), (*path).into()))
            .collect();
        return Json(serde_json::json!({"code": 200, "status": "success", "data": data}))
            .into_response();
    }
    let items: String = LINKS
        .iter()
        .map(|(_, path, label)| format!("<li><a href=\"{path}\">{label}</a></li>"))
        .collect();
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>billpay</title></head><body><h1>billpay</h1><ul>{items}</ul></body></html>"
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::X_FRAME_OPTIONS, "DENY"),
        ],
        page,
    )
        .into_response()
}

async fn not_found() -> Response {
    ApiError::NotFound("No such endpoint".into()).into_response()
}
