//! The account dashboard under `/dashboard`: sign-in, API keys, webhooks,
//! transactions and the wallet statement, as server-rendered pages.
//!
//! Sessions live in an HttpOnly cookie holding a random token; only its hash
//! is stored. Every form carries a CSRF proof derived from the session token.
//! Pages read and write through the same [`Store`](billpay_store::Store) as the API.

mod chart;
mod format;
mod pages;
mod session;

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use billpay_domain::sealed::SecretBox;
use billpay_store::SharedStore;
use billpay_webhooks::{DeliveryClient, DeliveryConfig};
use std::sync::Arc;

pub use session::LoginThrottle;

#[derive(Clone)]
pub struct DashboardState {
    pub store: SharedStore,
    pub secrets: SecretBox,
    pub webhooks: Arc<DeliveryClient>,
    pub throttle: Arc<LoginThrottle>,
}

impl DashboardState {
    pub fn new(store: SharedStore, secrets: SecretBox, webhook_config: DeliveryConfig) -> Self {
        Self {
            store,
            secrets,
            webhooks: Arc::new(DeliveryClient::new(webhook_config)),
            throttle: Arc::new(LoginThrottle::default()),
        }
    }
}

/// All dashboard routes, to be merged into the server's router.
pub fn router(state: DashboardState) -> Router {
    use pages::*;
    Router::new()
        .route("/dashboard", get(overview::page))
        .route("/dashboard/login", get(login::form).post(login::submit))
        .route("/dashboard/logout", post(login::logout))
        .route("/dashboard/keys", get(keys::list).post(keys::create))
        .route("/dashboard/keys/{key_id}/status", post(keys::set_status))
        .route("/dashboard/keys/{key_id}/webhooks", get(webhooks::page))
        .route(
            "/dashboard/keys/{key_id}/webhook-url",
            post(webhooks::set_url),
        )
        .route(
            "/dashboard/keys/{key_id}/webhook-security",
            post(webhooks::set_security),
        )
        .route(
            "/dashboard/keys/{key_id}/webhook-retries",
            post(webhooks::set_retries),
        )
        .route(
            "/dashboard/keys/{key_id}/webhook-test",
            post(webhooks::send_test),
        )
        .route(
            "/dashboard/events/{event_id}/resend",
            post(webhooks::resend),
        )
        .route("/dashboard/transactions", get(transactions::list))
        .route("/dashboard/transactions/{code}", get(transactions::detail))
        .route("/dashboard/wallet", get(wallet::statement))
        .route("/dashboard/wallet.csv", get(wallet::csv))
        .route(
            "/dashboard/assets/style.css",
            get(|| asset("text/css", include_str!("../assets/style.css"))),
        )
        .route(
            "/dashboard/assets/app.js",
            get(|| asset("text/javascript", include_str!("../assets/app.js"))),
        )
        .with_state(state)
        .layer(axum::middleware::map_response(page_headers))
}

/// Pages load scripts and styles from `/dashboard/assets` only (the chart
/// legend's colour swatches are `style` attributes).
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; \
     connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// No dashboard page may be framed (clickjacking the revoke and suspend
/// buttons) or kept in a cache; assets keep their own caching.
async fn page_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

async fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
}
