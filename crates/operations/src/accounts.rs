//! Accounts: create one, suspend or reactivate it, set its dashboard password.

use crate::{Actor, OpsResult, Permission, invalid, optional_reason};
use billpay_domain::AccountId;
use billpay_store::limits::{LEVELS, OPERATOR_CREATED_LEVEL};
use billpay_store::{Account, AccountStatus, NewAccount, Store};

/// A new account (with one NGN wallet) at the level an operator-created
/// account starts at ([`OPERATOR_CREATED_LEVEL`]); `password` is for the dashboard.
pub async fn create(
    store: &dyn Store,
    actor: Actor,
    name: &str,
    email: &str,
    password: Option<&str>,
) -> OpsResult<Account> {
    create_at_level(store, actor, name, email, password, OPERATOR_CREATED_LEVEL).await
}

/// [`create`] at the KYC level given (0, 1 or 2; docs/limits.md).
pub async fn create_at_level(
    store: &dyn Store,
    actor: Actor,
    name: &str,
    email: &str,
    password: Option<&str>,
    kyc_level: u8,
) -> OpsResult<Account> {
    actor.require(Permission::ManageAccounts)?;
    if !LEVELS.contains(&kyc_level) {
        return Err(invalid(&["kyc_level"], "must be 0, 1 or 2"));
    }
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
    // The subject, the new account's id, is set by the store.
    let mut log = actor.log("account.create", "");
    log.after = Some(format!("{name} <{email}>"));
    let new = NewAccount {
        name,
        email: email.to_owned(),
        password_hash,
        kyc_level,
    };
    let account = store.create_account_logged(new, log).await?;
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
    set_status_because(store, actor, account, status, None).await
}

/// [`set_status`] with the reason typed for it; logged in the same transaction.
pub async fn set_status_because(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    status: AccountStatus,
    reason: Option<&str>,
) -> OpsResult<()> {
    actor.require(Permission::ManageAccounts)?;
    let mut log = actor.log("account.status", account.to_string());
    log.after = Some(status.as_str().to_owned());
    log.reason = optional_reason(reason)?;
    store
        .set_account_status_logged(account, status, log)
        .await?;
    tracing::info!(%actor, %account, status = status.as_str(), "account status set");
    Ok(())
}

/// Sets the dashboard password (hashed with argon2id); the account's
/// dashboard sessions end. `reason`: why, for the log (optional).
pub async fn set_password(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    password: &str,
    reason: Option<&str>,
) -> OpsResult<()> {
    actor.require(Permission::ManageAccounts)?;
    let hash = billpay_domain::password::hash(password)?;
    store.set_account_password(account, hash).await?;
    let mut log = actor.log("account.password", account.to_string());
    log.reason = optional_reason(reason)?;
    store.append_log(log).await?;
    tracing::info!(%actor, %account, "account password set");
    Ok(())
}

/// Emails the customer a single-use link to choose a new password (30
/// minutes), logged as the operator's action in the same transaction. The
/// link goes to the account's own address only; nobody at the business
/// sees it. `public_url`: where the dashboard is reached.
pub async fn send_password_reset(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    public_url: &str,
) -> OpsResult<()> {
    actor.require(Permission::HelpCustomers)?;
    let found = store
        .account(account)
        .await?
        .ok_or(billpay_store::StoreError::NotFound("account"))?;
    let mut log = actor.log("account.password_reset_sent", account.to_string());
    log.after = Some("reset link emailed".into());
    billpay_store::issue::issue_password_reset(store, &found, public_url, Some(log)).await?;
    tracing::info!(%actor, %account, "password-reset link sent");
    Ok(())
}

pub(crate) fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !email.contains(char::is_whitespace)
}
