//! The developer's room: API keys and each key's webhooks (URL, signing
//! secret, retries, a test event, the delivery log with resend), for an
//! account with developer access only (issue 46; docs/shop.md): every
//! handler here takes [`Developer`], so none can forget; without it, a page
//! says how to turn developer access on. The API does not look at it.

pub mod keys;
pub mod webhooks;

use crate::DashboardState;
use crate::page::{Chrome, PageError, render};
use crate::session::SignedIn;
use askama::Template;
use axum::Router;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::routing::{get, post};

/// A signed-in account with developer access; any other is shown
/// [`OffPage`] (403).
pub struct Developer(pub SignedIn);

impl FromRequestParts<DashboardState> for Developer {
    type Rejection = PageError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &DashboardState,
    ) -> Result<Self, PageError> {
        let signed_in = SignedIn::from_request_parts(parts, state).await?;
        if signed_in.user.developer_access.is_some() {
            return Ok(Developer(signed_in));
        }
        let mut page = render(&OffPage {
            chrome: Chrome::new(&signed_in, "account"),
        });
        *page.status_mut() = StatusCode::FORBIDDEN;
        Err(page.into())
    }
}

/// What a buyer meets at a developer's page: what it is for and how to
/// turn developer access on.
#[derive(Template)]
#[template(path = "developer/off.html")]
struct OffPage {
    chrome: Chrome,
}

/// The developer's pages, under `/dashboard`.
pub fn routes() -> Router<DashboardState> {
    Router::new()
        .route("/dashboard/keys", get(keys::list).post(keys::create))
        .route("/dashboard/webhooks", get(webhooks::index))
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
