//! Accounts: created, found by id or e-mail (any case), suspended, re-passworded.

use super::PostgresStore;
use super::connection::{Params, execute, map_opt, query_opt};
use super::error::PgResult;
use super::rows::account;
use crate::clock::now_rfc3339;
use crate::columns::ACCOUNT_COLUMNS;
use crate::*;
use async_trait::async_trait;
use billpay_domain::AccountId;
use deadpool_postgres::GenericClient;

#[async_trait]
impl AccountStore for PostgresStore {
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account> {
        self.create_account_with(new, None).await
    }

    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = $1");
        find(self, sql, id.to_string()).await
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE lower(email) = lower($1)");
        find(self, sql, email.to_owned()).await
    }

    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()> {
        self.write(move |tx| Box::pin(set_status_in(tx, id, status)))
            .await
    }

    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()> {
        self.write(move |tx| {
            let password_hash = password_hash.clone();
            Box::pin(async move {
                let sql = "UPDATE accounts SET password_hash = $1 WHERE id = $2";
                match execute(tx, sql, &[&password_hash, &id.to_string()]).await? {
                    0 => Err(StoreError::NotFound("account").into()),
                    _ => end_sessions(tx, id).await,
                }
            })
        })
        .await
    }
}

async fn find(store: &PostgresStore, sql: String, key: String) -> StoreResult<Option<Account>> {
    store
        .autocommit(|c| {
            Box::pin(async move { map_opt(query_opt(c, &sql, &[&key]).await?, account) })
        })
        .await
}

/// A password change or a suspension signs the account out everywhere.
/// Sets an account's status inside the caller's transaction (suspending ends its sessions).
pub(super) async fn set_status_in<C: GenericClient>(
    c: &C,
    id: AccountId,
    status: AccountStatus,
) -> PgResult<()> {
    let sql = "UPDATE accounts SET status = $1 WHERE id = $2";
    match execute(c, sql, &[&status.as_str(), &id.to_string()]).await? {
        0 => Err(StoreError::NotFound("account").into()),
        _ if status == AccountStatus::Suspended => end_sessions(c, id).await,
        _ => Ok(()),
    }
}

async fn end_sessions<C: GenericClient>(c: &C, id: AccountId) -> PgResult<()> {
    let id = id.to_string();
    execute(c, "DELETE FROM sessions WHERE account_id = $1", &[&id]).await?;
    Ok(())
}

impl PostgresStore {
    /// [`AccountStore::create_account`], with `log` in the same transaction
    /// when given (its subject the new account's id).
    pub(super) async fn create_account_with(
        &self,
        new: NewAccount,
        log: Option<NewLogEntry>,
    ) -> StoreResult<Account> {
        let id = AccountId::new().to_string();
        let created_at = now_rfc3339();
        self.write(move |tx| {
            let (id, new, created_at) = (id.clone(), new.clone(), created_at.clone());
            let log = log.clone();
            Box::pin(async move {
                let sql = format!(
                    "INSERT INTO accounts (id, name, email, password_hash, status, created_at)
                         VALUES ($1, $2, $3, $4, 'active', $5) ON CONFLICT DO NOTHING
                         RETURNING {ACCOUNT_COLUMNS}"
                );
                let params: Params = &[&id, &new.name, &new.email, &new.password_hash, &created_at];
                let Some(row) = query_opt(tx, &sql, params).await? else {
                    return Err(rules::email_taken(&new.email).into());
                };
                if let Some(log) = log {
                    let log = NewLogEntry {
                        subject: id.clone(),
                        ..log
                    };
                    super::operators::append_in(tx, &log).await?;
                }
                account(&row)
            })
        })
        .await
    }
}
