//! Accounts: created, found by id or e-mail, suspended, re-passworded.

use super::SqliteStore;
use super::engine::Engine;
use super::rows::account;
use super::statements::{execute, query_row};
use crate::clock::now_rfc3339;
use crate::columns::ACCOUNT_COLUMNS;
use crate::*;
use async_trait::async_trait;
use billpay_domain::AccountId;
use rusqlite::{Connection, OptionalExtension, params};

#[async_trait]
impl AccountStore for SqliteStore {
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account> {
        self.create_account_with(new, None).await
    }

    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1");
        find(&self.engine, sql, id.to_string()).await
    }

    /// The `email` column is `COLLATE NOCASE`: any case finds it.
    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE email = ?1");
        find(&self.engine, sql, email.to_owned()).await
    }

    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()> {
        self.engine
            .write(move |conn| set_status_in(conn, id, status))
            .await
    }

    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()> {
        self.engine
            .write(move |conn| {
                let sql = "UPDATE accounts SET password_hash = ?1 WHERE id = ?2";
                match execute(conn, sql, params![password_hash, id.to_string()])? {
                    0 => Err(StoreError::NotFound("account")),
                    _ => end_sessions(conn, id),
                }
            })
            .await
    }
}

async fn find(engine: &Engine, sql: String, key: String) -> StoreResult<Option<Account>> {
    engine
        .read(move |conn| Ok(query_row(conn, &sql, [key], account).optional()?))
        .await
}

/// A password change or a suspension signs the account out everywhere.
/// Sets an account's status inside the caller's transaction (suspending ends its sessions).
pub(super) fn set_status_in(
    conn: &Connection,
    id: AccountId,
    status: AccountStatus,
) -> StoreResult<()> {
    let sql = "UPDATE accounts SET status = ?1 WHERE id = ?2";
    match execute(conn, sql, params![status.as_str(), id.to_string()])? {
        0 => Err(StoreError::NotFound("account")),
        _ if status == AccountStatus::Suspended => end_sessions(conn, id),
        _ => Ok(()),
    }
}

fn end_sessions(conn: &Connection, id: AccountId) -> StoreResult<()> {
    let sql = "DELETE FROM sessions WHERE account_id = ?1";
    execute(conn, sql, [id.to_string()])?;
    Ok(())
}

impl SqliteStore {
    /// [`AccountStore::create_account`], with `log` in the same transaction
    /// when given (its subject the new account's id).
    pub(super) async fn create_account_with(
        &self,
        new: NewAccount,
        log: Option<NewLogEntry>,
    ) -> StoreResult<Account> {
        self.engine
            .write(move |conn| {
                let id = AccountId::new();
                let inserted = execute(
                    conn,
                    "INSERT INTO accounts (id, name, email, password_hash, status, created_at)
                     VALUES (?1, ?2, ?3, ?4, 'active', ?5) ON CONFLICT (email) DO NOTHING",
                    params![
                        id.to_string(),
                        new.name,
                        new.email,
                        new.password_hash,
                        now_rfc3339()
                    ],
                )?;
                if inserted == 0 {
                    return Err(rules::email_taken(&new.email));
                }
                if let Some(log) = &log {
                    let log = NewLogEntry {
                        subject: id.to_string(),
                        ..log.clone()
                    };
                    super::operators::append_in(conn, &log)?;
                }
                let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1");
                Ok(query_row(conn, &sql, [id.to_string()], account)?)
            })
            .await
    }
}
