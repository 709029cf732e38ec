//! The operator's console under `/admin`: operators (not customers) sign in
//! (with a TOTP code when they enabled one) and run the business from the
//! browser — the overview, customers (their wallets, tier, keys and funding
//! accounts), transactions and the needs-review queue, funding, prices and
//! the catalogue, suppliers, the sales report, KYC levels' limits and the
//! blocklist, operators and the operator log.
//!
//! Sessions, CSRF forms, sign-in throttling, security headers and page
//! errors come from the web kit (`billpay_webkit`, shared with the
//! dashboard); every change goes through `billpay_operations` with the
//! signed-in operator as the `Actor`, so the role rules, "a reason where
//! money moves" and the operator log are the same as the CLI's.

mod chart;
mod form;
mod pages;
mod session;

use axum::Router;
use axum::routing::{get, post};
use billpay_domain::Kobo;
use billpay_domain::sealed::SecretBox;
use billpay_store::SharedStore;
use billpay_supplier::Supplier;
use billpay_supplier::health::StartCheck;
use billpay_webkit::{WebKit, asset, catch_panics, kit_script, kit_stylesheet, security_headers};
use billpay_worker::{Fulfilment, Funding};
use std::sync::Arc;
use std::time::Duration;

pub use session::{IDLE_TIMEOUT, SCOPE};

#[derive(Clone)]
pub struct ConsoleState {
    pub store: SharedStore,
    /// Opens operators' TOTP secrets.
    pub secrets: SecretBox,
    /// "Requery now" asks the supplier as the worker would.
    pub fulfilment: Fulfilment,
    /// A processing purchase older than this is in the needs-review queue.
    pub needs_review_after: Duration,
    pub kit: Arc<WebKit>,
    /// Assigns an unmatched payment (its fee rule); no gateways until
    /// [`Self::with_funding`].
    pub funding: Funding,
    /// The real suppliers configured: their floats, and the Prices page's
    /// plan-list sync.
    pub suppliers: Vec<Arc<dyn Supplier>>,
    /// The floats' low-balance level (`--supplier-low-balance`).
    pub low_balance: Option<Kobo>,
    /// What `serve`'s start-up supplier check found.
    pub start_checks: Arc<Vec<StartCheck>>,
    /// Where customers reach the dashboard: the start of a reset link support sends.
    pub public_url: Arc<str>,
    /// Whether the server sends SMS (a channel configured): "My account"
    /// offers alerts by SMS only then ([`Self::with_sms`]).
    pub sms: bool,
    /// The brand of the settings (`[brand]`), which the owner's edits on
    /// the Brand page are laid over ([`Self::with_brand`]).
    pub brand: Arc<billpay_domain::brand::Brand>,
}

impl ConsoleState {
    pub fn new(
        store: SharedStore,
        secrets: SecretBox,
        fulfilment: Fulfilment,
        needs_review_after: Duration,
    ) -> Self {
        ConsoleState {
            funding: Funding::new(store.clone(), Vec::new(), Default::default()),
            store,
            secrets,
            fulfilment,
            needs_review_after,
            kit: Arc::new(WebKit::new(session::SCOPE)),
            suppliers: Vec::new(),
            low_balance: None,
            start_checks: Arc::default(),
            public_url: Arc::from("http://127.0.0.1:8080"),
            sms: false,
            brand: Arc::new(billpay_domain::brand::Brand::default()),
        }
    }

    /// Whether an SMS channel is configured (operators are offered alerts
    /// by SMS only then).
    pub fn with_sms(mut self, sms: bool) -> Self {
        self.sms = sms;
        self
    }

    /// Where customers reach the dashboard (`serve`'s `public_url`).
    /// The settings' brand, shown and edited on the Brand page.
    pub fn with_brand(mut self, brand: billpay_domain::brand::Brand) -> Self {
        self.brand = Arc::new(brand);
        self
    }

    pub fn with_public_url(mut self, public_url: &str) -> Self {
        self.public_url = Arc::from(public_url);
        self
    }

    /// The server's funding service: its gateways and fee rule.
    pub fn with_funding(mut self, funding: Funding) -> Self {
        self.funding = funding;
        self
    }

    /// The real suppliers configured, the floats' low-balance level and the
    /// start-up check's result.
    pub fn with_suppliers(
        mut self,
        suppliers: Vec<Arc<dyn Supplier>>,
        low_balance: Option<Kobo>,
        checks: Vec<StartCheck>,
    ) -> Self {
        self.suppliers = suppliers;
        self.low_balance = low_balance;
        self.start_checks = Arc::new(checks);
        self
    }
}

