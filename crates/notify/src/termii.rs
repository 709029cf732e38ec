//! SMS through Termii (developer.termii.com, "Messaging"): `POST
//! {BASE}/api/sms/send` with JSON `{api_key, to, from, sms, type: "plain",
//! channel}`, `to` international without `+` (`2348031234567`), `from` an
//! approved sender ID, `channel` the route: `dnd` (transactional; reaches DND
//! numbers at any hour; activated on the account by Termii support) by
//! default, `generic` if chosen (promotional; no DND numbers, no MTN at night).
//!
//! Termii's answer is read into a [`TermiiAnswer`] (typed, from the HTTP
//! status and the body) and that into the outbox's outcome: 200 is sent
//! (whatever the body, so a message is never sent twice because a field
//! moved); 400/422 is the message or number refused, `Permanent`; 401 (the
//! key), 404 (an unapproved sender ID), 429, 5xx and no answer are
//! `Transient`. Termii has no idempotency key: a send that timed out after
//! Termii took it may be sent again on retry.
//!
//! Everything Termii-specific is in this file.

use crate::registry::{ChannelSections, Registration};
use crate::{Channel, ChannelKind, Message, SendError, Sent};
use billpay_domain::Phone;
use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Duration;

/// Termii's API host as its messaging pages have published it; an account
/// whose dashboard shows another base URL sets `BILLPAY_TERMII_BASE_URL`.
pub const DEFAULT_BASE_URL: &str = "https://api.ng.termii.com";

/// `[termii]`, `BILLPAY_TERMII_*`. The key is a `SecretString`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct TermiiSettings {
    pub api_key: Option<SecretString>,
    /// The approved sender ID, 3 to 11 characters.
    pub sender_id: Option<String>,
    pub base_url: String,
    /// `dnd` (transactional, the default) or `generic`.
    pub route: String,
    pub timeout_ms: u64,
}

impl Default for TermiiSettings {
    fn default() -> Self {
        TermiiSettings {
            api_key: None,
            sender_id: None,
            base_url: DEFAULT_BASE_URL.into(),
            route: Route::Dnd.as_str().into(),
            timeout_ms: 10_000,
        }
    }
}

impl TermiiSettings {
    fn api_key(&self) -> Option<&str> {
        let key = self.api_key.as_ref()?.expose_secret().trim();
        (!key.is_empty()).then_some(key)
    }

    fn sender_id(&self) -> Option<&str> {
        self.sender_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }

    fn enabled(&self) -> bool {
        self.api_key().is_some() || self.sender_id().is_some()
    }

    fn missing(&self) -> Vec<String> {
        let key = self.api_key().is_none().then_some("BILLPAY_TERMII_API_KEY");
        let sender = self
            .sender_id()
            .is_none()
            .then_some("BILLPAY_TERMII_SENDER_ID");
        key.into_iter().chain(sender).map(String::from).collect()
    }

    fn invalid(&self) -> Vec<String> {
        let route = Route::parse(&self.route).err();
        let sender = self.sender_id().filter(|s| !(3..=11).contains(&s.chars().count())).map(|s| {
            format!("BILLPAY_TERMII_SENDER_ID must be 3 to 11 characters, as Termii approved it (got {s:?})")
        });
        let base = (!self.base_url.starts_with("http://")
            && !self.base_url.starts_with("https://"))
        .then(|| {
            format!(
                "BILLPAY_TERMII_BASE_URL must start https:// (got {:?})",
                self.base_url
            )
        });
        route.into_iter().chain(sender).chain(base).collect()
    }
}

pub const REGISTRATION: Registration = Registration {
    name: "termii",
    title: "Termii SMS",
    kind: ChannelKind::Sms,
    flags: <TermiiFlags as clap::Args>::augment_args,
    enabled: |s| s.termii.enabled(),
    missing: |s| s.termii.missing(),
    invalid: |s| s.termii.invalid(),
    build,
};

/// Termii's flags (only their definitions: the settings layers read them).
#[derive(clap::Args)]
#[allow(dead_code)]
struct TermiiFlags {
    /// Termii API key (Termii dashboard → API settings).
    #[arg(long)]
    termii_api_key: Option<String>,
    /// Termii sender ID, approved by Termii (3 to 11 characters).
    #[arg(long)]
    termii_sender_id: Option<String>,
    /// Termii API base URL (default https://api.ng.termii.com; use the one
    /// your Termii dashboard shows).
    #[arg(long)]
    termii_base_url: Option<String>,
    /// Termii route: dnd (transactional, reaches DND numbers; the default)
    /// or generic (promotional).
    #[arg(long)]
    termii_route: Option<String>,
    /// Longest a Termii call may take, milliseconds (default 10000).
    #[arg(long)]
    termii_timeout_ms: Option<u64>,
}

