//! Accounts: created (an operator's, with developer access; a sign-up turns
//! it off, `account_care::sign_up`), found by id or e-mail (any case),
//! suspended, re-passworded.

use crate::clock::now_rfc3339;
use crate::columns::ACCOUNT_COLUMNS;
use crate::db::{Engine, Param, PerEngine, ReadTx, Tx, col, for_both_engines};
use crate::rows::account;
use crate::*;
use billpay_domain::AccountId;
use std::sync::LazyLock;

for_both_engines! {
    pub trait AccountStore {
        fn create_account(new: NewAccount) -> Account = write |tx| create(tx, &new);
        fn account(id: AccountId) -> Option<Account> = read |tx| by_id(tx, id);
        fn account_by_email(email: &str) -> Option<Account> = read |tx| by_email(tx, &email);
        fn set_account_status(id: AccountId, status: AccountStatus) -> ()
            = write |tx| set_status(tx, id, status);
        fn set_account_password(id: AccountId, password_hash: String) -> ()
            = write |tx| set_password(tx, id, &password_hash);
    }
}

/// A new account.
pub(crate) async fn create<T: Tx>(tx: &T, new: &NewAccount) -> Result<Account, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "INSERT INTO accounts (id, name, email, password_hash, status, created_at, kyc_level,
                                   developer_access)
             VALUES (?1, ?2, ?3, ?4, 'active', ?5, ?6, 'operator') ON CONFLICT DO NOTHING
             RETURNING {ACCOUNT_COLUMNS}"
        )
    });
    let (id, now) = (AccountId::new().to_string(), now_rfc3339());
    if !crate::limits::LEVELS.contains(&new.kyc_level) {
        return Err(StoreError::Invalid(format!("there is no level {}", new.kyc_level)).into());
    }
    let level = i32::from(new.kyc_level);
    let params: [&dyn Param; 6] = [&id, &new.name, &new.email, &new.password_hash, &now, &level];
    let Some(created) = tx.query_opt(&SQL, &params, account).await? else {
        return Err(rules::email_taken(&new.email).into());
    };
    Ok(created)
}

async fn by_id<T: ReadTx>(tx: &T, id: AccountId) -> Result<Option<Account>, T::Error> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = ?1"));
    tx.query_opt(&SQL, &[&id.to_string()], account).await
}

/// Any case finds the address.
async fn by_email<T: ReadTx>(tx: &T, email: &str) -> Result<Option<Account>, T::Error> {
    static SQL: PerEngine = PerEngine::new(|engine| {
        // Each engine's case-blind match is the one its index serves: SQLite's
        // `email` column is `COLLATE NOCASE`, PostgreSQL's index is on `lower(email)`.
        let matches = match engine {
            Engine::Sqlite => "email = ?1",
            Engine::Postgres => "lower(email) = lower(?1)",
        };
        format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE {matches}")
    });
    tx.query_opt(SQL.sql(T::ENGINE), &[&email], account).await
}

/// Sets an account's status inside the caller's transaction; a suspension
/// signs the account out everywhere.
pub(crate) async fn set_status<T: Tx>(
    tx: &T,
    id: AccountId,
    status: AccountStatus,
) -> Result<(), T::Error> {
    let sql = "UPDATE accounts SET status = ?1 WHERE id = ?2";
    match tx
        .execute(sql, &[&status.as_str(), &id.to_string()])
        .await?
    {
        0 => Err(StoreError::NotFound("account").into()),
        _ if status == AccountStatus::Suspended => end_sessions(tx, id).await,
        _ => Ok(()),
    }
}

/// A password change signs the account out everywhere.
pub(crate) async fn set_password<T: Tx>(tx: &T, id: AccountId, hash: &str) -> Result<(), T::Error> {
    let sql = "UPDATE accounts SET password_hash = ?1 WHERE id = ?2";
    match tx.execute(sql, &[&hash, &id.to_string()]).await? {
        0 => Err(StoreError::NotFound("account").into()),
        _ => end_sessions(tx, id).await,
    }
}

async fn end_sessions<T: Tx>(tx: &T, id: AccountId) -> Result<(), T::Error> {
    let sql = "DELETE FROM sessions WHERE account_id = ?1";
    tx.execute(sql, &[&id.to_string()]).await?;
    Ok(())
}

/// The status before goes in the line (PostgreSQL: read under the row's lock).
pub(crate) async fn set_status_logged<T: Tx>(
    tx: &T,
    account: AccountId,
    status: AccountStatus,
    log: &NewLogEntry,
) -> Result<(), T::Error> {
    const COLUMNS: &str = "status";
    static SQL: PerEngine = PerEngine::new(|engine| {
        format!(
            "SELECT status FROM accounts WHERE id = ?1{}",
            engine.for_update()
        )
    });
    let before: Option<String> = tx
        .query_opt(SQL.sql(T::ENGINE), &[&account.to_string()], |row| {
            row.get(col!("status"))
        })
        .await?;
    let before = before.ok_or(StoreError::NotFound("account"))?;
    if status == AccountStatus::Active {
        super::privacy::refuse_if_closed(tx, account).await?;
    }
    set_status(tx, account, status).await?;
    super::operators::append(tx, &log.clone().with_before(&before)).await
}
