//! Issuing credentials, the one way every caller does it (API, dashboard,
//! CLI): an API key, a webhook signing secret, a dashboard session. Each is
//! 256 random bits, shown to its owner once and stored only as its SHA-256
//! (keys, session tokens) or sealed under the master key (webhook secrets).

use crate::work;
use crate::{
    Account, ApiKey, EmailCode, KeyChange, NewApiKey, NewLogEntry, NewPasswordReset, NoticeDraft,
    ResetPurpose, Store, StoreResult,
};
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
    let record = store
        .write((new, log), |tx, (new, log)| {
            Box::pin(work::create_api_key_logged(tx, new, log))
        })
        .await?;
    Ok(Issued { record, secret })
}

/// The name of the key an account's browser purchases are placed under.
pub const SHOP_KEY_NAME: &str = "Shop (browser purchases)";

/// The key an account's shop purchases are placed under (created with its
/// first transaction PIN, `PinStore::set_transaction_pin`), so each is an
/// API purchase in every table. Its secret is dropped here, never shown nor
/// stored: no API request can be signed with it.
pub fn shop_key(account: AccountId) -> NewApiKey {
    NewApiKey {
        // no "a new API key was created … revoke it": it cannot be revoked,
        // nor used by anyone
        announce: false,
        ..new_api_key(account, Some(SHOP_KEY_NAME.into())).0
    }
}

/// A key to store and its secret (shown once, never stored).
fn new_api_key(account: AccountId, name: Option<String>) -> (NewApiKey, String) {
    let new = generate_api_key();
    let key = NewApiKey {
        account_id: account,
        name,
        key_hash: new.hash,
        display_prefix: new.display_prefix,
        announce: true,
    };
    (key, new.secret)
}

/// A new webhook signing secret for `key`, replacing any it had.
pub async fn issue_webhook_secret(
    store: &dyn Store,
    key: KeyId,
    secrets: &SecretBox,
) -> StoreResult<Issued<ApiKey>> {
    let (change, secret) = new_webhook_secret(secrets);
    let record = store.update_api_key(key, change).await?;
    Ok(Issued { record, secret })
}

/// [`issue_webhook_secret`] with an operator log line in the same transaction.
pub async fn issue_webhook_secret_logged(
    store: &dyn Store,
    key: KeyId,
    secrets: &SecretBox,
    log: NewLogEntry,
) -> StoreResult<Issued<ApiKey>> {
    let (change, secret) = new_webhook_secret(secrets);
    let record = store
        .write((key, change, log), |tx, (key, change, log)| {
            Box::pin(work::update_api_key_logged(tx, *key, change, log))
        })
        .await?;
    Ok(Issued { record, secret })
}

