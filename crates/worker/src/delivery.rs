//! Delivers outbox events to the webhook URL of the key that made the purchase.
//!
//! Each event is sent in its own task, so a slow or dead receiver never holds
//! up deliveries to others; and one slow receiver cannot take every slot
//! either: a claim takes at most `per_key` events, and a key with `per_key`
//! deliveries in flight is left out of the next claims until one ends, so a
//! key never has twice `per_key` in flight. Every attempt is logged. By default a failure is
//! final (as the spec says: dropped and logged); a key that opted into retries
//! is retried on the Standard Webhooks schedule. An event is sent twice only if
//! the process dies between sending it and recording the attempt.

use crate::claim_loop::{Claimed, Left, LoopSettings, claim_loop, run_all};
use billpay_domain::KeyId;
use billpay_domain::sealed::SecretBox;
use billpay_store::clock::now_ms;
use billpay_store::{Event, EventNext, NewAttempt, SharedStore, StoreResult};
use billpay_webhooks::{DeliveryClient, DeliveryConfig, DeliveryRequest, retry_delay};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tracing::Instrument;

#[derive(Debug, Clone)]
pub struct DeliverySettings {
    pub client: DeliveryConfig,
    pub lease: Duration,
    /// Deliveries in flight at once.
    pub concurrency: usize,
    /// Deliveries in flight at once to one key's receiver.
    pub per_key: usize,
    /// How long the loop sleeps after a claim that took all that was due.
    pub idle_poll: Duration,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        Self {
            client: DeliveryConfig::default(),
            // An attempt is bounded by the client's timeouts (10 s), so a short
            // lease is safe, and a crash mid-delivery delays a webhook by at most this.
            lease: Duration::from_secs(20),
            // Tasks waiting on a receiver cost little; a receiver that takes
            // the full 10 s holds fewer than twice `per_key` of them.
            concurrency: 512,
            per_key: 32,
            idle_poll: Duration::from_millis(200),
        }
    }
}

#[derive(Clone)]
pub struct Delivery {
    store: SharedStore,
    client: Arc<DeliveryClient>,
    secrets: SecretBox,
    settings: Arc<DeliverySettings>,
}

impl Delivery {
    pub fn new(store: SharedStore, secrets: SecretBox, settings: DeliverySettings) -> Self {
        Self {
            store,
            client: Arc::new(DeliveryClient::new(settings.client)),
            secrets,
            settings: Arc::new(settings),
        }
    }

    /// Claims due events and delivers them all; returns how many were claimed.
    pub async fn run_once(&self) -> StoreResult<usize> {
        let events = self
            .store
            .claim_events(
                self.settings.concurrency as u32,
                self.settings.lease,
                Vec::new(),
            )
            .await?;
        Ok(run_all(events, |event| {
            let this = self.clone();
            async move { this.deliver(event).await }
        })
        .await)
    }

