//! What every handler shares: the purchase operation's parts
//! (`billpay_operations::purchases::Purchasing`: the store, the suppliers'
//! routes, the catalogue and price caches, the rate limiter, and the signal
//! that wakes the fulfilment worker; the shop shares the same value), and
//! the batches (`billpay_operations::batches`), and the API's own key cache
//! and identity gateway. Behind one `Arc`: axum clones the state for every
//! extractor of every request, and one reference count is cheaper than the
//! dozen its parts hold (docs/benchmarks.md).

use crate::key_cache::KeyCache;
use billpay_funding::SharedGateway;
use billpay_funding::identity::IdentityCheck;
use billpay_operations::batches::Batches;
use billpay_operations::purchases::Purchasing;
use billpay_operations::rate_limit::RateLimiter;
use billpay_store::{RateLimit, SharedStore};
use billpay_supplier::routing::Routes;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// What [`AppState`] shares; its fields are read through it (`Deref`).
#[derive(Clone)]
pub struct Shared {
    /// What buying needs; `serve` hands the same value to the shop, so both
    /// spend one rate budget per key and share the caches.
    pub purchasing: Purchasing,
    /// Batches of purchases, each item placed through `purchasing` (its
    /// store, caches and fulfilment wake-up) by the batch runner `serve` starts.
    pub batches: Batches,
    /// Authenticated keys, trusted for at most `KEY_CACHE_TTL`.
    pub keys: Arc<KeyCache>,
    /// The funding gateway that offers identity checks (Monnify's), if one
    /// is configured: `POST /v1/account/identity` asks it.
    pub identity: Option<SharedGateway>,
    /// Where customers reach the shop (`public_url`, else the listen
    /// address): the base of the links the API hands out. Empty: paths.
    pub public_url: String,
}

impl AppState {
    pub fn new(store: SharedStore, suppliers: Arc<Routes>, default_rate_limit: RateLimit) -> Self {
        let purchasing = Purchasing::new(store, suppliers, default_rate_limit);
        Self(Arc::new(Shared {
            batches: batches_of(&purchasing),
            purchasing,
            keys: Arc::default(),
            identity: None,
            public_url: String::new(),
        }))
    }

    /// Every purchase's rate limits (the API's, the shop's and a batch's
    /// items') counted by `limiter` (Redis's, shared by the nodes).
    pub fn with_limiter(mut self, limiter: Arc<RateLimiter>) -> Self {
        let shared = Arc::make_mut(&mut self.0);
        shared.purchasing.limiter = limiter;
        shared.batches = batches_of(&shared.purchasing);
        self
    }

    /// Links the API hands out (a referral link) start with `public_url`.
    pub fn with_public_url(mut self, public_url: &str) -> Self {
        Arc::make_mut(&mut self.0).public_url = public_url.trim_end_matches('/').to_owned();
        self
    }

    /// The first of `gateways` that offers identity checks asks them.
    pub fn with_identity(mut self, gateways: &[SharedGateway]) -> Self {
        Arc::make_mut(&mut self.0).identity =
            gateways.iter().find(|g| g.identity().is_some()).cloned();
        self
    }

    /// The identity checks, if a gateway offers them.
    pub fn identity_check(&self) -> Option<&dyn IdentityCheck> {
        self.identity.as_deref().and_then(|g| g.identity())
    }
}

/// The API's batches, each item placed through `purchasing`.
fn batches_of(purchasing: &Purchasing) -> Batches {
    let items = Arc::new(crate::routes::batches::ApiItems);
    Batches::new(purchasing.clone(), items)
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}
