//! What the request path and the fulfilment worker read on every call and an
//! operator changes rarely, in memory: the catalogue ([`CatalogueCache`]) and
//! the price tiers ([`PriceBookCache`]). Each is re-checked against its
//! version in the database at most once a second, so an operator's change
//! applies within a second on every node, and reread only when that version
//! moved.

use crate::{SharedStore, StoreResult};
use async_trait::async_trait;
use billpay_domain::brand::BrandEdits;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::pricing::PriceBook;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// How often the version is checked: a change is seen by every node's
/// cache at most this long after it is committed.
pub const RECHECK: Duration = Duration::from_secs(1);

/// A versioned document of the store.
#[async_trait]
pub trait Versioned: Send + Sync + 'static {
    type Value: Send + Sync + 'static;
    async fn version(store: &SharedStore) -> StoreResult<i64>;
    async fn load(store: &SharedStore) -> StoreResult<(i64, Self::Value)>;
}

/// The catalogue (`CatalogueStore`).
pub struct CatalogueDocument;

#[async_trait]
impl Versioned for CatalogueDocument {
    type Value = Catalogue;
    async fn version(store: &SharedStore) -> StoreResult<i64> {
        store.catalogue_version().await
    }
    async fn load(store: &SharedStore) -> StoreResult<(i64, Catalogue)> {
        store.catalogue().await
    }
}

/// The price tiers and accounts' tiers (`PricingStore`).
pub struct PriceBookDocument;

#[async_trait]
impl Versioned for PriceBookDocument {
    type Value = PriceBook;
    async fn version(store: &SharedStore) -> StoreResult<i64> {
        store.pricing_version().await
    }
    async fn load(store: &SharedStore) -> StoreResult<(i64, PriceBook)> {
        store.price_book().await
    }
}

/// The owner's edits of the brand (`BrandStore`): the brand on every
/// customer page, read through this cache (an edit shows within a second).
pub struct BrandDocument;

#[async_trait]
impl Versioned for BrandDocument {
    type Value = BrandEdits;
    async fn version(store: &SharedStore) -> StoreResult<i64> {
        store.brand_version().await
    }
    async fn load(store: &SharedStore) -> StoreResult<(i64, BrandEdits)> {
        store.brand_edits().await
    }
}

pub type BrandCache = VersionedCache<BrandDocument>;
pub type CatalogueCache = VersionedCache<CatalogueDocument>;
pub type PriceBookCache = VersionedCache<PriceBookDocument>;

pub struct VersionedCache<D: Versioned> {
    store: SharedStore,
    cached: Mutex<Option<Cached<D::Value>>>,
}

struct Cached<T> {
    version: i64,
    checked: Instant,
    value: Arc<T>,
}

impl<D: Versioned> VersionedCache<D> {
    pub fn new(store: SharedStore) -> Self {
        Self {
            store,
            cached: Mutex::new(None),
        }
    }

    pub async fn get(&self) -> StoreResult<Arc<D::Value>> {
        let mut cached = self.cached.lock().await;
        // Stamped before the read, so what it read is never older than the
        // stamp: a change committed `RECHECK` ago is always seen.
        let asked = Instant::now();
        if let Some(c) = cached.as_mut() {
            if c.checked.elapsed() < RECHECK {
                return Ok(c.value.clone());
            }
            if D::version(&self.store).await? == c.version {
                c.checked = asked;
                return Ok(c.value.clone());
            }
        }
        let (version, value) = D::load(&self.store).await?;
        let value = Arc::new(value);
        *cached = Some(Cached {
            version,
            checked: asked,
            value: value.clone(),
        });
        Ok(value)
    }
}
