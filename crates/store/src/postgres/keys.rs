//! API keys: created, listed, found by hash (authentication), changed.

use super::PostgresStore;
use super::connection::{PgTx, execute, map_opt, map_rows, query, query_opt};
use super::error::PgResult;
use super::rows::{api_key, get};
use super::wallet::balance_of;
use crate::clock::now_rfc3339;
use crate::columns::{KEY_ACCOUNT_STATUS, KEY_COLUMNS, key_with_account_status};
use crate::*;
use async_trait::async_trait;
use billpay_domain::{AccountId, KeyId};
use deadpool_postgres::GenericClient;
use std::sync::LazyLock;

#[async_trait]
impl KeyStore for PostgresStore {
    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey> {
        self.create_api_key_with(new, None).await
    }

    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
        self.autocommit(|c| Box::pin(by_id_in(c, id))).await
    }

    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>> {
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at"
                );
                map_rows(query(c, &sql, &[&account.to_string()]).await?, api_key)
            })
        })
        .await
    }

    /// The key with this hash and its account's status.
    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>> {
        static SQL: LazyLock<String> = LazyLock::new(|| key_with_account_status("$1"));
        let key_hash = key_hash.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let Some(row) = query_opt(c, &SQL, &[&key_hash]).await? else {
                    return Ok(None);
                };
                let status: String = get(&row, KEY_ACCOUNT_STATUS)?;
                let status = status.parse().map_err(StoreError::Backend)?;
                Ok(Some((api_key(&row)?, status)))
            })
        })
        .await
    }

    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey> {
        self.update_api_key_with(id, change, None).await
    }

    /// Stamps `last_used_at`.
    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()> {
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "UPDATE api_keys SET last_used_at = $1 WHERE id = $2";
                execute(c, sql, &[&now_rfc3339(), &id.to_string()]).await?;
                Ok(())
            })
        })
        .await
    }
}

impl PostgresStore {
    /// A new key, with `log` in the same transaction when given.
    pub(super) async fn create_api_key_with(
        &self,
        new: NewApiKey,
        log: Option<NewLogEntry>,
    ) -> StoreResult<ApiKey> {
        let id = KeyId::new();
        let created_at = now_rfc3339();
        self
            .write(move |tx| {
                let (new, created_at, log) = (new.clone(), created_at.clone(), log.clone());
                Box::pin(async move {
                    balance_of(tx, new.account_id, false).await?; // the account must exist
                    let sql = "INSERT INTO api_keys (id, account_id, name, key_hash, display_prefix, status, created_at)
                               VALUES ($1, $2, $3, $4, $5, 'active', $6)";
                    let (key, account) = (id.to_string(), new.account_id.to_string());
                    let params: super::connection::Params =
                        &[&key, &account, &new.name, &new.key_hash, &new.display_prefix, &created_at];
                    execute(tx, sql, params).await?;
                    if let Some(log) = log {
                        super::operators::append_in(tx, &log).await?;
                    }
                    by_id_in(tx, id).await?.ok_or(StoreError::NotFound("API key").into())
                })
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
        self.write(move |tx| {
            let (change, log) = (change.clone(), log.clone());
            Box::pin(async move {
                let changed = apply(tx, &id.to_string(), change).await? > 0;
                let key = rules::key_change_outcome(changed, by_id_in(tx, id).await?)?;
                if let Some(log) = log {
                    super::operators::append_in(tx, &log).await?;
                }
                Ok(key)
            })
        })
        .await
    }
}

async fn by_id_in<C: GenericClient>(c: &C, id: KeyId) -> PgResult<Option<ApiKey>> {
    let sql = format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1");
    map_opt(query_opt(c, &sql, &[&id.to_string()]).await?, api_key)
}

/// Applies one change; answers the rows changed.
async fn apply(tx: &PgTx<'_>, key: &String, change: KeyChange) -> PgResult<u64> {
    match change {
        // Revocation is final.
        KeyChange::Status(status) => {
            let sql = "UPDATE api_keys SET status = $1 WHERE id = $2 AND status <> 'revoked'";
            execute(tx, sql, &[&status.as_str(), key]).await
        }
        KeyChange::RateLimit(limit) => {
            let per_second = limit.map(|l| l.per_second.min(i32::MAX as u32) as i32);
            let burst = limit.map(|l| l.burst.min(i32::MAX as u32) as i32);
            let sql = "UPDATE api_keys SET rate_per_second = $1, rate_burst = $2 WHERE id = $3";
            execute(tx, sql, &[&per_second, &burst, key]).await
        }
        KeyChange::WebhookUrl(url) => {
            let sql = "UPDATE api_keys SET webhook_url = $1 WHERE id = $2";
            execute(tx, sql, &[&url, key]).await
        }
        KeyChange::WebhookSecretSealed(sealed) => {
            let sql = "UPDATE api_keys SET webhook_secret_sealed = $1 WHERE id = $2";
            execute(tx, sql, &[&sealed, key]).await
        }
        KeyChange::WebhookRetries(on) => {
            let sql = "UPDATE api_keys SET webhook_retries = $1 WHERE id = $2";
            execute(tx, sql, &[&on, key]).await
        }
    }
}
