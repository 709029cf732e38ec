//! `billpay key …`

use super::{Output, Settings};
use billpay_domain::{AccountId, KeyId};
use billpay_store::issue::{issue_api_key, issue_webhook_secret};
use billpay_store::{KeyChange, KeyStatus, RateLimit, SharedStore};
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
    let (key_id, change, text) = match cmd {
        KeyCommand::Create { account, name } => {
            let issued = issue_api_key(store.as_ref(), account, name).await?;
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
            (key_id, KeyChange::Status(KeyStatus::Suspended), "suspended")
        }
        KeyCommand::Reactivate { key_id } => {
            (key_id, KeyChange::Status(KeyStatus::Active), "reactivated")
        }
        KeyCommand::Revoke { key_id } => (key_id, KeyChange::Status(KeyStatus::Revoked), "revoked"),
        KeyCommand::SetRateLimit {
            key_id,
            per_second,
            burst,
        } => {
            anyhow::ensure!(
                per_second > 0 && burst > 0,
                "--per-second and --burst must be at least 1"
            );
            (
                key_id,
                KeyChange::RateLimit(Some(RateLimit { per_second, burst })),
                "rate limit updated",
            )
        }
        KeyCommand::Webhook { key_id, url } => {
            let url = url.trim().to_owned();
            if !url.is_empty() {
                billpay_webhooks::validate_url(&url)?;
            }
            let cleared = url.is_empty();
            (
                key_id,
                KeyChange::WebhookUrl((!cleared).then_some(url)),
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
                    KeyChange::WebhookSecretSealed(None),
                    "webhook signatures disabled",
                )
            } else {
                let secrets = settings.secret_box()?;
                let secret = issue_webhook_secret(store.as_ref(), key_id, &secrets)
                    .await?
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
            KeyChange::WebhookRetries(enable),
            if enable {
                "webhook retries enabled"
            } else {
                "webhook retries disabled"
            },
        ),
    };
    let key = store.update_api_key(key_id, change).await?;
    out.emit(json!({ "key_id": key.id, "status": key.status, "rate_limit": key.rate_limit, "webhook_url": key.webhook_url,
        "webhook_signing": key.webhook_secret_sealed.is_some(), "webhook_retries": key.webhook_retries }),
        format!("Key {key_id}: {text}"));
    Ok(())
}
