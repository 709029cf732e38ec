//! Notification channels from the settings ([`channels_from_settings`], for
//! `serve` and its workers) and `billpay notify test --email ADDR | --sms
//! PHONE`, which sends one message through the configured channel and
//! prints the provider's answer.

use super::config::Settings;
use super::flags::ChannelFlags;
use super::output::Output;
use billpay_notify::registry;
use billpay_notify::{ChannelKind, Channels, Message, SendError};
use serde_json::json;

/// The channels this process sends through, built from the settings: each
/// configured provider, and email into the mail folder without SMTP. Refused,
/// naming every problem, when a channel is half-configured or malformed.
pub fn channels_from_settings(settings: &Settings) -> anyhow::Result<Channels> {
    let problems = registry::problems(&settings.channels);
    anyhow::ensure!(problems.is_empty(), "{}", problems.join("\n"));
    registry::channels(&settings.channels).map_err(anyhow::Error::msg)
}

/// The channels, named for the start-up log line (`smtp`, `mail_dir`, none).
pub fn describe(channels: &Channels) -> (&'static str, &'static str) {
    let name = |kind| channels.for_kind(kind).map_or("none", |c| c.name());
    (name(ChannelKind::Email), name(ChannelKind::Sms))
}

#[derive(clap::Subcommand, Debug)]
pub enum NotifyCommand {
    /// Send one test email or SMS through the configured channel and print
    /// the provider's answer (exit 1 if it was not sent).
    Test(TestArgs),
}

#[derive(clap::Args, Debug)]
pub struct TestArgs {
    /// Send a test email to this address.
    #[arg(long, required_unless_present = "sms", conflicts_with = "sms")]
    email: Option<String>,
    /// Send a test SMS to this Nigerian number (0803…, 234803…, +234803…).
    #[arg(long)]
    sms: Option<String>,
    #[command(flatten)]
    pub flags: ChannelFlags,
}

pub async fn run(cmd: NotifyCommand, settings: &Settings, out: &Output) -> anyhow::Result<()> {
    let NotifyCommand::Test(args) = cmd;
    let channels = channels_from_settings(settings)?;
    let (kind, to) = match (args.email, args.sms) {
        (Some(email), _) => (ChannelKind::Email, email),
        (None, Some(phone)) => (ChannelKind::Sms, phone),
        (None, None) => {
            let usage = super::output::UsageError("give --email ADDRESS or --sms PHONE".into());
            return Err(usage.into());
        }
    };
    let channel = channels.for_kind(kind).ok_or_else(|| {
        anyhow::anyhow!(
            "no SMS provider is configured: set BILLPAY_TERMII_API_KEY and BILLPAY_TERMII_SENDER_ID"
        )
    })?;
    let message = test_message(kind, &to);
    let what = match kind {
        ChannelKind::Email => "test email",
        ChannelKind::Sms => "test SMS",
    };
    let provider = channel.name();
    match channel.send(&message).await {
        Ok(sent) => {
            let answer = sent.provider_id.unwrap_or_default();
            out.emit(
                json!({ "sent": true, "channel": kind.as_str(), "provider": provider, "to": to, "message_id": message.id, "provider_answer": answer }),
                format!("The {what} to {to} was sent through {provider}: {answer}"),
            );
            Ok(())
        }
        Err(error) => {
            let verdict = match error {
                SendError::Transient(_) => "worth trying again once fixed",
                SendError::Permanent(_) => "refused for good for this address",
            };
            anyhow::bail!("the {what} to {to} was not sent through {provider} ({verdict}): {error}")
        }
    }
}

fn test_message(kind: ChannelKind, to: &str) -> Message {
    let id = format!("test-{}", billpay_domain::keys::random_hex(8));
    let text = match kind {
        ChannelKind::Email => {
            "This is a test message from billpay, sent with `billpay notify test` \
                               to check the email settings. Nothing needs doing."
                .to_owned()
        }
        ChannelKind::Sms => "billpay test message: the SMS settings work.".to_owned(),
    };
    Message {
        id,
        to: to.to_owned(),
        subject: "billpay test message".into(),
        text,
        html: None,
    }
}
