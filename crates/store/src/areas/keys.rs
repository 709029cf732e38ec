//! API keys: created, listed, found by hash (authentication), changed.

use super::notices::{self, Owner};
use crate::clock::{new_code, now_rfc3339};
use crate::columns::{KEY_ACCOUNT_STATUS, KEY_COLUMNS, key_with_account_status};
use crate::db::{Column, One, Param, ReadTx, Tx, for_both_engines, width};
use crate::rows::api_key;
use crate::*;
use billpay_domain::{AccountId, KeyId};
use std::sync::LazyLock;

for_both_engines! {
    pub trait KeyStore {
        fn create_api_key(new: NewApiKey) -> ApiKey = write |tx| create(tx, &new);
        fn api_key(id: KeyId) -> Option<ApiKey> = read |tx| by_id(tx, id);
        fn api_keys(account: AccountId) -> Vec<ApiKey> = read |tx| of_account(tx, account);
        /// The key with this hash and its account's status: a point read on
        /// the request path (callers stamp its last use with `touch_api_key`).
        fn authenticate(key_hash: &str) -> Option<(ApiKey, AccountStatus)>
            = here |tx| authenticate(tx, &key_hash);
        /// Refused with [`StoreError::KeyRevoked`] for a revoked key.
        fn update_api_key(id: KeyId, change: KeyChange) -> ApiKey
            = write |tx| update(tx, id, &change);
        /// Stamps `last_used_at` (callers throttle this; it is a write).
        fn touch_api_key(id: KeyId) -> () = statement |tx| touch(tx, id);
    }
}

/// A new key, and its owner's security notice (unless `new.announce` is
/// off: the shop's own key, made with a first PIN).
pub(crate) async fn create<T: Tx>(tx: &T, new: &NewApiKey) -> Result<ApiKey, T::Error> {
    super::wallet::balance_of(tx, new.account_id).await?; // the account must exist
    let id = KeyId::new();
    let sql =
        "INSERT INTO api_keys (id, account_id, name, key_hash, display_prefix, status, created_at)
               VALUES (?1, ?2, ?3, ?4, ?5, 'active', ?6)";
    let (key, account, now) = (id.to_string(), new.account_id.to_string(), now_rfc3339());
    let params: [&dyn Param; 6] = [
        &key,
        &account,
        &new.name,
        &new.key_hash,
        &new.display_prefix,
        &now,
    ];
    tx.execute(sql, &params).await?;
    if new.announce {
        // the prefix only: the key's name is the customer's text, never quoted
        let data = serde_json::json!({ "prefix": new.display_prefix });
        let cause = format!("key:{key}:created");
        let owner = Owner::Account(new.account_id);
        notices::for_account(
            tx,
            owner,
            NoticeTopic::Security,
            "api_key_created",
            &cause,
            &data,
        )
        .await?;
    }
    Ok(by_id(tx, id)
        .await?
        .ok_or(StoreError::NotFound("API key"))?)
}

/// Applies `change`.
pub(crate) async fn update<T: Tx>(
    tx: &T,
    id: KeyId,
    change: &KeyChange,
) -> Result<ApiKey, T::Error> {
    let changed = apply(tx, &id.to_string(), change).await? > 0;
    let key = rules::key_change_outcome(changed, by_id(tx, id).await?)?;
    if let KeyChange::WebhookUrl(url) = change {
        webhook_url_changed(tx, &key, url.as_deref()).await?;
    }
    Ok(key)
}

/// The security notice of a webhook URL change: each change is its own
/// cause. The URL is not quoted (the customer typed it): only whether it
/// was removed.
async fn webhook_url_changed<T: Tx>(
    tx: &T,
    key: &ApiKey,
    url: Option<&str>,
) -> Result<(), T::Error> {
    let data = serde_json::json!({
        "prefix": key.display_prefix,
        "removed": url.is_none(),
    });
    let cause = format!("key:{}:webhook:{}", key.id, new_code("WU"));
    let owner = Owner::Account(key.account_id);
    let kind = "webhook_url_changed";
    notices::for_account(tx, owner, NoticeTopic::Security, kind, &cause, &data).await
}

pub(crate) async fn by_id<T: ReadTx>(tx: &T, id: KeyId) -> Result<Option<ApiKey>, T::Error> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"));
    tx.query_opt(&SQL, &[&id.to_string()], api_key).await
}

async fn of_account<T: ReadTx>(tx: &T, account: AccountId) -> Result<Vec<ApiKey>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = ?1 ORDER BY created_at")
    });
    tx.query_all(&SQL, &[&account.to_string()], api_key).await
}

async fn authenticate<T: ReadTx>(
    tx: &T,
    key_hash: &str,
) -> Result<Option<(ApiKey, AccountStatus)>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| key_with_account_status("?1"));
    const STATUS: Column = Column {
        index: width(KEY_COLUMNS),
        name: KEY_ACCOUNT_STATUS,
    };
    tx.query_opt(&SQL, &[&key_hash], |row| {
        Ok((api_key(row)?, row.parsed::<AccountStatus>(STATUS)?))
    })
    .await
}

async fn touch<T: Tx>(tx: One<'_, T>, id: KeyId) -> Result<(), T::Error> {
    let sql = "UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2";
    tx.execute(sql, &[&now_rfc3339(), &id.to_string()]).await?;
    Ok(())
}

/// Applies one change; answers the rows changed.
async fn apply<T: Tx>(tx: &T, key: &String, change: &KeyChange) -> Result<u64, T::Error> {
    match change {
        // Revocation is final.
        KeyChange::Status(status) => {
            let sql = "UPDATE api_keys SET status = ?1 WHERE id = ?2 AND status <> 'revoked'";
            tx.execute(sql, &[&status.as_str(), key]).await
        }
        KeyChange::RateLimit(limit) => {
            // INTEGER columns: PostgreSQL binds an i32.
            let per_second = limit.map(|l| l.per_second.min(i32::MAX as u32) as i32);
            let burst = limit.map(|l| l.burst.min(i32::MAX as u32) as i32);
            let sql = "UPDATE api_keys SET rate_per_second = ?1, rate_burst = ?2 WHERE id = ?3";
            tx.execute(sql, &[&per_second, &burst, key]).await
        }
        KeyChange::WebhookUrl(url) => {
            let sql = "UPDATE api_keys SET webhook_url = ?1 WHERE id = ?2";
            tx.execute(sql, &[url, key]).await
        }
        KeyChange::WebhookSecretSealed(sealed) => {
            let sql = "UPDATE api_keys SET webhook_secret_sealed = ?1 WHERE id = ?2";
            tx.execute(sql, &[sealed, key]).await
        }
        KeyChange::WebhookRetries(on) => {
            let sql = "UPDATE api_keys SET webhook_retries = ?1 WHERE id = ?2";
            tx.execute(sql, &[on, key]).await
        }
    }
}
