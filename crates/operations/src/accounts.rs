//! Accounts: create one, suspend or reactivate it, set its dashboard password.

use crate::{Actor, OpsResult, invalid};
use billpay_domain::AccountId;
use billpay_store::{Account, AccountStatus, NewAccount, Store};

/// A new account (with one NGN wallet); `password` is for the dashboard.
pub async fn create(
    store: &dyn Store,
    actor: Actor,
    name: &str,
    email: &str,
    password: Option<&str>,
) -> OpsResult<Account> {
    let name = name.trim().to_owned();
    if name.is_empty() {
        return Err(invalid(&["name"], "must not be empty"));
    }
    if !valid_email(email) {
        return Err(invalid(
            &["email"],
            format!("is not an email address: {email}"),
        ));
    }
    let password_hash = password.map(billpay_domain::password::hash).transpose()?;
    let account = store
        .create_account(NewAccount {
            name,
            email: email.to_owned(),
            password_hash,
        })
        .await?;
    tracing::info!(%actor, account = %account.id, "account created");
    Ok(account)
}

/// Suspends (its keys stop working within a request, its dashboard sessions
/// end) or reactivates an account.
pub async fn set_status(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    status: AccountStatus,
) -> OpsResult<()> {
    store.set_account_status(account, status).await?;
    tracing::info!(%actor, %account, status = status.as_str(), "account status set");
    Ok(())
}

/// Sets the dashboard password (hashed with argon2id).
pub async fn set_password(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    password: &str,
) -> OpsResult<()> {
    let hash = billpay_domain::password::hash(password)?;
    store.set_account_password(account, hash).await?;
    tracing::info!(%actor, %account, "account password set");
    Ok(())
}

fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !email.contains(char::is_whitespace)
}
