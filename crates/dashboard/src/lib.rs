//! The customer's side under `/dashboard`, as server-rendered pages, in three
//! rooms (each a folder with its own `routes()`, its templates in a folder of
//! the same name):
//!
//! - `buyer`: the home page, the shop (every product bought with a
//!   transaction PIN), receipts, the wallet and the purchase history;
//! - `care`: signing up and in, the account, notification choices, the
//!   identity check;
//! - `developer`: API keys and webhooks;
//! - `storefront`: `/` for a browser (what a stranger meets), the web
//!   manifest, the service worker and the offline page.
//!
//! `page` holds what every signed-in page shares (the layout's `Chrome`);
//! `brand` the business's brand every customer page wears (a layer puts it
//! in force for each request).
//!
//! Sessions, CSRF forms, sign-in checks, security headers and page errors
//! come from the web kit (`billpay_webkit`, shared with the operator console);
//! this crate holds the pages, their templates and assets. Pages read and
//! write through the same [`Store`](billpay_store::Store) as the API.

pub mod brand;
mod buyer;
mod care;
mod chart;
mod developer;
mod format;
mod page;
pub mod policy;
mod session;
pub mod storefront;

use axum::Router;
use axum::routing::get;
use billpay_domain::sealed::SecretBox;
use billpay_funding::FeeRule;
use billpay_operations::batches::Batches;
use billpay_operations::purchases::Purchasing;
use billpay_store::SharedStore;
use billpay_webhooks::{DeliveryClient, DeliveryConfig};
use billpay_webkit::{WebKit, catch_panics, kit_script, kit_stylesheet, security_headers};
use billpay_worker::Funding;
use std::sync::Arc;
use std::time::Duration;

/// What every page reads, shared: cloned for each request's extractors
/// as one reference count, not field by field.
#[derive(Clone)]
pub struct DashboardState(Arc<Parts>);

impl std::ops::Deref for DashboardState {
    type Target = Parts;
    fn deref(&self) -> &Parts {
        &self.0
    }
}

/// The dashboard's parts ([`DashboardState`] derefs to them); set with the
/// `with_…` builders before the routes are made.
#[derive(Clone)]
pub struct Parts {
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
    /// Batches (bulk buying from a CSV): the API's own value; `None`: no
    /// bulk page (`with_bulk` sets it).
    pub bulk: Option<Batches>,
    /// Whether the server sends SMS (a channel configured): the
    /// Notifications page offers SMS only then (`with_sms`).
    pub sms: bool,
    /// How long a purchase held for review waits for an owner before it is
    /// refunded: its receipt says until when (`with_held_review`).
    pub held_review: Duration,
    /// The business's brand: the settings' with the owner's edits (`with_brand`).
    pub brand: Arc<brand::BrandSource>,
    /// The storefront as last rendered (re-rendered when what it is made of changes).
    pub front: Arc<storefront::LastFront>,
}

impl DashboardState {
    pub fn new(store: SharedStore, secrets: SecretBox, webhook_config: DeliveryConfig) -> Self {
        Self(Arc::new(Parts {
            store: store.clone(),
            secrets,
            webhooks: Arc::new(DeliveryClient::new(webhook_config)),
            kit: Arc::new(WebKit::new(session::SCOPE)),
            funding: Funding::new(store, Vec::new(), FeeRule::default()),
            public_url: None,
            care: Arc::new(policy::AccountCare::default()),
            shop: None,
            bulk: None,
            sms: false,
            held_review: billpay_worker::held::DEFAULT_HELD_REVIEW,
            brand: Arc::new(brand::BrandSource::default()),
            front: Arc::default(),
        }))
    }

    /// The parts, to set one (before the state is shared).
    fn parts(&mut self) -> &mut Parts {
        Arc::make_mut(&mut self.0)
    }

    /// The brand every customer page wears (the settings' `[brand]`; the
    /// owner's console edits laid over it).
    pub fn with_brand(mut self, brand: brand::BrandSource) -> Self {
        self.parts().brand = Arc::new(brand);
        self
    }

    /// Whether an SMS channel is configured (the Notifications page offers
    /// SMS only then).
    pub fn with_sms(mut self, sms: bool) -> Self {
        self.parts().sms = sms;
        self
    }

    /// The gateways customers fund their wallets through, and the shop's
    /// public address (for the card payment's return).
    pub fn with_funding(mut self, funding: Funding, public_url: Option<String>) -> Self {
        self.parts().funding = funding;
        self.parts().public_url = public_url;
        self
    }

    /// With the operator's sign-up policy and the dashboard's public address.
    pub fn with_account_care(mut self, policy: policy::SignUpPolicy, public_url: &str) -> Self {
        self.parts().care = Arc::new(policy::AccountCare::new(policy, public_url));
        self
    }

    /// How long a held purchase waits for an owner (`BILLPAY_HELD_REVIEW_SECS`).
    pub fn with_held_review(mut self, window: Duration) -> Self {
        self.parts().held_review = window;
        self
    }

    /// The shop buys through the purchase operation, the API's own value of it.
    pub fn with_shop(mut self, purchasing: Purchasing) -> Self {
        self.parts().shop = Some(purchasing);
        self
    }

    /// Bulk buying places its rows as one batch of the batches' operation,
    /// the API's own value.
    pub fn with_bulk(mut self, batches: Batches) -> Self {
        self.parts().bulk = Some(batches);
        self
    }
}

async fn shop_css() -> axum::response::Response {
    billpay_webkit::asset("text/css", include_str!("../assets/shop.css")).await
}

async fn shop_js() -> axum::response::Response {
    billpay_webkit::asset("text/javascript", include_str!("../assets/shop.js")).await
}

/// The brand in force for the request (`brand::current`).
async fn wear_brand(
    axum::extract::State(state): axum::extract::State<DashboardState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let brand = state.brand.get().await;
    brand::in_force(brand, next.run(request)).await
}

/// `/` for a browser: the storefront, to be put in front of the API's index
/// with [`storefront::for_browsers`] (the server's router composition).
pub fn storefront(state: DashboardState) -> Router {
    Router::new()
        .route("/", get(storefront::home))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            wear_brand,
        ))
        .with_state(state)
        .layer(catch_panics(session::SCOPE))
        .layer(axum::middleware::map_response(security_headers))
}

/// All dashboard routes, to be merged into the server's router: each room's
/// pages, then the assets they share.
pub fn router(state: DashboardState) -> Router {
    Router::new()
        .merge(buyer::routes())
        .merge(care::routes())
        .merge(developer::routes())
        .merge(storefront::routes())
        .route("/dashboard/assets/shop.css", get(shop_css))
        .route("/dashboard/assets/shop.js", get(shop_js))
        .route("/dashboard/assets/style.css", get(kit_stylesheet))
        // the kit's own name for it: the kit's error pages link it
        .route("/dashboard/assets/kit.css", get(kit_stylesheet))
        .route("/dashboard/assets/app.js", get(kit_script))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            wear_brand,
        ))
        .with_state(state)
        .layer(catch_panics(session::SCOPE))
        .layer(axum::middleware::map_response(security_headers))
}
