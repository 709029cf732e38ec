//! What every handler shares: the store, the suppliers' routes, the catalogue
//! and key caches, the rate limiter, and the signal that wakes the
//! fulfilment worker.

use crate::key_cache::KeyCache;
use crate::rate_limit::RateLimiter;
use billpay_funding::SharedGateway;
use billpay_funding::identity::IdentityCheck;
use billpay_store::{CatalogueCache, PriceBookCache, RateLimit, SharedStore};
use billpay_supplier::routing::Routes;
use std::sync::Arc;
use tokio::sync::Notify;

#[derive(Clone)]
pub struct AppState {
    pub store: SharedStore,
    /// Which supplier verifies, and whether any sells, a product and provider.
    pub suppliers: Arc<Routes>,
    pub catalogue: Arc<CatalogueCache>,
    /// Price tiers and accounts' tiers, re-checked like the catalogue.
    pub prices: Arc<PriceBookCache>,
    /// Authenticated keys, trusted for at most `KEY_CACHE_TTL`.
    pub keys: Arc<KeyCache>,
    pub limiter: Arc<RateLimiter>,
    pub default_rate_limit: RateLimit,
    /// Notified after each accepted purchase so fulfilment starts at once.
    pub purchases_waiting: Arc<Notify>,
    /// The funding gateway that offers identity checks (Monnify's), if one
    /// is configured: `POST /v1/account/identity` asks it.
    pub identity: Option<SharedGateway>,
}

impl AppState {
    pub fn new(store: SharedStore, suppliers: Arc<Routes>, default_rate_limit: RateLimit) -> Self {
        Self {
            catalogue: Arc::new(CatalogueCache::new(store.clone())),
            prices: Arc::new(PriceBookCache::new(store.clone())),
            store,
            suppliers,
            keys: Arc::default(),
            limiter: Arc::new(RateLimiter::default()),
            default_rate_limit,
            purchases_waiting: Arc::new(Notify::new()),
            identity: None,
        }
    }

    /// The first of `gateways` that offers identity checks asks them.
    pub fn with_identity(mut self, gateways: &[SharedGateway]) -> Self {
        self.identity = gateways.iter().find(|g| g.identity().is_some()).cloned();
        self
    }

    /// The identity checks, if a gateway offers them.
    pub fn identity_check(&self) -> Option<&dyn IdentityCheck> {
        self.identity.as_deref().and_then(|g| g.identity())
    }
}