/// The key's change that stores a new signing secret (sealed), and the secret.
fn new_webhook_secret(secrets: &SecretBox) -> (KeyChange, String) {
    let secret = format!("whsec_{}", random_hex(32));
    let change = KeyChange::WebhookSecretSealed(Some(secrets.seal(&secret)));
    (change, secret)
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

/// How long an emailed code that proves an address is good for.
pub const EMAIL_CODE_LIFETIME: Duration = Duration::from_secs(30 * 60);
/// How long a password-reset link is good for.
pub const RESET_LINK_LIFETIME: Duration = Duration::from_secs(30 * 60);
/// Tries of one emailed code before a new one must be asked for.
pub const EMAIL_CODE_TRIES: u32 = 5;
/// The notice that carries a code that proves an address.
pub const EMAIL_VERIFICATION: &str = "email_verification";
/// The notice that carries a password-reset link.
pub const PASSWORD_RESET: &str = "password_reset";
/// The notice that carries a transaction-PIN reset link.
pub const PIN_RESET: &str = "pin_reset";

/// A new 6-digit code for `name`'s address: the code in clear (it travels
/// only in the notice, sealed) and what is stored.
pub fn new_email_code(name: &str) -> (String, EmailCode) {
    use rand::Rng;
    let code = format!("{:06}", rand::rng().random_range(0..1_000_000u32));
    let stored = EmailCode {
        code_hash: email_code_hash(&code),
        expires_at_ms: crate::rules::ms_from_now(EMAIL_CODE_LIFETIME),
        notice: NoticeDraft {
            kind: EMAIL_VERIFICATION.into(),
            data: serde_json::json!({ "name": name, "code": code }),
        },
    };
    (code, stored)
}

/// The notice that carries a code proving a phone for SMS notices.
pub const PHONE_VERIFICATION: &str = "phone_verification";

/// A new 6-digit code proving a phone, as [`new_email_code`] (its hash is
/// [`email_code_hash`]'s, checked only against one account's live phone
/// code, [`EMAIL_CODE_TRIES`] times at most): the code and what is stored.
pub fn new_phone_code() -> (String, EmailCode) {
    let (code, mut stored) = new_email_code("");
    stored.notice = NoticeDraft {
        kind: PHONE_VERIFICATION.into(),
        data: serde_json::json!({ "code": code }),
    };
    (code, stored)
}

/// The stored form of an emailed code (SHA-256, hex; the code is checked
/// only against one account's live code, a bounded number of times).
pub fn email_code_hash(code: &str) -> String {
    hash_api_key(&format!("email-code:{}", code.trim()))
}

/// A fresh code proving `email` for `account` (its own address, or a new
/// one), sent to that address.
pub async fn issue_email_code(
    store: &dyn Store,
    account: &Account,
    email: &str,
) -> StoreResult<()> {
    let (_, code) = new_email_code(&account.name);
    store.issue_email_code(account.id, email, code).await
}

/// A single-use password-reset link for `account`, emailed to its
/// address: `{public_url}/dashboard/reset/{token}` (256 random bits; only
/// its hash is stored). `log`: support sent it from the console.
pub async fn issue_password_reset(
    store: &dyn Store,
    account: &Account,
    public_url: &str,
    log: Option<NewLogEntry>,
) -> StoreResult<()> {
    let link = ResetLink::new(public_url, ResetPurpose::Password);
    store.start_password_reset(link.stored(account, log)).await
}

/// A single-use link that resets `account`'s transaction PIN (with the
/// password), emailed to its address: `{public_url}/dashboard/pin/reset/{token}`.
/// The same link as a password reset's, for the PIN only.
pub async fn issue_pin_reset(
    store: &dyn Store,
    account: &Account,
    public_url: &str,
) -> StoreResult<()> {
    let link = ResetLink::new(public_url, ResetPurpose::Pin);
    store.start_password_reset(link.stored(account, None)).await
}

/// A reset link's token and address, before it is stored.
struct ResetLink {
    token: String,
    url: String,
    purpose: ResetPurpose,
}

impl ResetLink {
    fn new(public_url: &str, purpose: ResetPurpose) -> Self {
        let token = random_hex(32);
        let path = match purpose {
            ResetPurpose::Password => "dashboard/reset",
            ResetPurpose::Pin => "dashboard/pin/reset",
        };
        let url = format!("{}/{path}/{token}", public_url.trim_end_matches('/'));
        ResetLink {
            token,
            url,
            purpose,
        }
    }

    /// What is stored: the token's hash, and the notice that carries the link.
    fn stored(self, account: &Account, log: Option<NewLogEntry>) -> NewPasswordReset {
        let kind = match self.purpose {
            ResetPurpose::Password => PASSWORD_RESET,
            ResetPurpose::Pin => PIN_RESET,
        };
        NewPasswordReset {
            account_id: account.id,
            token_hash: reset_token_hash(&self.token),
            expires_at_ms: crate::rules::ms_from_now(RESET_LINK_LIFETIME),
            purpose: self.purpose,
            notice: NoticeDraft {
                kind: kind.into(),
                data: serde_json::json!({ "name": account.name, "link": self.url }),
            },
            log,
        }
    }
}

/// The stored form of a reset link's token (SHA-256, hex).
pub fn reset_token_hash(token: &str) -> String {
    hash_api_key(&format!("reset:{token}"))
}
