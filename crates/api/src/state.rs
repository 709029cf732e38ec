//! What every handler shares: the store, the supplier, the catalogue and key
//! caches, the rate limiter, and the signal that wakes the fulfilment worker.

use crate::error::{ApiError, ApiResult};
use crate::key_cache::KeyCache;
use crate::rate_limit::RateLimiter;
use billpay_domain::catalogue::Catalogue;
use billpay_store::{RateLimit, SharedStore};
use billpay_supplier::Supplier;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, Notify};

#[derive(Clone)]
pub struct AppState {
    pub store: SharedStore,
    pub supplier: Arc<dyn Supplier>,
    pub catalogue: Arc<CatalogueCache>,
    /// Authenticated keys, trusted for at most `KEY_CACHE_TTL`.
    pub keys: Arc<KeyCache>,
    pub limiter: Arc<RateLimiter>,
    pub default_rate_limit: RateLimit,
    /// Notified after each accepted purchase so fulfilment starts at once.
    pub purchases_waiting: Arc<Notify>,
}

impl AppState {
    pub fn new(
        store: SharedStore,
        supplier: Arc<dyn Supplier>,
        default_rate_limit: RateLimit,
    ) -> Self {
        Self {
            catalogue: Arc::new(CatalogueCache::new(store.clone())),
            store,
            supplier,
            keys: Arc::default(),
            limiter: Arc::new(RateLimiter::default()),
            default_rate_limit,
            purchases_waiting: Arc::new(Notify::new()),
        }
    }
}

/// The catalogue in memory, re-checked against the database's version at most
/// once a second, so an operator's change applies within a second everywhere.
pub struct CatalogueCache {
    store: SharedStore,
    cached: Mutex<Option<Cached>>,
}

struct Cached {
    version: i64,
    checked: Instant,
    catalogue: Arc<Catalogue>,
}

const RECHECK: Duration = Duration::from_secs(1);

impl CatalogueCache {
    pub fn new(store: SharedStore) -> Self {
        Self {
            store,
            cached: Mutex::new(None),
        }
    }

    pub async fn get(&self) -> ApiResult<Arc<Catalogue>> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_mut() {
            if c.checked.elapsed() < RECHECK {
                return Ok(c.catalogue.clone());
            }
            if self.store.catalogue_version().await? == c.version {
                c.checked = Instant::now();
                return Ok(c.catalogue.clone());
            }
        }
        let (version, catalogue) = self.store.catalogue().await.map_err(ApiError::from)?;
        let catalogue = Arc::new(catalogue);
        *cached = Some(Cached {
            version,
            checked: Instant::now(),
            catalogue: catalogue.clone(),
        });
        Ok(catalogue)
    }
}
