//! Sends the notification outbox (issue 30): claims due notices under a
//! lease, renders each with its template (`billpay_notify::templates`),
//! sends it through the channel of its kind, and records how it went.
//!
//! A send the provider did not take is retried with backoff, with the same
//! message id (the notice's id, so a provider can deduplicate), up to
//! [`MAX_ATTEMPTS`] over about a day; then the notice is `failed`. An
//! address refused for good is suppressed by the store. A notice is sent
//! twice only if the process dies between sending it and recording it.

use crate::claim_loop::{Claimed, LoopSettings, claim_loop, run_all};
use billpay_domain::{Delivery, Kobo, Pin};
use billpay_notify::operator_templates;
use billpay_notify::templates::{Brand, Fields, render};
use billpay_notify::{ChannelKind, Channels, Message, SendError};
use billpay_store::clock::now_ms;
use billpay_store::{Notice, NoticeOutcome, SharedStore, StoreResult, TxLookup};
use billpay_webkit::format::{lagos_time, naira};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tracing::Instrument;

/// Sends tried before a notice is `failed`.
pub const MAX_ATTEMPTS: u32 = 8;

/// The waits between sends, as multiples of `retry_base` (30 s by default:
/// 30 s, 2 min, 10 min, 30 min, 2 h, 6 h, 12 h — about 21 hours in all).
const BACKOFF: [u32; MAX_ATTEMPTS as usize - 1] = [1, 4, 20, 60, 240, 720, 1440];

#[derive(Debug, Clone)]
pub struct NoticeSettings {
    /// Who the messages come from.
    pub brand: Brand,
    /// The settings' brand `brand` was made from: the owner's console
    /// edits (read through the store's `BrandCache`) are laid over it; `None`:
    /// `brand` as it is.
    pub edited_from: Option<billpay_domain::brand::Brand>,
    /// A send is bounded by its channel's timeouts; a crash mid-send delays
    /// a notice by at most this.
    pub lease: Duration,
    /// Sends in flight at once.
    pub concurrency: usize,
    /// The first wait after a failed send (the later ones are multiples).
    pub retry_base: Duration,
}

impl NoticeSettings {
    pub fn new(brand: Brand) -> Self {
        NoticeSettings {
            brand,
            edited_from: None,
            lease: Duration::from_secs(60),
            concurrency: 16,
            retry_base: Duration::from_secs(30),
        }
    }

    /// When to try again after `attempts` sends; `None`: give up.
    pub fn retry_delay(&self, attempts: u32) -> Option<Duration> {
        let step = BACKOFF.get(attempts.checked_sub(1)? as usize)?;
        Some(self.retry_base * *step)
    }
}

#[derive(Clone)]
pub struct Notices {
    store: SharedStore,
    channels: Channels,
    settings: Arc<NoticeSettings>,
    brand_edits: Arc<billpay_store::BrandCache>,
}

impl Notices {
    pub fn new(store: SharedStore, channels: Channels, settings: NoticeSettings) -> Self {
        Notices {
            brand_edits: Arc::new(billpay_store::BrandCache::new(store.clone())),
            store,
            channels,
            settings: Arc::new(settings),
        }
    }

    /// Claims due notices and sends them all; returns how many were claimed.
    pub async fn run_once(&self) -> StoreResult<usize> {
        let limit = self.settings.concurrency as u32;
        let (channels, lease) = (self.channels.configured(), self.settings.lease);
        let notices = self.store.claim_notices(channels, limit, lease).await?;
        Ok(run_all(notices, |notice| {
            let this = self.clone();
            async move { this.send(notice).await }
        })
        .await)
    }

    /// Runs until `shutdown` is notified, then lets the sends in flight finish.
    pub async fn run(self, shutdown: Arc<Notify>) {
        let settings = LoopSettings {
            concurrency: self.settings.concurrency,
            idle_poll: Duration::from_millis(500),
            drain: Duration::from_secs(15),
        };
        let claim = |free: u32| {
            let (store, lease) = (self.store.clone(), self.settings.lease);
            let channels = self.channels.configured();
            async move {
                match store.claim_notices(channels, free, lease).await {
                    Ok(notices) => Claimed::of(notices, free),
                    Err(e) => {
                        tracing::error!(error = %e, "claiming notices failed");
                        Claimed::failed()
                    }
                }
            }
        };
        let start = |notice: Notice| {
            let this = self.clone();
            Some(async move { this.send(notice).await })
        };
        claim_loop(settings, None, shutdown, claim, start).await;
    }

    /// One notice, in its own span (`notice{id=…}`); never logs its text.
    async fn send(&self, notice: Notice) {
        let span = tracing::info_span!("notice", id = %notice.id, kind = %notice.kind);
        async {
            if let Err(e) = self.try_send(&notice).await {
                tracing::error!(error = %e, "recording a notice failed; retried after the lease");
            }
        }
        .instrument(span)
        .await
    }