fn build(sections: &ChannelSections) -> Result<Arc<dyn Channel>, String> {
    let settings = &sections.termii;
    let channel = TermiiChannel {
        http: billpay_outbound::http_client(Duration::from_millis(settings.timeout_ms.max(1)))
            .map_err(|e| format!("Termii: cannot build an HTTP client: {e}"))?,
        base_url: settings.base_url.trim_end_matches('/').to_owned(),
        api_key: SecretString::from(settings.api_key().ok_or("BILLPAY_TERMII_API_KEY")?),
        sender_id: settings
            .sender_id()
            .ok_or("BILLPAY_TERMII_SENDER_ID")?
            .to_owned(),
        route: Route::parse(&settings.route)?,
    };
    tracing::info!(base_url = %channel.base_url, route = channel.route.as_str(), "SMS are sent through Termii");
    Ok(Arc::new(channel))
}

/// Termii's `channel`: the route a message takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Route {
    Dnd,
    Generic,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Dnd => "dnd",
            Route::Generic => "generic",
        }
    }

    fn parse(text: &str) -> Result<Route, String> {
        match text.trim() {
            "dnd" => Ok(Route::Dnd),
            "generic" => Ok(Route::Generic),
            other => Err(format!(
                "BILLPAY_TERMII_ROUTE must be dnd (transactional) or generic, not {other:?}"
            )),
        }
    }
}

/// Sends SMS through one Termii account.
pub struct TermiiChannel {
    http: reqwest::Client,
    base_url: String,
    api_key: SecretString,
    sender_id: String,
    route: Route,
}

/// `POST /api/sms/send`'s body.
#[derive(Serialize)]
struct SendSms<'a> {
    api_key: &'a str,
    to: &'a str,
    from: &'a str,
    sms: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    channel: Route,
}

/// The body of an answer, sent or refused (`message` is the reason then).
/// `message_id` is a string in the docs and a number in some answers, of up
/// to 25 digits (more than a u64): read as written.
#[derive(Debug, Default, Deserialize)]
struct AnswerBody {
    message_id: Option<Box<RawValue>>,
    message: Option<String>,
}

/// A `message_id` as text, whether written as a string or a number.
fn id_text(raw: &RawValue) -> String {
    serde_json::from_str::<String>(raw.get()).unwrap_or_else(|_| raw.get().to_owned())
}

/// Termii's answer to one send, as billpay reads it.
#[derive(Debug, PartialEq, Eq)]
pub enum TermiiAnswer {
    /// 200: taken (its id, when the body gives one).
    Sent { message_id: Option<String> },
    /// 400, 422: this message or number refused.
    Refused { reason: String },
    /// 401: the API key refused.
    BadKey,
    /// 404: usually a sender ID not approved for the account.
    NotFound { reason: String },
    /// 429, 5xx, anything else: Termii's side, for now.
    Unavailable { status: u16, reason: String },
}

impl From<(StatusCode, &str)> for TermiiAnswer {
    fn from((status, body): (StatusCode, &str)) -> Self {
        let parsed: AnswerBody = serde_json::from_str(body).unwrap_or_default();
        let reason = parsed.message.clone().unwrap_or_else(|| shorten(body));
        match status.as_u16() {
            200..=299 => TermiiAnswer::Sent {
                message_id: parsed.message_id.as_deref().map(id_text),
            },
            400 | 422 => TermiiAnswer::Refused { reason },
            401 => TermiiAnswer::BadKey,
            404 => TermiiAnswer::NotFound { reason },
            status => TermiiAnswer::Unavailable { status, reason },
        }
    }
}

