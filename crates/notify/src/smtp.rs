//! Email over SMTP submission (lettre, rustls): `BILLPAY_SMTP_URL` says
//! where and how, `BILLPAY_EMAIL_FROM` who from.
//!
//! - `smtps://user:pass@host:465`: TLS from the first byte (port 465 by default);
//! - `smtp://user:pass@host:587`: STARTTLS, required (a server that does not
//!   offer it is refused, never spoken to in clear; port 587 by default);
//! - `smtp://host:25?tls=none`: no TLS at all, for a relay on this machine or
//!   the private network; with a user and password only to a loopback host,
//!   so a password never crosses a network in clear.
//!
//! Each message's `Message-ID` is `<id@from-domain>` from [`Message::id`], so
//! a retry is the same message. Replies: a 4xx, a timeout or a lost
//! connection is [`SendError::Transient`]; 550/551/553 (the recipient's
//! mailbox refused) is [`SendError::Permanent`]; any other 5xx (refused
//! credentials, a sender the server does not accept) is the configuration's
//! fault, not the address's, so it is `Transient` with the server's words.

use crate::registry::{ChannelSections, Registration};
use crate::{Channel, ChannelKind, Message, SendError, Sent};
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// SMTP replies that refuse the recipient's mailbox for good (RFC 5321
/// 4.2.2: 550 unavailable, 551 not local, 553 name not allowed).
const RECIPIENT_REFUSED: &[u16] = &[550, 551, 553];

/// `[smtp]`, `BILLPAY_SMTP_*`. The URL holds the password: a `SecretString`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct SmtpSettings {
    pub url: Option<SecretString>,
    /// Longest a connection or a reply may take.
    pub timeout_secs: u64,
}

impl Default for SmtpSettings {
    fn default() -> Self {
        SmtpSettings {
            url: None,
            timeout_secs: 30,
        }
    }
}

impl SmtpSettings {
    fn url(&self) -> Option<&str> {
        let url = self.url.as_ref()?.expose_secret().trim();
        (!url.is_empty()).then_some(url)
    }
}

pub const REGISTRATION: Registration = Registration {
    name: "smtp",
    title: "SMTP email",
    kind: ChannelKind::Email,
    flags: <SmtpFlags as clap::Args>::augment_args,
    enabled: |s| s.smtp.url().is_some(),
    missing: |s| {
        let from = s
            .email
            .mailbox()
            .is_none()
            .then(|| "BILLPAY_EMAIL_FROM".to_owned());
        from.into_iter().collect()
    },
    invalid: |s| {
        s.smtp
            .url()
            .and_then(|url| SmtpUrl::parse(url).err())
            .into_iter()
            .collect()
    },
    build,
};

/// The SMTP flags (only their definitions: the settings layers read them).
#[derive(clap::Args)]
#[allow(dead_code)]
struct SmtpFlags {
    /// SMTP server: smtps://user:pass@host:465 (TLS), smtp://user:pass@host:587
    /// (STARTTLS, required) or smtp://host:25?tls=none (a local relay).
    #[arg(long)]
    smtp_url: Option<String>,
    /// Longest an SMTP connection or reply may take, seconds (default 30).
    #[arg(long)]
    smtp_timeout_secs: Option<u64>,
}

fn build(sections: &ChannelSections) -> Result<Arc<dyn Channel>, String> {
    let url = sections.smtp.url().ok_or("BILLPAY_SMTP_URL is not set")?;
    let from = sections
        .email
        .mailbox()
        .ok_or("SMTP email needs BILLPAY_EMAIL_FROM")??;
    let timeout = Duration::from_secs(sections.smtp.timeout_secs.max(1));
    let channel = SmtpChannel::new(&SmtpUrl::parse(url)?, from, timeout)?;
    tracing::info!(server = %channel.server, "emails are sent over SMTP");
    Ok(Arc::new(channel))
}

/// How the connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    /// `smtps://`: TLS from the first byte.
    ImplicitTls,
    /// `smtp://`: STARTTLS, required.
    StartTls,
    /// `smtp://…?tls=none`: in clear (a local relay).
    None,
}

/// `BILLPAY_SMTP_URL`, read. Its `Debug` shows no password.
#[derive(Clone)]
pub struct SmtpUrl {
    pub host: String,
    pub port: u16,
    pub security: Security,
    pub user: Option<String>,
    password: Option<SecretString>,
}

