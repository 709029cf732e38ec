//! The account dashboard under `/dashboard`: sign-up and account care, the
//! shop (buying every product with a transaction PIN, `pages/shop`), the
//! wallet (reserved accounts, pay now by card), API keys, webhooks,
//! transactions, the wallet statement and notification choices, as
//! server-rendered pages.
//!
//! Sessions, CSRF forms, sign-in checks, security headers and page errors
//! come from the web kit (`billpay_webkit`, shared with the operator console);
//! this crate holds the pages, their templates and assets. Pages read and
//! write through the same [`Store`](billpay_store::Store) as the API.

mod chart;
mod format;
mod pages;
pub mod policy;
mod session;

use axum::Router;
use axum::routing::{get, post};
use billpay_domain::sealed::SecretBox;
use billpay_funding::FeeRule;
use billpay_operations::purchases::Purchasing;
use billpay_store::SharedStore;
use billpay_webhooks::{DeliveryClient, DeliveryConfig};
use billpay_webkit::{WebKit, catch_panics, kit_script, kit_stylesheet, security_headers};
use billpay_worker::Funding;
use std::sync::Arc;

#[derive(Clone)]
pub struct DashboardState {
    pub store: SharedStore,
    pub secrets: SecretBox,
    pub webhooks: Arc<DeliveryClient>,
    /// Sessions scoped to `/dashboard`, the sign-in throttle and the bound on password checks.
    pub kit: Arc<WebKit>,
    /// Money in: the gateways (reserved accounts, pay now by card). None
    /// configured until [`Self::with_funding`].
    pub funding: Funding,
    /// Where a card payment sends the customer back (`[funding] public_url`);
    /// `None`: the address their browser used.
    pub public_url: Option<String>,
    /// Sign-up policy, the public address of emailed links, the open forms' throttles.
    pub care: Arc<policy::AccountCare>,
    /// The purchase operation the API calls too (the same value: one rate
    /// budget per key, the same caches, the worker's wake-up); `None`: no
    /// shop (`with_shop` sets it).
    pub shop: Option<Purchasing>,
    /// Whether the server sends SMS (a channel configured): the
    /// Notifications page offers SMS only then (`with_sms`).
    pub sms: bool,
}

impl DashboardState {
    pub fn new(store: SharedStore, secrets: SecretBox, webhook_config: DeliveryConfig) -> Self {
        Self {
            store: store.clone(),
            secrets,
            webhooks: Arc::new(DeliveryClient::new(webhook_config)),
            kit: Arc::new(WebKit::new(session::SCOPE)),
            funding: Funding::new(store, Vec::new(), FeeRule::default()),
            public_url: None,
            care: Arc::new(policy::AccountCare::default()),
            shop: None,
            sms: false,
        }
    }

    /// Whether an SMS channel is configured (the Notifications page offers
    /// SMS only then).
    pub fn with_sms(mut self, sms: bool) -> Self {
        self.sms = sms;
        self
    }

    /// The gateways customers fund their wallets through, and the shop's
    /// public address (for the card payment's return).
    pub fn with_funding(mut self, funding: Funding, public_url: Option<String>) -> Self {
        self.funding = funding;
        self.public_url = public_url;
        self
    }

    /// With the operator's sign-up policy and the dashboard's public address.
    pub fn with_account_care(mut self, policy: policy::SignUpPolicy, public_url: &str) -> Self {
        self.care = Arc::new(policy::AccountCare::new(policy, public_url));
        self
    }

    /// The shop buys through the purchase operation, the API's own value of it.
    pub fn with_shop(mut self, purchasing: Purchasing) -> Self {
        self.shop = Some(purchasing);
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
        .route(
            "/dashboard/signup",
            get(care::signup::form).post(care::signup::submit),
        )
        .route(
            "/dashboard/verify",
            get(care::verify::form).post(care::verify::submit),
        )
        .route("/dashboard/verify/resend", post(care::verify::resend))
        .route(
            "/dashboard/forgot",
            get(care::reset::forgot_form).post(care::reset::forgot),
        )
        .route(
            "/dashboard/reset/{token}",
            get(care::reset::reset_form).post(care::reset::reset),
        )
        .route("/dashboard/account", get(care::account::page))
        .route(
            "/dashboard/account/profile",
            post(care::account::save_profile),
        )
        .route(
            "/dashboard/account/password",
            post(care::account::change_password),
        )
        .route(
            "/dashboard/account/email",
            post(care::account::change_email),
        )
        .route("/dashboard/account/code", post(care::account::enter_code))
        .route("/dashboard/account/data", post(care::my_data::download))
        .route(
            "/dashboard/account/code/resend",
            post(care::account::resend_code),
        )
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
        .route(
            "/dashboard/notifications",
            get(notifications::page).post(notifications::save),
        )
        .route(
            "/dashboard/notifications/phone",
            post(notifications::send_phone_code),
        )
        .route(
            "/dashboard/notifications/phone/code",
            post(notifications::enter_phone_code),
        )
        .route("/dashboard/wallet", get(wallet::statement))
        .route("/dashboard/wallet.csv", get(wallet::csv))
        .route("/dashboard/wallet/pay", post(pay_now::start))
        .route("/dashboard/wallet/paid", get(pay_now::returned))
        .route("/dashboard/wallet/reserve", post(pay_now::reserve))
        .route(
            "/dashboard/identity",
            get(identity::page).post(identity::check),
        )
        .route("/dashboard/buy", get(shop::home))
        .route("/dashboard/buy/{product}", get(shop::form).post(shop::buy))
        .route("/dashboard/buy/{product}/verify", post(shop::verify))
        .route("/dashboard/receipts/{code}", get(shop::receipt::page))
        .route("/dashboard/beneficiaries", post(shop::save_beneficiary))
        .route("/dashboard/pin", get(shop::pin::form).post(shop::pin::set))
        .route("/dashboard/pin/change", post(shop::pin::change))
        .route("/dashboard/pin/forgot", post(shop::pin::forgot))
        .route(
            "/dashboard/pin/reset/{token}",
            get(shop::pin_reset::form).post(shop::pin_reset::reset),
        )
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
