//! Dashboard sessions, stored by the hash of their token.

use super::PostgresStore;
use super::connection::{Params, execute, query_opt};
use super::rows::get;
use crate::clock::{now_ms, now_rfc3339};
use crate::*;
use async_trait::async_trait;
use billpay_domain::AccountId;

#[async_trait]
impl SessionStore for PostgresStore {
    /// Stores a session, dropping the expired ones first.
    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.write(move |tx| {
            let token_hash = token_hash.clone();
            Box::pin(async move {
                let expired = "DELETE FROM sessions WHERE expires_at < $1";
                execute(tx, expired, &[&now_ms()]).await?;
                let insert = "INSERT INTO sessions (token_hash, account_id, expires_at, created_at)
                                  VALUES ($1, $2, $3, $4)";
                let (account, now) = (account.to_string(), now_rfc3339());
                let params: Params = &[&token_hash, &account, &expires_at_ms, &now];
                execute(tx, insert, params).await?;
                Ok(())
            })
        })
        .await
    }

    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>> {
        let token_hash = token_hash.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "SELECT account_id, expires_at FROM sessions
                               WHERE token_hash = $1 AND expires_at > $2";
                let Some(row) = query_opt(c, sql, &[&token_hash, &now_ms()]).await? else {
                    return Ok(None);
                };
                let account: String = get(&row, 0)?;
                Ok(Session::from_stored(&account, get(&row, 1)?))
            })
        })
        .await
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "DELETE FROM sessions WHERE token_hash = $1";
                execute(c, sql, &[&token_hash]).await?;
                Ok(())
            })
        })
        .await
    }
}
