//! Notification channels: how a notice the outbox holds reaches a person.
//!
//! A channel is an outside system (an SMTP server, an SMS gateway) or, for
//! development, a folder; each lives in its own module behind [`Channel`].
//! The outbox (store area `notices`, sent by the worker) renders a notice
//! into a [`Message`] and hands it to the channel of its [`ChannelKind`].
//! A retried send carries the same [`Message::id`], so a provider that
//! deduplicates can.
//!
//! The providers (SMTP, Termii) are registered once in [`registry`], which
//! builds the [`Channels`] a process sends through from its settings.

pub mod mail_dir;
pub mod operator_templates;
pub mod registry;
pub mod smtp;
pub mod templates;
pub mod termii;

use serde::{Deserialize, Serialize};

/// Which kind of address a channel reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    Email,
    Sms,
}

impl ChannelKind {
    /// The name stored in the outbox and shown to operators.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Email => "email",
            ChannelKind::Sms => "sms",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "email" => Some(ChannelKind::Email),
            "sms" => Some(ChannelKind::Sms),
            _ => None,
        }
    }
}

/// One rendered message to one person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The outbox's id for this notice: the same on every retry (an email's
    /// `Message-ID` local part; an SMS's client reference).
    pub id: String,
    /// An email address or a phone number in `234XXXXXXXXXX` form, as the
    /// channel's kind says.
    pub to: String,
    /// An email's subject (an SMS has none).
    pub subject: String,
    /// The plain-text body (an SMS's whole text).
    pub text: String,
    /// An email's HTML body, if it has one.
    pub html: Option<String>,
}

/// What the provider said when a send did not go through.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Worth trying again later (a timeout, a 5xx, a 4xx SMTP reply).
    #[error("{0}")]
    Transient(String),
    /// Never worth retrying to this address (a 5xx SMTP reply for the
    /// recipient, a number the gateway refuses): the outbox marks it.
    #[error("{0}")]
    Permanent(String),
}

/// An accepted send: the provider's own id for it, when it gives one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sent {
    pub provider_id: Option<String>,
}

/// One way of reaching people. Implementations never log a message's body
/// (it may hold a verification code or a token) nor their own secrets.
#[async_trait::async_trait]
pub trait Channel: Send + Sync + 'static {
    /// The kind of address this channel sends to.
    fn kind(&self) -> ChannelKind;
    /// The provider's name for logs, metrics and the console (`smtp`,
    /// `termii`, `mail_dir`).
    fn name(&self) -> &'static str;
    /// Sends one message.
    async fn send(&self, message: &Message) -> Result<Sent, SendError>;
}

/// The channels this process sends through, one per kind at most (built
/// from the settings at start; email falls back to a [`mail_dir::MailDir`]
/// when no SMTP server is configured).
#[derive(Clone, Default)]
pub struct Channels {
    pub email: Option<std::sync::Arc<dyn Channel>>,
    pub sms: Option<std::sync::Arc<dyn Channel>>,
}

impl Channels {
    /// The kinds configured (`email`, `sms`): the notices a worker claims.
    /// A notice of a kind not configured here is never claimed by this
    /// server (left queued for a node that has it), so never failed for it.
    pub fn configured(&self) -> Vec<String> {
        [ChannelKind::Email, ChannelKind::Sms]
            .into_iter()
            .filter(|kind| self.for_kind(*kind).is_some())
            .map(|kind| kind.as_str().to_owned())
            .collect()
    }

    /// The channel that sends to `kind`, if one is configured.
    pub fn for_kind(&self, kind: ChannelKind) -> Option<&dyn Channel> {
        match kind {
            ChannelKind::Email => self.email.as_deref(),
            ChannelKind::Sms => self.sms.as_deref(),
        }
    }
}
