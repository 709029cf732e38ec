//! API keys: issue one, change its status, rate limit and webhook settings.

use crate::{Actor, OpsResult, Permission, invalid};
use billpay_domain::sealed::SecretBox;
use billpay_domain::{AccountId, KeyId};
use billpay_store::issue::{Issued, issue_api_key_logged, issue_webhook_secret_logged};
use billpay_store::work;
use billpay_store::{ApiKey, KeyChange, KeyStatus, RateLimit, Store};

/// What an operator changes on a key.
#[derive(Debug, Clone)]
pub enum KeyUpdate {
    Status(KeyStatus),
    /// Overrides the default rate limit; both at least 1.
    RateLimit {
        per_second: u32,
        burst: u32,
    },
    /// The webhook URL; empty (after trimming) clears it.
    WebhookUrl(String),
    /// Signatures off (on is [`enable_signing`]: it issues a secret).
    DisableSigning,
    WebhookRetries(bool),
}

/// A new API key of `account`, logged in the same transaction; its secret
/// is to be shown once.
pub async fn create(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    name: Option<String>,
) -> OpsResult<Issued<ApiKey>> {
    actor.require(Permission::ManageAccounts)?;
    let log = actor.log("key.create", account.to_string());
    let issued = issue_api_key_logged(store, account, name, log).await?;
    tracing::info!(%actor, %account, key = %issued.record.id, "API key created");
    Ok(issued)
}

/// Applies `update` to `key`, logged in the same transaction; answers the
/// key as it now is.
pub async fn update(
    store: &dyn Store,
    actor: Actor,
    key: KeyId,
    update: KeyUpdate,
) -> OpsResult<ApiKey> {
    actor.require(Permission::ManageAccounts)?;
    let what = update.name();
    let change = change_of(update)?;
    let mut log = actor.log("key.update", key.to_string());
    log.after = Some(what.to_owned());
    let updated = store
        .write((key, change, log), |tx, (key, change, log)| {
            Box::pin(work::update_api_key_logged(tx, *key, change, log))
        })
        .await?;
    tracing::info!(%actor, %key, change = what, "API key changed");
    Ok(updated)
}

/// Webhook signatures on: a new secret (replacing any), to be shown once.
pub async fn enable_signing(
    store: &dyn Store,
    actor: Actor,
    key: KeyId,
    secrets: &SecretBox,
) -> OpsResult<Issued<ApiKey>> {
    actor.require(Permission::ManageAccounts)?;
    let mut log = actor.log("key.update", key.to_string());
    log.after = Some("webhook signing on (new secret)".to_owned());
    let issued = issue_webhook_secret_logged(store, key, secrets, log).await?;
    tracing::info!(%actor, %key, "webhook signing enabled");
    Ok(issued)
}

/// The store's change for an update, once its input is checked.
fn change_of(update: KeyUpdate) -> OpsResult<KeyChange> {
    Ok(match update {
        KeyUpdate::Status(status) => KeyChange::Status(status),
        KeyUpdate::RateLimit { per_second, burst } => {
            if per_second == 0 || burst == 0 {
                return Err(invalid(&["per_second", "burst"], "must be at least 1"));
            }
            KeyChange::RateLimit(Some(RateLimit { per_second, burst }))
        }
        KeyUpdate::WebhookUrl(url) => {
            let url = url.trim();
            if url.is_empty() {
                KeyChange::WebhookUrl(None)
            } else {
                billpay_webhooks::validate_url(url)?;
                KeyChange::WebhookUrl(Some(url.to_owned()))
            }
        }
        KeyUpdate::DisableSigning => KeyChange::WebhookSecretSealed(None),
        KeyUpdate::WebhookRetries(on) => KeyChange::WebhookRetries(on),
    })
}

impl KeyUpdate {
    /// For the log: which setting changed (never its value: a URL may carry a token).
    fn name(&self) -> &'static str {
        match self {
            KeyUpdate::Status(KeyStatus::Active) => "reactivated",
            KeyUpdate::Status(KeyStatus::Suspended) => "suspended",
            KeyUpdate::Status(KeyStatus::Revoked) => "revoked",
            KeyUpdate::RateLimit { .. } => "rate limit",
            KeyUpdate::WebhookUrl(_) => "webhook URL",
            KeyUpdate::DisableSigning => "webhook signing off",
            KeyUpdate::WebhookRetries(_) => "webhook retries",
        }
    }
}
