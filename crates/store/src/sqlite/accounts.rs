//! Accounts: created, found by id or e-mail, suspended, re-passworded.

use super::engine::Engine;
use super::rows::account;
use super::statements::{execute, query_row};
use crate::clock::now_rfc3339;
use crate::columns::ACCOUNT_COLUMNS;
use crate::*;
use billpay_domain::AccountId;
use rusqlite::{Connection, OptionalExtension, params};

pub(super) async fn create(engine: &Engine, new: NewAccount) -> StoreResult<Account> {
    engine
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
            let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1");
            Ok(query_row(conn, &sql, [id.to_string()], account)?)
        })
        .await
}

pub(super) async fn by_id(engine: &Engine, id: AccountId) -> StoreResult<Option<Account>> {
    let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1");
    find(engine, sql, id.to_string()).await
}

/// The `email` column is `COLLATE NOCASE`: any case finds it.
pub(super) async fn by_email(engine: &Engine, email: &str) -> StoreResult<Option<Account>> {
    let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE email = ?1");
    find(engine, sql, email.to_owned()).await
}

async fn find(engine: &Engine, sql: String, key: String) -> StoreResult<Option<Account>> {
    engine
        .read(move |conn| Ok(query_row(conn, &sql, [key], account).optional()?))
        .await
}

pub(super) async fn set_status(
    engine: &Engine,
    id: AccountId,
    status: AccountStatus,
) -> StoreResult<()> {
    engine
        .write(move |conn| {
            let sql = "UPDATE accounts SET status = ?1 WHERE id = ?2";
            match execute(conn, sql, params![status.as_str(), id.to_string()])? {
                0 => Err(StoreError::NotFound("account")),
                _ if status == AccountStatus::Suspended => end_sessions(conn, id),
                _ => Ok(()),
            }
        })
        .await
}

pub(super) async fn set_password(
    engine: &Engine,
    id: AccountId,
    password_hash: String,
) -> StoreResult<()> {
    engine
        .write(move |conn| {
            let sql = "UPDATE accounts SET password_hash = ?1 WHERE id = ?2";
            match execute(conn, sql, params![password_hash, id.to_string()])? {
                0 => Err(StoreError::NotFound("account")),
                _ => end_sessions(conn, id),
            }
        })
        .await
}

/// A password change or a suspension signs the account out everywhere.
fn end_sessions(conn: &Connection, id: AccountId) -> StoreResult<()> {
    let sql = "DELETE FROM sessions WHERE account_id = ?1";
    execute(conn, sql, [id.to_string()])?;
    Ok(())
}