    /// Runs until `shutdown` is notified (`notify_waiters`), then lets the
    /// deliveries in flight finish (each is bounded by the client timeout).
    pub async fn run(self, shutdown: Arc<Notify>) {
        let settings = LoopSettings {
            concurrency: self.settings.concurrency,
            idle_poll: self.settings.idle_poll,
            drain: Duration::from_secs(11),
        };
        let busy = KeysInFlight::default();
        let claim = |free: u32| {
            let store = self.store.clone();
            let lease = self.settings.lease;
            let per_key = self.settings.per_key;
            let full = busy.at(per_key);
            // At most `per_key` a claim: all of one key's would otherwise fit.
            let limit = free.min(per_key as u32);
            async move {
                let some_keys_left_out = !full.is_empty();
                match store.claim_events(limit, lease, full).await {
                    Ok(events) => {
                        let mut claimed = Claimed::of(events, limit);
                        // The left-out keys' events may be due: one of their
                        // deliveries ending is a reason to claim again.
                        if claimed.left == Left::Nothing && some_keys_left_out {
                            claimed.left = Left::UntilASlotFrees;
                        }
                        claimed
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "claiming webhook events failed");
                        Claimed::failed()
                    }
                }
            }
        };
        let start = |event: Event| {
            let this = self.clone();
            let slot = busy.enter(event.key_id);
            Some(async move {
                this.deliver(event).await;
                drop(slot);
            })
        };
        claim_loop(settings, None, shutdown, claim, start).await;
    }

    /// One event, in its own span (`deliver{event=…}`).
    async fn deliver(&self, event: Event) {
        let span = tracing::info_span!("deliver", event = %event.id);
        async {
            if let Err(e) = self.try_deliver(&event).await {
                tracing::error!(error = %e, "recording a delivery failed; retried after the lease");
            }
        }
        .instrument(span)
        .await
    }

    async fn try_deliver(&self, event: &Event) -> StoreResult<()> {
        let key = self.store.api_key(event.key_id).await?;
        let url = key.as_ref().and_then(|k| k.webhook_url.clone());
        // Events of a key without a URL are written skipped; this one lost its
        // URL after it was written (removed, or the key closed).
        let Some(url) = url else {
            let attempt = NewAttempt::no_webhook_url();
            return self.record(event, attempt, EventNext::Skipped).await;
        };
        let key = key.expect("url came from the key");
        let secret = match self
            .secrets
            .open_optional(key.webhook_secret_sealed.as_deref())
        {
            Ok(secret) => secret,
            Err(e) => {
                tracing::error!(key = %key.id, error = %e, "webhook secret cannot be opened; sending unsigned is not allowed");
                let attempt = NewAttempt {
                    url: Some(url),
                    http_status: None,
                    error: Some(
                        "webhook secret cannot be opened with this server's master key".into(),
                    ),
                    latency_ms: 0,
                    response_excerpt: String::new(),
                };
                return self.record(event, attempt, EventNext::Failed).await;
            }
        };
        let outcome = self
            .client
            .deliver(&DeliveryRequest {
                url: &url,
                body: event.payload.as_bytes(),
                secret: secret.as_deref(),
            })
            .await;
        let next = if outcome.delivered {
            EventNext::Delivered
        } else {
            match retry_delay(event.attempts + 1).filter(|_| key.webhook_retries) {
                Some(delay) => EventNext::RetryAtMs(now_ms() + delay.as_millis() as i64),
                None => EventNext::Failed,
            }
        };
        if !outcome.delivered {
            tracing::warn!(error = ?outcome.error, "webhook delivery failed");
        }
        let attempt = NewAttempt {
            url: Some(url),
            http_status: outcome.http_status,
            error: outcome.error,
            latency_ms: outcome.latency_ms,
            response_excerpt: outcome.response_excerpt,
        };
        self.record(event, attempt, next).await
    }

    /// Records an attempt, counted by its result.
    async fn record(&self, event: &Event, attempt: NewAttempt, next: EventNext) -> StoreResult<()> {
        let result = match next {
            EventNext::Delivered => "delivered",
            EventNext::RetryAtMs(_) => "retrying",
            EventNext::Failed => "failed",
            EventNext::Skipped => "skipped",
        };
        self.store.record_delivery(&event.id, attempt, next).await?;
        metrics::counter!("billpay_webhook_deliveries_total", "result" => result).increment(1);
        Ok(())
    }
}

/// Deliveries in flight per key, in this process.
#[derive(Clone, Default)]
struct KeysInFlight(Arc<Mutex<HashMap<KeyId, usize>>>);

impl KeysInFlight {
    /// The keys with `limit` or more deliveries in flight.
    fn at(&self, limit: usize) -> Vec<KeyId> {
        let counts = self.0.lock().expect("in-flight counts poisoned");
        counts
            .iter()
            .filter(|(_, n)| **n >= limit)
            .map(|(key, _)| *key)
            .collect()
    }

    /// Counts one more delivery to `key` until the slot is dropped.
    fn enter(&self, key: KeyId) -> KeySlot {
        *self
            .0
            .lock()
            .expect("in-flight counts poisoned")
            .entry(key)
            .or_default() += 1;
        KeySlot(self.clone(), key)
    }
}

struct KeySlot(KeysInFlight, KeyId);

impl Drop for KeySlot {
    fn drop(&mut self) {
        let mut counts = self.0.0.lock().expect("in-flight counts poisoned");
        if let Some(n) = counts.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.1);
            }
        }
    }
}
