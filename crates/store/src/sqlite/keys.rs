//! API keys: created, listed, found by hash (authentication), changed.

use super::SqliteStore;
use super::rows::api_key;
use super::statements::{collect, execute, query_row};
use super::wallet::balance_of;
use crate::clock::now_rfc3339;
use crate::columns::{KEY_ACCOUNT_STATUS, KEY_COLUMNS, key_with_account_status};
use crate::*;
use async_trait::async_trait;
use billpay_domain::{AccountId, KeyId};
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::LazyLock;

#[async_trait]
impl KeyStore for SqliteStore {
    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey> {
        self.create_api_key_with(new, None).await
    }

    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
        self.engine.read(move |conn| by_id_in(conn, id)).await
    }

    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>> {
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = ?1 ORDER BY created_at"
                );
                collect(conn, &sql, [account.to_string()], api_key)
            })
            .await
    }

    /// The key with this hash and its account's status: a point read on the
    /// request path, so on this thread's own connection.
    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>> {
        static SQL: LazyLock<String> = LazyLock::new(|| key_with_account_status("?1"));
        let found = self.engine.read_here(|conn| {
            let found = query_row(conn, &SQL, [key_hash], |row| {
                let status: String = row.get(KEY_ACCOUNT_STATUS)?;
                Ok((api_key(row)?, status))
            });
            Ok(found.optional()?)
        })?;
        let Some((key, status)) = found else {
            return Ok(None);
        };
        let status = status.parse().map_err(StoreError::Backend)?;
        Ok(Some((key, status)))
    }

    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey> {
        self.update_api_key_with(id, change, None).await
    }

    /// Stamps `last_used_at`.
    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()> {
        self.engine
            .write(move |conn| {
                let sql = "UPDATE api_keys SET last_used_at = ?1 WHERE id = ?2";
                execute(conn, sql, params![now_rfc3339(), id.to_string()])?;
                Ok(())
            })
            .await
    }
}

impl SqliteStore {
    /// A new key, with `log` in the same transaction when given.
    pub(super) async fn create_api_key_with(
        &self,
        new: NewApiKey,
        log: Option<NewLogEntry>,
    ) -> StoreResult<ApiKey> {
        self.engine
            .write(move |conn| {
                balance_of(conn, new.account_id)?; // the account must exist
                let id = KeyId::new();
                execute(
                    conn,
                    "INSERT INTO api_keys (id, account_id, name, key_hash, display_prefix, status, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'active', ?6)",
                    params![
                        id.to_string(),
                        new.account_id.to_string(),
                        new.name,
                        new.key_hash,
                        new.display_prefix,
                        now_rfc3339()
                    ],
                )?;
                if let Some(log) = &log {
                    super::operators::append_in(conn, log)?;
                }
                by_id_in(conn, id)?.ok_or(StoreError::NotFound("API key"))
            })
            .await
    }

    /// Applies `change`, with `log` in the same transaction when given.
    pub(super) async fn update_api_key_with(
        &self,
        id: KeyId,
        change: KeyChange,
        log: Option<NewLogEntry>,
    ) -> StoreResult<ApiKey> {
        self.engine
            .write(move |conn| {
                let changed = apply(conn, id.to_string(), change)? > 0;
                let key = rules::key_change_outcome(changed, by_id_in(conn, id)?)?;
                if let Some(log) = &log {
                    super::operators::append_in(conn, log)?;
                }
                Ok(key)
            })
            .await
    }
}

fn by_id_in(conn: &Connection, id: KeyId) -> StoreResult<Option<ApiKey>> {
    let sql = format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1");
    Ok(query_row(conn, &sql, [id.to_string()], api_key).optional()?)
}

/// Applies one change; answers the rows changed.
fn apply(conn: &Connection, key: String, change: KeyChange) -> StoreResult<usize> {
    let changed = match change {
        // Revocation is final.
        KeyChange::Status(status) => execute(
            conn,
            "UPDATE api_keys SET status = ?1 WHERE id = ?2 AND status != 'revoked'",
            params![status.as_str(), key],
        ),
        KeyChange::RateLimit(limit) => execute(
            conn,
            "UPDATE api_keys SET rate_per_second = ?1, rate_burst = ?2 WHERE id = ?3",
            params![limit.map(|l| l.per_second), limit.map(|l| l.burst), key],
        ),
        KeyChange::WebhookUrl(url) => execute(
            conn,
            "UPDATE api_keys SET webhook_url = ?1 WHERE id = ?2",
            params![url, key],
        ),
        KeyChange::WebhookSecretSealed(sealed) => execute(
            conn,
            "UPDATE api_keys SET webhook_secret_sealed = ?1 WHERE id = ?2",
            params![sealed, key],
        ),
        KeyChange::WebhookRetries(on) => execute(
            conn,
            "UPDATE api_keys SET webhook_retries = ?1 WHERE id = ?2",
            params![on, key],
        ),
    };
    Ok(changed?)
}