    async fn try_send(&self, notice: &Notice) -> StoreResult<()> {
        let Some(kind) = ChannelKind::parse(&notice.channel) else {
            let error = format!("unknown channel {:?}", notice.channel);
            return self
                .record(notice, "none", Err(SendError::Permanent(error)))
                .await;
        };
        let Some(channel) = self.channels.for_kind(kind) else {
            let error = format!("no {} channel is configured on this server", kind.as_str());
            return self.give_up(notice, "none", error).await;
        };
        let message = match self.message(notice, kind).await? {
            Ok(message) => message,
            Err(error) => return self.give_up(notice, channel.name(), error).await,
        };
        let sent = channel.send(&message).await;
        self.record(notice, channel.name(), sent).await
    }

    /// The notice written out for `kind`: an operator's alert by its own
    /// templates (`operator_templates`), a customer's notice by `templates`.
    async fn message(
        &self,
        notice: &Notice,
        kind: ChannelKind,
    ) -> StoreResult<Result<Message, String>> {
        let brand = &self.brand().await;
        if notice.kind.starts_with("operator_") {
            return Ok(operator_message(notice, kind, &brand.business_name)
                .ok_or_else(|| format!("no template reads this {:?} notice", notice.kind)));
        }
        let fields = match self.fields(notice).await? {
            Ok(fields) => fields,
            Err(error) => return Ok(Err(error)),
        };
        let address = (notice.id.as_str(), notice.recipient.as_str());
        Ok(render(&notice.kind, kind, address, &fields, brand).map_err(|e| e.to_string()))
    }

    /// The brand the message wears: the settings', with the owner's edits
    /// (as the customer's pages show it).
    async fn brand(&self) -> Brand {
        let Some(settings) = &self.settings.edited_from else {
            return self.settings.brand.clone();
        };
        match self.brand_edits.get().await {
            Ok(edits) => self.settings.brand.with(settings, &edits),
            Err(e) => {
                tracing::warn!(error = %e, "the brand's edits cannot be read: the settings' brand is used");
                self.settings.brand.clone()
            }
        }
    }

    /// What the notice's template reads: its data, and what it names (the
    /// customer, the purchase) as stored now. `Err`: it cannot be written.
    async fn fields(&self, notice: &Notice) -> StoreResult<Result<Fields, String>> {
        let data = &notice.data;
        let text = |name: &str| data.get(name).and_then(Value::as_str).map(str::to_owned);
        let money = |name: &str| naira(Kobo(data.get(name).and_then(Value::as_i64).unwrap_or(0)));
        let mut fields = Fields {
            name: text("name").unwrap_or_default(),
            code: text("code").unwrap_or_default(),
            // A password-reset link, or (`account_exists`) the forgot-password page.
            link: text("link").or_else(|| text("forgot")).unwrap_or_default(),
            amount: money("amount"),
            fee: money("fee"),
            credited: money("credited"),
            balance: money("balance"),
            threshold: money("threshold"),
            prefix: text("prefix").unwrap_or_default(),
            tier: text("tier").unwrap_or_default(),
            until: text("until").map(|at| lagos_time(&at)).unwrap_or_default(),
            webhook_removed: data.get("removed").and_then(Value::as_bool) == Some(true),
            // a schedule's run not made, or the schedule stopped
            product: text("product").unwrap_or_default(),
            recipient: text("recipient").unwrap_or_default(),
            schedule: text("schedule").unwrap_or_default(),
            reason: text("reason").unwrap_or_default(),
            retry: data.get("retry").and_then(Value::as_bool) == Some(true),
            next: text("next").map(|at| lagos_time(&at)).unwrap_or_default(),
            every: text("every").unwrap_or_default(),
            ..Fields::default()
        };
        if let Some(account) = notice.account_id
            && let Some(account) = self.store.account(account).await?
        {
            fields.name = account.name;
        }
        if fields.name.is_empty() {
            fields.name = "there".into();
        }
        if let Some(code) = text("transaction") {
            let lookup = TxLookup::Code(code.clone());
            let Some(tx) = self.store.transaction(None, lookup).await? else {
                return Ok(Err(format!("transaction {code} not found")));
            };
            fields.transaction = tx.code.clone();
            fields.product = tx.label.clone();
            fields.recipient = tx.recipient.clone();
            fields.amount = naira(tx.amount);
            match tx.delivery() {
                Ok(delivery) => delivered(&mut fields, delivery),
                Err(e) => return Ok(Err(e.to_string())),
            }
        }
        Ok(Ok(fields))
    }