/// All console routes, to be merged into the server's router.
pub fn router(state: ConsoleState) -> Router {
    use pages::*;
    Router::new()
        .route("/admin", get(overview::page))
        .route("/admin/login", get(login::form).post(login::submit))
        .route("/admin/logout", post(login::logout))
        .route(
            "/admin/customers",
            get(customers::search).post(customers::create),
        )
        .route("/admin/customers/{id}", get(customers::account))
        .route("/admin/customers/{id}/status", post(customers::set_status))
        .route("/admin/customers/{id}/close", post(customers::close))
        .route("/admin/customers/{id}/erase", post(customers::erase))
        .route(
            "/admin/customers/{id}/reset-link",
            post(customers::send_password_reset),
        )
        .route(
            "/admin/customers/{id}/pin-lock",
            post(customers::clear_pin_lock),
        )
        .route(
            "/admin/customers/{id}/developer-access",
            post(customers::set_developer_access),
        )
        .route(
            "/admin/customers/{id}/schedules/pause",
            post(customers::pause_schedules),
        )
        .route("/admin/customers/{id}/credit", post(customers::credit))
        .route("/admin/customers/{id}/debit", post(customers::debit))
        .route("/admin/transactions", get(transactions::list))
        .route("/admin/review", get(transactions::review))
        .route("/admin/transactions/{code}", get(transactions::detail))
        .route(
            "/admin/transactions/{code}/requery",
            post(transactions::requery),
        )
        .route(
            "/admin/transactions/{code}/resolve",
            post(transactions::resolve),
        )
        .route(
            "/admin/transactions/{code}/held",
            post(transactions::decide_held),
        )
        .route(
            "/admin/operators",
            get(operators::list).post(operators::create),
        )
        .route("/admin/operators/{id}/status", post(operators::set_status))
        .route("/admin/log", get(operators::log))
        .route("/admin/brand", get(brand::page).post(brand::save))
        .route(
            "/admin/operators/{id}/password",
            post(operators::set_password),
        )
        // the signed-in operator's own account
        .route("/admin/account", get(account::page))
        .route("/admin/account/password", post(account::set_password))
        .route("/admin/account/totp", post(account::offer_totp))
        .route("/admin/account/totp/confirm", post(account::confirm_totp))
        .route("/admin/account/totp/disable", post(account::disable_totp))
        .route("/admin/account/alerts", post(account::set_alerts))
        .route(
            "/admin/account/alert-channels",
            post(account::set_alert_channels),
        )
        .route("/admin/notifications", get(notifications::list))
        .route(
            "/admin/notifications/{id}/resend",
            post(notifications::resend),
        )
        .route("/admin/assets/kit.css", get(kit_stylesheet))
        // money pages: funding, suppliers, reports
        .route("/admin/funding", get(payments_received::list))
        .route(
            "/admin/funding/{id}/assign",
            post(payments_received::assign),
        )
        .route(
            "/admin/funding/reconcile",
            post(payments_received::reconcile),
        )
        .route(
            "/admin/customers/{id}/reserve",
            post(payments_received::reserve),
        )
        .route("/admin/suppliers", get(suppliers::page))
        .route("/admin/reports", get(reports::page))
        .route("/admin/audit", get(audit::page))
        .route("/admin/reports.csv", get(reports::csv))
        // catalogue, prices and customer tools
        .route("/admin/prices", get(prices::page))
        .route("/admin/prices/tiers", post(prices::create_tier))
        .route(
            "/admin/prices/tiers/developer-access",
            post(prices::set_tier_developer_access),
        )
        .route("/admin/prices/rules", post(prices::set_rule))
        .route("/admin/prices/offers", post(prices::offer))
        .route(
            "/admin/prices/offers/withdraw",
            post(prices::withdraw_offer),
        )
        .route("/admin/prices/on-sale", post(prices::set_sale))
        .route("/admin/prices/list-price", post(prices::set_list_price))
        .route(
            "/admin/prices/sync",
            get(prices::differences).post(prices::apply),
        )
        .route("/admin/customers/{id}/tier", post(customers::set_tier))
        .route(
            "/admin/customers/{id}/downgrade",
            post(customers::downgrade),
        )
        .route(
            "/admin/customers/{id}/referral/void",
            post(customers::void_referral),
        )
        .route("/admin/prices/referrals", post(prices::set_referral_rate))
        .route(
            "/admin/prices/referral-settings",
            post(prices::set_referral_settings),
        )
        // KYC levels, limits and the blocklist (docs/limits.md)
        .route("/admin/limits", get(limits::page))
        .route("/admin/limits/{level}", post(limits::set_level))
        .route("/admin/limits/{level}/name", post(limits::rename_level))
        .route("/admin/blocklist", get(limits::blocklist).post(limits::add))
        .route("/admin/blocklist/remove", post(limits::remove))
        .route("/admin/customers/{id}/kyc", post(customers::set_kyc))
        .route("/admin/customers/{id}/limits", post(customers::set_limits))
        .route(
            "/admin/customers/{id}/password",
            post(customers::set_password),
        )
        .route("/admin/customers/{id}/keys", post(customers::create_key))
        .route(
            "/admin/customers/{id}/keys/{key}/status",
            post(customers::set_key_status),
        )
        .route(
            "/admin/customers/{id}/keys/{key}/rate-limit",
            post(customers::set_key_rate_limit),
        )
        .route(
            "/admin/transactions/{code}/resend",
            post(transactions::resend),
        )
        .route(
            "/admin/assets/style.css",
            get(|| asset("text/css", include_str!("../assets/style.css"))),
        )
        .route("/admin/assets/app.js", get(kit_script))
        .with_state(state)
        .layer(catch_panics(SCOPE))
        .layer(axum::middleware::map_response(security_headers))
}
