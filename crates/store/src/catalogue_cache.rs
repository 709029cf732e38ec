//! The catalogue in memory, for the request path and the fulfilment worker
//! alike: re-checked against the database's version at most once a second,
//! so an operator's change applies within a second on every node, and reread
//! only when that version moved.

use crate::{SharedStore, StoreResult};
use billpay_domain::catalogue::Catalogue;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// How often the version is checked.
const RECHECK: Duration = Duration::from_secs(1);

pub struct CatalogueCache {
    store: SharedStore,
    cached: Mutex<Option<Cached>>,
}

struct Cached {
    version: i64,
    checked: Instant,
    catalogue: Arc<Catalogue>,
}

impl CatalogueCache {
    pub fn new(store: SharedStore) -> Self {
        Self {
            store,
            cached: Mutex::new(None),
        }
    }

    pub async fn get(&self) -> StoreResult<Arc<Catalogue>> {
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
        let (version, catalogue) = self.store.catalogue().await?;
        let catalogue = Arc::new(catalogue);
        *cached = Some(Cached {
            version,
            checked: Instant::now(),
            catalogue: catalogue.clone(),
        });
        Ok(catalogue)
    }
}