impl std::fmt::Debug for SmtpUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpUrl")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl SmtpUrl {
    /// Reads the URL; the error names what is wrong, never the password.
    pub fn parse(text: &str) -> Result<SmtpUrl, String> {
        let problem = |what: &str| format!("BILLPAY_SMTP_URL {what}");
        let url = url::Url::parse(text).map_err(|_| {
            problem(
                "must look like smtps://user:password@host:465 or smtp://user:password@host:587",
            )
        })?;
        let (mut security, default_port) = match url.scheme() {
            "smtps" => (Security::ImplicitTls, 465),
            "smtp" => (Security::StartTls, 587),
            other => {
                return Err(problem(&format!(
                    "must start smtps:// or smtp://, not {other}://"
                )));
            }
        };
        for (key, value) in url.query_pairs() {
            match (key.as_ref(), value.as_ref(), security) {
                ("tls", "none", Security::StartTls) => security = Security::None,
                _ => {
                    return Err(problem(
                        "takes only `?tls=none`, with smtp:// (a local relay)",
                    ));
                }
            }
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| problem("names no host"))?;
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let user = Some(decode(url.username())).filter(|u| !u.is_empty());
        let password = url.password().map(|p| SecretString::from(decode(p)));
        if user.is_some() != password.is_some() {
            return Err(problem("needs both a user and a password, or neither"));
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        if security == Security::None && password.is_some() && !is_loopback(&host) {
            return Err(problem(
                "sends a password in clear (`?tls=none`) to a host that is not this machine: use smtps:// or smtp:// with STARTTLS",
            ));
        }
        Ok(SmtpUrl {
            port: url.port().unwrap_or(default_port),
            host,
            security,
            user,
            password,
        })
    }

    fn tls(&self) -> Result<Tls, String> {
        let parameters = || {
            TlsParameters::new(self.host.clone())
                .map_err(|e| format!("SMTP TLS for {}: {e}", self.host))
        };
        Ok(match self.security {
            Security::ImplicitTls => Tls::Wrapper(parameters()?),
            Security::StartTls => Tls::Required(parameters()?),
            Security::None => Tls::None,
        })
    }
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Sends through one SMTP server.
pub struct SmtpChannel {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// The domain of `Message-ID`s: the sender's.
    domain: String,
    /// `host:port`, for logs and errors.
    server: String,
}

impl SmtpChannel {
    pub fn new(url: &SmtpUrl, from: Mailbox, timeout: Duration) -> Result<SmtpChannel, String> {
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&url.host)
            .port(url.port)
            .tls(url.tls()?)
            .timeout(Some(timeout));
        if let (Some(user), Some(password)) = (&url.user, &url.password) {
            let password = password.expose_secret().to_owned();
            builder = builder.credentials(Credentials::new(user.clone(), password));
        }
        Ok(SmtpChannel {
            transport: builder.build(),
            domain: from.email.domain().to_owned(),
            from,
            server: format!("{}:{}", url.host, url.port),
        })
    }

    /// The message as an email: a plain text body, or text and HTML as
    /// multipart/alternative.
    fn email(&self, message: &Message) -> Result<lettre::Message, SendError> {
        let to: Mailbox = message.to.parse().map_err(|_| {
            SendError::Permanent(format!("{:?} is not an email address", message.to))
        })?;
        let builder = lettre::Message::builder()
            .message_id(Some(format!(
                "<{}@{}>",
                local_part(&message.id),
                self.domain
            )))
            .from(self.from.clone())
            .to(to)
            .subject(message.subject.clone());
        let built = match &message.html {
            Some(html) => builder.multipart(MultiPart::alternative_plain_html(
                message.text.clone(),
                html.clone(),
            )),
            None => builder
                .header(ContentType::TEXT_PLAIN)
                .body(message.text.clone()),
        };
        built.map_err(|e| SendError::Permanent(format!("cannot write the email: {e}")))
    }
}

/// `id` as a `Message-ID` local part: letters, digits, `-`, `_`, `.`.
fn local_part(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A failed send, classified (module docs).
fn classify(server: &str, error: &lettre::transport::smtp::Error) -> SendError {
    let text = format!("SMTP server {server}: {error}");
    match error.status().map(u16::from) {
        Some(code) if RECIPIENT_REFUSED.contains(&code) => SendError::Permanent(text),
        _ => SendError::Transient(text),
    }
}

#[async_trait::async_trait]
impl Channel for SmtpChannel {
    fn kind(&self) -> ChannelKind {
        ChannelKind::Email
    }

    fn name(&self) -> &'static str {
        "smtp"
    }

    async fn send(&self, message: &Message) -> Result<Sent, SendError> {
        let email = self.email(message)?;
        match self.transport.send(email).await {
            Ok(reply) => {
                let said = reply.message().collect::<Vec<_>>().join(" ");
                tracing::info!(server = %self.server, id = %message.id, "email accepted by the SMTP server");
                Ok(Sent {
                    provider_id: Some(format!("{} {said}", reply.code()).trim().to_owned()),
                })
            }
            Err(error) => Err(classify(&self.server, &error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_chooses_the_security_and_the_port() {
        let tls = SmtpUrl::parse("smtps://u:p@mail.example.com").unwrap();
        assert_eq!((tls.security, tls.port), (Security::ImplicitTls, 465));
        let start = SmtpUrl::parse("smtp://apikey:p%40ss@smtp.sendgrid.net").unwrap();
        assert_eq!((start.security, start.port), (Security::StartTls, 587));
        assert_eq!(start.user.as_deref(), Some("apikey"));
        assert_eq!(start.password.unwrap().expose_secret(), "p@ss");
        let relay = SmtpUrl::parse("smtp://relay.internal:25?tls=none").unwrap();
        assert_eq!((relay.security, relay.port), (Security::None, 25));
        let local = SmtpUrl::parse("smtp://u:p@127.0.0.1:2525?tls=none").unwrap();
        assert_eq!(local.security, Security::None);
    }

    #[test]
    fn a_bad_url_is_named_without_its_password() {
        for bad in [
            "http://u:secret-1@mail.example.com",
            "smtp://u:secret-1@mail.example.com?tls=none",
            "smtps://u:secret-1@mail.example.com?tls=none",
            "smtp://u:secret-1@mail.example.com?starttls=off",
            "smtp://u@mail.example.com",
            "smtp//u:secret-1@",
        ] {
            let error = SmtpUrl::parse(bad).unwrap_err();
            assert!(error.starts_with("BILLPAY_SMTP_URL"), "{bad}: {error}");
            assert!(!error.contains("secret-1"), "{bad}: {error}");
        }
        let printed = format!("{:?}", SmtpUrl::parse("smtps://u:secret-1@h").unwrap());
        assert!(!printed.contains("secret-1"), "{printed}");
    }

    #[test]
    fn message_ids_are_safe_local_parts() {
        assert_eq!(local_part("n-1/2 x"), "n-1_2_x");
    }
}
