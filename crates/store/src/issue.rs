//! Issuing credentials, the one way every caller does it (API, dashboard,
//! CLI): an API key, a webhook signing secret, a dashboard session. Each is
//! 256 random bits, shown to its owner once and stored only as its SHA-256
//! (keys, session tokens) or sealed under the master key (webhook secrets).

use crate::{ApiKey, KeyChange, NewApiKey, NewLogEntry, Store, StoreResult};
use billpay_domain::keys::{generate_api_key, hash_api_key, random_hex};
use billpay_domain::sealed::SecretBox;
use billpay_domain::{AccountId, KeyId};
use std::time::Duration;

/// A stored credential and its secret, to be shown once.
pub struct Issued<T> {
    pub record: T,
    pub secret: String,
}

/// A new API key of `account`.
pub async fn issue_api_key(
    store: &dyn Store,
    account: AccountId,
    name: Option<String>,
) -> StoreResult<Issued<ApiKey>> {
    let (new, secret) = new_api_key(account, name);
    let record = store.create_api_key(new).await?;
    Ok(Issued { record, secret })
}

/// [`issue_api_key`] with an operator-log line written in the same
/// transaction; its `after` names the key by its display prefix.
pub async fn issue_api_key_logged(
    store: &dyn Store,
    account: AccountId,
    name: Option<String>,
    log: NewLogEntry,
) -> StoreResult<Issued<ApiKey>> {
    let (new, secret) = new_api_key(account, name);
    let log = NewLogEntry {
        after: Some(format!("key {}", new.display_prefix)),
        ..log
    };
    let record = store.create_api_key_logged(new, log).await?;
    Ok(Issued { record, secret })
}

/// The name of the key an account's browser purchases are placed under.
pub const SHOP_KEY_NAME: &str = "Shop (browser purchases)";

/// The key an account's shop purchases are placed under (created with its
/// first transaction PIN, `PinStore::set_transaction_pin`), so each is an
/// API purchase in every table. Its secret is dropped here, never shown nor
/// stored: no API request can be signed with it.
pub fn shop_key(account: AccountId) -> NewApiKey {
    new_api_key(account, Some(SHOP_KEY_NAME.into())).0
}

/// A key to store and its secret (shown once, never stored).
fn new_api_key(account: AccountId, name: Option<String>) -> (NewApiKey, String) {
    let new = generate_api_key();
    let key = NewApiKey {
        account_id: account,
        name,
        key_hash: new.hash,
        display_prefix: new.display_prefix,
    };
    (key, new.secret)
}

/// A new webhook signing secret for `key`, replacing any it had.
pub async fn issue_webhook_secret(
    store: &dyn Store,
    key: KeyId,
    secrets: &SecretBox,
) -> StoreResult<Issued<ApiKey>> {
    issue_webhook_secret_with(store, key, secrets, None).await
}

/// [`issue_webhook_secret`] with an operator log line in the same transaction.
pub async fn issue_webhook_secret_logged(
    store: &dyn Store,
    key: KeyId,
    secrets: &SecretBox,
    log: NewLogEntry,
) -> StoreResult<Issued<ApiKey>> {
    issue_webhook_secret_with(store, key, secrets, Some(log)).await
}

async fn issue_webhook_secret_with(
    store: &dyn Store,
    key: KeyId,
    secrets: &SecretBox,
    log: Option<NewLogEntry>,
) -> StoreResult<Issued<ApiKey>> {
    let secret = format!("whsec_{}", random_hex(32));
    let change = KeyChange::WebhookSecretSealed(Some(secrets.seal(&secret)));
    let key = match log {
        Some(log) => store.update_api_key_logged(key, change, log).await?,
        None => store.update_api_key(key, change).await?,
    };
    Ok(Issued {
        record: key,
        secret,
    })
}

/// A new dashboard session of `account`; answers the token for its cookie.
pub async fn issue_session(
    store: &dyn Store,
    account: AccountId,
    lifetime: Duration,
) -> StoreResult<String> {
    let token = random_hex(32);
    let expires_at_ms = crate::rules::ms_from_now(lifetime);
    store
        .create_session(&session_token_hash(&token), account, expires_at_ms)
        .await?;
    Ok(token)
}

/// The stored form of a session token (as of an API key: SHA-256, hex).
pub fn session_token_hash(token: &str) -> String {
    hash_api_key(token)
}
