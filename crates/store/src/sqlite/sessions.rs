//! Dashboard sessions, stored by the hash of their token.

use super::SqliteStore;
use super::statements::{execute, query_row};
use crate::clock::{now_ms, now_rfc3339};
use crate::*;
use async_trait::async_trait;
use billpay_domain::AccountId;
use rusqlite::{OptionalExtension, params};

#[async_trait]
impl SessionStore for SqliteStore {
    /// Stores a session, dropping the expired ones first.
    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.engine
            .write(move |conn| {
                execute(conn, "DELETE FROM sessions WHERE expires_at < ?1", [now_ms()])?;
                execute(
                    conn,
                    "INSERT INTO sessions (token_hash, account_id, expires_at, created_at) VALUES (?1, ?2, ?3, ?4)",
                    params![token_hash, account.to_string(), expires_at_ms, now_rfc3339()],
                )?;
                Ok(())
            })
            .await
    }

    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>> {
        let token_hash = token_hash.to_owned();
        self.engine
            .read(move |conn| {
                let sql = "SELECT account_id, expires_at FROM sessions WHERE token_hash = ?1 AND expires_at > ?2";
                let row = |row: &rusqlite::Row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?));
                let found = query_row(conn, sql, params![token_hash, now_ms()], row).optional()?;
                Ok(found.and_then(|(account, expires_at_ms)| Session::from_stored(&account, expires_at_ms)))
            })
            .await
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        let token_hash = token_hash.to_owned();
        self.engine
            .write(move |conn| {
                execute(
                    conn,
                    "DELETE FROM sessions WHERE token_hash = ?1",
                    [token_hash],
                )?;
                Ok(())
            })
            .await
    }
}
