//! The developer's room: API keys and each key's webhooks (URL, signing
//! secret, retries, a test event, the delivery log with resend).

pub mod keys;
pub mod webhooks;

use crate::DashboardState;
use axum::Router;
use axum::routing::{get, post};

/// The developer's pages, under `/dashboard`.
pub fn routes() -> Router<DashboardState> {
    Router::new()
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
}
