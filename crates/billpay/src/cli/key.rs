//! `billpay key …`

use super::output::action_error;
use super::{Output, Settings};
use billpay_domain::{AccountId, KeyId};
use billpay_operations::Actor;
use billpay_operations::keys::{self, KeyUpdate};
use billpay_store::{KeyStatus, SharedStore};
use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum KeyCommand {
    /// Create an API key; the key is shown once.
    Create {
        #[arg(long)]
        account: AccountId,
        /// A label for the key.
        #[arg(long)]
        name: Option<String>,
    },
    /// Suspend a key (403 `suspended` until reactivated).
    Suspend { key_id: KeyId },
    /// Reactivate a suspended key.
    Reactivate { key_id: KeyId },
    /// Revoke a key for good (401 `invalid_api_key`).
    Revoke { key_id: KeyId },
    /// Override the default rate limit for a key.
    SetRateLimit {
        key_id: KeyId,
        #[arg(long)]
        per_second: u32,
        #[arg(long)]
        burst: u32,
    },
    /// Set the webhook URL (`--url ''` clears it).
    Webhook {
        key_id: KeyId,
        #[arg(long)]
        url: String,
    },
    /// Turn webhook signatures on (a new secret, shown once) or off.
    WebhookSecurity {
        key_id: KeyId,
        #[arg(long, conflicts_with = "disable", required_unless_present = "disable")]
        enable: bool,
        #[arg(long)]
        disable: bool,
    },
    /// Opt in to (or out of) automatic redelivery of failed webhooks.
    WebhookRetries {
        key_id: KeyId,
        #[arg(long, conflicts_with = "disable", required_unless_present = "disable")]
        enable: bool,
        #[arg(long)]
        disable: bool,
    },
}

pub async fn run(
    cmd: KeyCommand,
    store: &SharedStore,
    settings: &Settings,
    out: &Output,
) -> anyhow::Result<()> {
    let store = store.as_ref();
    let (key_id, update, text) = match cmd {
        KeyCommand::Create { account, name } => {
            let issued = keys::create(store, Actor::Cli, account, name)
                .await
                .map_err(action_error)?;
            let (key, secret) = (issued.record, issued.secret);
            out.emit(
                json!({ "key_id": key.id, "api_key": secret, "account_id": account }),
                format!(
                    "Created key {}\nAPI key (shown once, store it now): {}",
                    key.id, secret
                ),
            );
            return Ok(());
        }
        KeyCommand::Suspend { key_id } => {
            (key_id, KeyUpdate::Status(KeyStatus::Suspended), "suspended")
        }
        KeyCommand::Reactivate { key_id } => {
            (key_id, KeyUpdate::Status(KeyStatus::Active), "reactivated")
        }
        KeyCommand::Revoke { key_id } => (key_id, KeyUpdate::Status(KeyStatus::Revoked), "revoked"),
        KeyCommand::SetRateLimit {
            key_id,
            per_second,
            burst,
        } => (
            key_id,
            KeyUpdate::RateLimit { per_second, burst },
            "rate limit updated",
        ),
        KeyCommand::Webhook { key_id, url } => {
            let cleared = url.trim().is_empty();
            (
                key_id,
                KeyUpdate::WebhookUrl(url),
                if cleared {
                    "webhook URL cleared"
                } else {
                    "webhook URL set"
                },
            )
        }
        KeyCommand::WebhookSecurity { key_id, enable, .. } => {
            if !enable {
                (
                    key_id,
                    KeyUpdate::DisableSigning,
                    "webhook signatures disabled",
                )
            } else {
                let secrets = settings.secret_box()?;
                let secret = keys::enable_signing(store, Actor::Cli, key_id, &secrets)
                    .await
                    .map_err(action_error)?
                    .secret;
                out.emit(
                    json!({ "key_id": key_id, "webhook_secret": secret }),
                    format!("Webhook signatures enabled for {key_id}\nWebhook secret (shown once): {secret}"),
                );
                return Ok(());
            }
        }
        KeyCommand::WebhookRetries { key_id, enable, .. } => (
            key_id,
            KeyUpdate::WebhookRetries(enable),
            if enable {
                "webhook retries enabled"
            } else {
                "webhook retries disabled"
            },
        ),
    };
    let key = keys::update(store, Actor::Cli, key_id, update)
        .await
        .map_err(action_error)?;
    out.emit(json!({ "key_id": key.id, "status": key.status, "rate_limit": key.rate_limit, "webhook_url": key.webhook_url,
        "webhook_signing": key.webhook_secret_sealed.is_some(), "webhook_retries": key.webhook_retries }),
        format!("Key {key_id}: {text}"));
    Ok(())
}