    /// A notice that cannot be sent at all: `failed` at once, saying why.
    async fn give_up(&self, notice: &Notice, provider: &str, error: String) -> StoreResult<()> {
        tracing::warn!(%error, "notice cannot be sent");
        let outcome = NoticeOutcome::Failed {
            provider: provider.to_owned(),
            error,
        };
        self.store.record_notice(&notice.id, outcome).await?;
        count(notice, provider, "failed");
        Ok(())
    }

    /// Records a send: sent, retried later, failed after the last attempt,
    /// or refused for good.
    async fn record(
        &self,
        notice: &Notice,
        provider: &str,
        sent: Result<billpay_notify::Sent, SendError>,
    ) -> StoreResult<()> {
        let provider = provider.to_owned();
        let (outcome, label) = match sent {
            Ok(sent) => {
                let provider_id = sent.provider_id;
                (
                    NoticeOutcome::Sent {
                        provider,
                        provider_id,
                    },
                    "sent",
                )
            }
            Err(SendError::Permanent(error)) => {
                tracing::warn!(%error, "the provider refused the address for good");
                (NoticeOutcome::Refused { provider, error }, "refused")
            }
            Err(SendError::Transient(error)) => {
                tracing::warn!(%error, attempts = notice.attempts, "notice not sent");
                match self.settings.retry_delay(notice.attempts) {
                    Some(wait) => {
                        let at_ms = now_ms() + wait.as_millis() as i64;
                        (
                            NoticeOutcome::Retry {
                                provider,
                                error,
                                at_ms,
                            },
                            "retrying",
                        )
                    }
                    None => (NoticeOutcome::Failed { provider, error }, "failed"),
                }
            }
        };
        let name = provider_of(&outcome).to_owned();
        self.store.record_notice(&notice.id, outcome).await?;
        count(notice, &name, label);
        Ok(())
    }
}

/// An operator's alert written for `kind`: an email (subject, text, HTML)
/// or one short SMS.
fn operator_message(notice: &Notice, kind: ChannelKind, business: &str) -> Option<Message> {
    let (kind_name, data) = (notice.kind.as_str(), &notice.data);
    let (subject, text, html) = match kind {
        ChannelKind::Email => {
            let r = operator_templates::render(kind_name, data, business)?;
            (r.subject, r.text, Some(r.html))
        }
        ChannelKind::Sms => {
            let text = operator_templates::render_sms(kind_name, data, business)?;
            (String::new(), text, None)
        }
    };
    Some(Message {
        id: notice.id.clone(),
        to: notice.recipient.clone(),
        subject,
        text,
        html,
    })
}

fn provider_of(outcome: &NoticeOutcome) -> &str {
    match outcome {
        NoticeOutcome::Sent { provider, .. }
        | NoticeOutcome::Retry { provider, .. }
        | NoticeOutcome::Failed { provider, .. }
        | NoticeOutcome::Refused { provider, .. } => provider,
    }
}

/// `billpay_notices_total{channel, provider, outcome}`.
fn count(notice: &Notice, provider: &str, outcome: &'static str) {
    let labels = [
        ("channel", notice.channel.clone()),
        ("provider", provider.to_owned()),
        ("outcome", outcome.to_owned()),
    ];
    metrics::counter!("billpay_notices_total", &labels).increment(1);
}

/// A receipt's token, units and pins.
fn delivered(fields: &mut Fields, delivery: Delivery) {
    fields.units = delivery.units.map(|u| format!("{u:.2}"));
    fields.pins = delivery
        .pins
        .iter()
        .map(|pin| match pin {
            Pin::Card(card) => format!(
                "PIN {} (serial {}, load by {})",
                card.pin, card.serial, card.expires_on
            ),
            Pin::Code(code) => format!("PIN {code}"),
        })
        .collect();
    // Exam pins are also in `pin`, joined: shown once, as pins.
    if fields.pins.is_empty() {
        fields.token = delivery.pin;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backs_off_for_about_a_day_then_gives_up() {
        let brand = Brand {
            business_name: "B".into(),
            support: "s".into(),
            colour: "#0f766e".into(),
            logo_url: None,
            whatsapp_link: None,
        };
        let settings = NoticeSettings::new(brand);
        assert_eq!(settings.retry_delay(1), Some(Duration::from_secs(30)));
        assert_eq!(settings.retry_delay(2), Some(Duration::from_secs(120)));
        let total: Duration = (1..MAX_ATTEMPTS)
            .filter_map(|n| settings.retry_delay(n))
            .sum();
        assert!(total > Duration::from_secs(18 * 3600), "{total:?}");
        assert!(total < Duration::from_secs(26 * 3600), "{total:?}");
        assert_eq!(settings.retry_delay(MAX_ATTEMPTS), None);
        assert_eq!(settings.retry_delay(0), None);
    }
}
