//! The account dashboard under `/dashboard`: sign-in, the shop (buying every
//! product with a transaction PIN, `pages/shop`), API keys, webhooks,
//! transactions and the wallet statement, as server-rendered pages.
//!
//! Sessions, CSRF forms, sign-in checks, security headers and page errors
//! come from the web kit (`billpay_webkit`, shared with the operator console);
//! this crate holds the pages, their templates and assets. Pages read and
//! write through the same [`Store`](billpay_store::Store) as the API.

mod chart;
mod format;
mod pages;
mod session;

use axum::Router;
use axum::routing::{get, post};
use billpay_domain::sealed::SecretBox;
use billpay_store::SharedStore;
use billpay_webhooks::{DeliveryClient, DeliveryConfig};
use billpay_webkit::{WebKit, catch_panics, kit_script, kit_stylesheet, security_headers};
use std::sync::Arc;

#[derive(Clone)]
pub struct DashboardState {
    pub store: SharedStore,
    pub secrets: SecretBox,
    pub webhooks: Arc<DeliveryClient>,
    /// Sessions scoped to `/dashboard`, the sign-in throttle and the bound on password checks.
    pub kit: Arc<WebKit>,
    /// The API's state, for the shop's purchases (the API's own operation);
    /// `None`: no shop (`with_shop` sets it).
    pub shop: Option<billpay_api::AppState>,
}

impl DashboardState {
    pub fn new(store: SharedStore, secrets: SecretBox, webhook_config: DeliveryConfig) -> Self {
        Self {
            store,
            secrets,
            webhooks: Arc::new(DeliveryClient::new(webhook_config)),
            kit: Arc::new(WebKit::new(session::SCOPE)),
            shop: None,
        }
    }

    /// The shop buys through the API's purchase operation, with its state.
    pub fn with_shop(mut self, api: billpay_api::AppState) -> Self {
        self.shop = Some(api);
        self
    }
}

async fn shop_css() -> axum::response::Response {
    billpay_webkit::asset("text/css", include_str!("../assets/shop.css")).await
}

async fn shop_js() -> axum::response::Response {
    billpay_webkit::asset("text/javascript", include_str!("../assets/shop.js")).await
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
        .route("/dashboard/buy", get(shop::home))
        .route("/dashboard/buy/{product}", get(shop::form).post(shop::buy))
        .route("/dashboard/buy/{product}/verify", post(shop::verify))
        .route("/dashboard/receipts/{code}", get(shop::receipt::page))
        .route("/dashboard/beneficiaries", post(shop::save_beneficiary))
        .route("/dashboard/pin", get(shop::pin::form).post(shop::pin::set))
        .route("/dashboard/assets/shop.css", get(shop_css))
        .route("/dashboard/assets/shop.js", get(shop_js))
        .route("/dashboard/assets/style.css", get(kit_stylesheet))
        // the kit's own name for it: the kit's error pages link it
        .route("/dashboard/assets/kit.css", get(kit_stylesheet))
        .route("/dashboard/assets/app.js", get(kit_script))
        .with_state(state)
        .layer(catch_panics(session::SCOPE))
        .layer(axum::middleware::map_response(security_headers))
}