impl From<TermiiAnswer> for Result<Sent, SendError> {
    fn from(answer: TermiiAnswer) -> Self {
        match answer {
            TermiiAnswer::Sent { message_id } => Ok(Sent {
                provider_id: message_id,
            }),
            TermiiAnswer::Refused { reason } => Err(SendError::Permanent(format!(
                "Termii refused the message: {reason}"
            ))),
            TermiiAnswer::BadKey => Err(SendError::Transient(
                "Termii refused the API key (401): check BILLPAY_TERMII_API_KEY".into(),
            )),
            TermiiAnswer::NotFound { reason } => Err(SendError::Transient(format!(
                "Termii answered 404 ({reason}): check that BILLPAY_TERMII_SENDER_ID is approved and BILLPAY_TERMII_BASE_URL is your account's"
            ))),
            TermiiAnswer::Unavailable { status, reason } => Err(SendError::Transient(format!(
                "Termii answered {status}: {reason}"
            ))),
        }
    }
}

/// At most 200 characters of an unexpected body, for the operator.
fn shorten(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &body[..at]),
        None if body.is_empty() => "no details".into(),
        None => body.to_owned(),
    }
}

/// A Nigerian mobile number as Termii wants it: `234XXXXXXXXXX`.
pub fn international(phone: &str) -> Result<String, SendError> {
    let phone = Phone::parse(phone).map_err(|e| SendError::Permanent(format!("{phone:?} {e}")))?;
    Ok(format!("234{}", &phone.as_str()[1..]))
}

#[async_trait::async_trait]
impl Channel for TermiiChannel {
    fn kind(&self) -> ChannelKind {
        ChannelKind::Sms
    }

    fn name(&self) -> &'static str {
        "termii"
    }

    async fn send(&self, message: &Message) -> Result<Sent, SendError> {
        let to = international(&message.to)?;
        let body = SendSms {
            api_key: self.api_key.expose_secret(),
            to: &to,
            from: &self.sender_id,
            sms: &message.text,
            kind: "plain",
            channel: self.route,
        };
        let url = format!("{}/api/sms/send", self.base_url);
        // The error of a failed call names the URL, never the body (the key).
        let reply = self.http.post(&url).json(&body).send().await.map_err(|e| {
            SendError::Transient(format!(
                "Termii did not answer ({url}): {}",
                e.without_url()
            ))
        })?;
        let status = reply.status();
        let text = reply.text().await.unwrap_or_default();
        let outcome: Result<Sent, SendError> = TermiiAnswer::from((status, text.as_str())).into();
        tracing::info!(id = %message.id, status = status.as_u16(), sent = outcome.is_ok(), "Termii answered");
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: &str) -> TermiiAnswer {
        TermiiAnswer::from((StatusCode::from_u16(status).unwrap(), body))
    }

    #[test]
    fn both_documented_answer_forms_are_sent_with_their_id() {
        let documented = r#"{"message_id": "9122821270554876574", "message": "Successfully Sent", "balance": 9, "user": "Peter Mcleish"}"#;
        let numeric = r#"{"code": "ok", "message_id": 9122821270554876574, "message": "Successfully Sent", "balance": 77.5, "user": "P"}"#;
        for body in [documented, numeric] {
            assert_eq!(
                answer(200, body),
                TermiiAnswer::Sent {
                    message_id: Some("9122821270554876574".into())
                }
            );
        }
        let long = r#"{"message_id": 3017545719517588296261695, "message": "Successfully Sent"}"#;
        assert_eq!(
            answer(200, long),
            TermiiAnswer::Sent {
                message_id: Some("3017545719517588296261695".into())
            }
        );
        assert_eq!(
            answer(200, "not json"),
            TermiiAnswer::Sent { message_id: None }
        );
    }

    #[test]
    fn refusals_are_permanent_and_the_rest_transient() {
        let outcome = |status, body| Result::<Sent, SendError>::from(answer(status, body));
        let refused = outcome(400, r#"{"message": "Invalid phone number"}"#);
        assert_eq!(
            refused,
            Err(SendError::Permanent(
                "Termii refused the message: Invalid phone number".into()
            ))
        );
        for status in [401, 404, 429, 500, 503] {
            assert!(
                matches!(outcome(status, "{}"), Err(SendError::Transient(_))),
                "{status}"
            );
        }
        let sender = outcome(404, r#"{"message": "ApplicationSenderId not found"}"#);
        assert!(format!("{:?}", sender).contains("SENDER_ID"), "{sender:?}");
    }

    #[test]
    fn numbers_are_international_without_plus() {
        for given in [
            "08031234567",
            "+2348031234567",
            "2348031234567",
            "0803 123 4567",
        ] {
            assert_eq!(international(given).unwrap(), "2348031234567", "{given}");
        }
        assert!(matches!(
            international("12345"),
            Err(SendError::Permanent(_))
        ));
    }
}
