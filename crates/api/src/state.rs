//! What every handler shares: the store, the suppliers' routes, the catalogue
//! and key caches, the rate limiter, and the signal that wakes the
//! fulfilment worker.

use crate::key_cache::KeyCache;
use crate::rate_limit::RateLimiter;
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
        }
    }
}
