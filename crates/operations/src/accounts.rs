//! Accounts: create one, suspend or reactivate it, set its dashboard password
//! and its developer access;
//! close it, and erase a closed account's personal data (NDPA).

use crate::{Actor, OpsError, OpsResult, Permission, invalid, optional_reason, reason_of};
use billpay_domain::{AccountId, EmailAddress};
use billpay_store::limits::{LEVELS, OPERATOR_CREATED_LEVEL};
use billpay_store::work;
use billpay_store::{Account, AccountStatus, Closure, Erasure, NewAccount, Store};

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
    let email = email_of(email)?;
    let password_hash = password.map(billpay_domain::password::hash).transpose()?;
    // The subject, the new account's id, is set by the store.
    let mut log = actor.log("account.create", "");
    log.after = Some(format!("{name} <{email}>"));
    let new = NewAccount {
        name,
        email: email.into_string(),
        password_hash,
        kyc_level,
    };
    let account = store
        .write((new, log), |tx, (new, log)| {
            Box::pin(work::create_account_logged(tx, new, log))
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
        .write((account, status, log), |tx, (account, status, log)| {
            Box::pin(work::set_account_status_logged(tx, *account, *status, log))
        })
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

/// Turns the dashboard's developer pages (API keys, webhooks) on or off for
/// an account (issue 46; docs/shop.md), logged in the same transaction. The
/// API does not read it: a key in force works either way.
pub async fn set_developer_access(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    on: bool,
) -> OpsResult<()> {
    actor.require(Permission::ManageAccounts)?;
    let mut log = actor.log("account.developer_access", account.to_string());
    log.after = Some(if on { "on (operator)" } else { "off" }.to_owned());
    store
        .write((account, on, log), |tx, (account, on, log)| {
            Box::pin(work::set_developer_access_logged(tx, *account, *on, log))
        })
        .await?;
    tracing::info!(%actor, %account, on, "developer access set");
    Ok(())
}

/// Ends a customer's transaction-PIN lock (five wrong PINs lock purchases
/// for 30 minutes) before its time, logged in the same transaction: an
/// owner's call, once the customer is known to be who they say. `false`:
/// no lock was on (nothing written).
pub async fn clear_pin_lock(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
) -> OpsResult<bool> {
    actor.require(Permission::ManageAccounts)?;
    let mut log = actor.log("account.pin_lock_cleared", account.to_string());
    log.before = Some("purchases locked after wrong PINs".into());
    log.after = Some("unlocked".into());
    let cleared = store
        .write((account, log), |tx, (account, log)| {
            Box::pin(work::clear_pin_lock_logged(tx, *account, log))
        })
        .await?;
    if cleared {
        tracing::info!(%actor, %account, "transaction-PIN lock cleared");
    }
    Ok(cleared)
}

/// Closes an account for good (owner): its wallet must be empty and no
/// purchase of it in flight; it is suspended (keys stop, sessions end) and
/// can never be reactivated. A reason is required; logged in the same
/// transaction. Closing is what makes an account's personal data erasable.
pub async fn close(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    reason: Option<&str>,
) -> OpsResult<Closure> {
    actor.require(Permission::ManageAccounts)?;
    let mut log = actor.log("account.close", account.to_string());
    log.after = Some("closed".into());
    log.reason = Some(reason_of(reason)?);
    let closure = store
        .write((account, log), |tx, (account, log)| {
            Box::pin(work::close_account_logged(tx, *account, log))
        })
        .await
        .map_err(refusal)?;
    tracing::info!(%actor, %account, "account closed");
    Ok(closure)
}

/// Erases a closed account's personal data (owner; NDPA): its name, email,
/// phone, its purchases' recipients and details, notices' addresses, keys'
/// names and webhooks, and its sessions become a tombstone or are deleted;
/// amounts, the ledger and the audit stay. A reason is required; the log
/// line (without any of the erased data) is written in the same transaction.
/// An open account is refused and nothing changes.
pub async fn erase(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    reason: Option<&str>,
) -> OpsResult<Erasure> {
    actor.require(Permission::ManageAccounts)?;
    let mut log = actor.log("account.erase", account.to_string());
    log.after = Some("personal data erased".into());
    log.reason = Some(reason_of(reason)?);
    let erasure = store
        .write((account, log), |tx, (account, log)| {
            Box::pin(work::erase_account_logged(tx, *account, log))
        })
        .await
        .map_err(refusal)?;
    tracing::info!(%actor, %account, "account's personal data erased");
    Ok(erasure)
}

/// The store's "not as it is now" (an open account, money in the wallet)
/// as the refusal a person reads.
fn refusal(error: billpay_store::StoreError) -> OpsError {
    match error {
        billpay_store::StoreError::Invalid(why) => OpsError::Refused(why),
        other => other.into(),
    }
}

/// The canonical address of `typed` ([`EmailAddress::parse`], the one form
/// accounts and operators are stored and found by), or the sentence why not.
pub(crate) fn email_of(typed: &str) -> OpsResult<EmailAddress> {
    EmailAddress::parse(typed).map_err(|why| invalid(&["email"], format!("is refused: {why}")))
}
