//! Delivers outbox events to the webhook URL of the key that made the purchase.
//!
//! Each event is sent in its own task, so a slow or dead receiver never holds
//! up deliveries to others. Every attempt is logged. By default a failure is
//! final (as the spec says: dropped and logged); a key that opted into retries
//! is retried on the Standard Webhooks schedule. An event is sent twice only if
//! the process dies between sending it and recording the attempt.

use billpay_domain::sealed::SecretBox;
use billpay_store::clock::now_ms;
use billpay_store::{Event, EventNext, NewAttempt, SharedStore, StoreResult};
use billpay_webhooks::{DeliveryClient, DeliveryConfig, DeliveryRequest, retry_delay};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

#[derive(Debug, Clone)]
pub struct DeliverySettings {
    pub client: DeliveryConfig,
    pub lease: Duration,
    /// Deliveries in flight at once.
    pub concurrency: usize,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        Self {
            client: DeliveryConfig::default(),
            // An attempt is bounded by the client's timeouts (10 s), so a short
            // lease is safe, and a crash mid-delivery delays a webhook by at most this.
            lease: Duration::from_secs(20),
            concurrency: 128,
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
            .claim_events(self.settings.concurrency as u32, self.settings.lease)
            .await?;
        let count = events.len();
        let mut tasks = JoinSet::new();
        for event in events {
            let this = self.clone();
            tasks.spawn(async move { this.deliver(event).await });
        }
        tasks.join_all().await;
        Ok(count)
    }

    /// Runs until `shutdown` is notified (`notify_waiters`), then lets the
    /// deliveries in flight finish (each is bounded by the client timeout).
    pub async fn run(self, shutdown: Arc<Notify>) {
        // Registered once, before the loop: a `notify_waiters()` that lands
        // while the loop is busy claiming (not parked in the `select!`) is
        // still seen. A `notified()` made afresh in each `select!` would miss
        // it, and the process would never finish shutting down.
        let stop = shutdown.notified();
        tokio::pin!(stop);
        stop.as_mut().enable();
        let permits = Arc::new(Semaphore::new(self.settings.concurrency));
        let mut tasks = JoinSet::new();
        loop {
            while tasks.try_join_next().is_some() {}
            let free = permits.available_permits().min(64) as u32;
            let events = if free == 0 {
                Vec::new()
            } else {
                self.store
                    .claim_events(free, self.settings.lease)
                    .await
                    .unwrap_or_else(|e| {
                        tracing::error!(error = %e, "claiming webhook events failed");
                        Vec::new()
                    })
            };
            let idle = events.is_empty();
            for event in events {
                let permit = permits
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("semaphore open");
                let this = self.clone();
                tasks.spawn(async move {
                    this.deliver(event).await;
                    drop(permit);
                });
            }
            if idle {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                    _ = stop.as_mut() => break,
                }
            } else {
                // Busy: do not sleep, but do not miss a shutdown either.
                tokio::select! {
                    biased;
                    _ = stop.as_mut() => break,
                    _ = std::future::ready(()) => {}
                }
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(11), tasks.join_all()).await;
    }

    async fn deliver(&self, event: Event) {
        if let Err(e) = self.try_deliver(&event).await {
            tracing::error!(event = %event.id, error = %e, "recording a delivery failed; retried after the lease");
        }
    }

    async fn try_deliver(&self, event: &Event) -> StoreResult<()> {
        let key = self.store.api_key(event.key_id).await?;
        let url = key.as_ref().and_then(|k| k.webhook_url.clone());
        let Some(url) = url else {
            let attempt = NewAttempt {
                url: None,
                http_status: None,
                error: Some("no webhook URL configured on the API key".into()),
                latency_ms: 0,
                response_excerpt: String::new(),
            };
            return self
                .store
                .record_delivery(&event.id, attempt, EventNext::Skipped)
                .await;
        };
        let key = key.expect("url came from the key");
        let secret = match key
            .webhook_secret_sealed
            .as_deref()
            .map(|s| self.secrets.open(s))
        {
            Some(Ok(secret)) => Some(secret),
            Some(Err(e)) => {
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
                return self
                    .store
                    .record_delivery(&event.id, attempt, EventNext::Failed)
                    .await;
            }
            None => None,
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
            tracing::warn!(event = %event.id, error = ?outcome.error, "webhook delivery failed");
        }
        let attempt = NewAttempt {
            url: Some(url),
            http_status: outcome.http_status,
            error: outcome.error,
            latency_ms: outcome.latency_ms,
            response_excerpt: outcome.response_excerpt,
        };
        self.store.record_delivery(&event.id, attempt, next).await
    }
}
