//! Authenticated API keys kept in memory for at most [`KEY_CACHE_TTL`], so a
//! request usually costs no database read for its key. The staleness is
//! bounded and the same on every node: a suspension or revocation made
//! anywhere (the CLI, the dashboard, another node) applies to every request
//! that starts more than [`KEY_CACHE_TTL`] after it.
//!
//! Only keys that were found are kept: a key created a moment ago works at
//! once, and a flood of made-up keys cannot fill the memory with misses.

use billpay_store::{AccountStatus, ApiKey, SharedStore, StoreResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a key read from the database is trusted.
pub const KEY_CACHE_TTL: Duration = Duration::from_millis(500);

/// Keys kept at most; past it the cache starts afresh (an unbounded number of
/// distinct valid keys would otherwise grow it for ever).
const MAX_KEYS: usize = 100_000;

/// A found key and its account's status, as of `read_at`.
pub type FoundKey = Arc<(ApiKey, AccountStatus)>;

#[derive(Default)]
pub struct KeyCache {
    entries: Mutex<HashMap<String, (Instant, FoundKey)>>,
}

impl KeyCache {
    /// The key with this hash and its account's status, from memory when
    /// read less than [`KEY_CACHE_TTL`] ago, else from the store.
    pub async fn authenticate(
        &self,
        store: &SharedStore,
        key_hash: &str,
    ) -> StoreResult<Option<FoundKey>> {
        if let Some(found) = self.fresh(key_hash) {
            return Ok(Some(found));
        }
        // Timed from before the read: the bound holds from what the database said.
        let read_at = Instant::now();
        let Some(found) = store.authenticate(key_hash).await? else {
            return Ok(None);
        };
        let found = Arc::new(found);
        let mut entries = self.lock();
        if entries.len() >= MAX_KEYS {
            entries.clear();
        }
        entries.insert(key_hash.to_owned(), (read_at, found.clone()));
        Ok(Some(found))
    }

    /// Notes that the key's `last_used_at` was just stamped, so the requests
    /// served from memory meanwhile do not stamp it again.
    pub fn note_used(&self, key_hash: &str, at: String) {
        if let Some((_, found)) = self.lock().get_mut(key_hash) {
            let (key, status) = &**found;
            let mut key = key.clone();
            key.last_used_at = Some(at);
            *found = Arc::new((key, *status));
        }
    }

    fn fresh(&self, key_hash: &str) -> Option<FoundKey> {
        let entries = self.lock();
        let (read_at, found) = entries.get(key_hash)?;
        (read_at.elapsed() < KEY_CACHE_TTL).then(|| found.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, FoundKey)>> {
        // A panic while holding it leaves a map that is still consistent.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}
