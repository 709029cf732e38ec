//! Delivers outbox events to the webhook URL of the key that made the purchase.
//!
//! Each event is sent in its own task, so a slow or dead receiver never holds
//! up deliveries to others. Every attempt is logged. By default a failure is
//! final (as the spec says: dropped and logged); a key that opted into retries
//! is retried on the Standard Webhooks schedule. An event is sent twice only if
//! the process dies between sending it and recording the attempt.

use crate::claim_loop::{LoopSettings, claim_loop, run_all};
use billpay_domain::sealed::SecretBox;
use billpay_store::clock::now_ms;
use billpay_store::{Event, EventNext, NewAttempt, SharedStore, StoreResult};
use billpay_webhooks::{DeliveryClient, DeliveryConfig, DeliveryRequest, retry_delay};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

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
            idle_poll: Duration::from_millis(200),
            drain: Duration::from_secs(11),
        };
        let claim = |free: u32| {
            let store = self.store.clone();
            let lease = self.settings.lease;
            async move {
                store.claim_events(free, lease).await.unwrap_or_else(|e| {
                    tracing::error!(error = %e, "claiming webhook events failed");
                    Vec::new()
                })
            }
        };
        let start = |event: Event| {
            let this = self.clone();
            Some(async move { this.deliver(event).await })
        };
        claim_loop(settings, None, shutdown, claim, start).await;
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
            tracing::warn!(event = %event.id, error = ?outcome.error, "webhook delivery failed");
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
