//! Purchases: the operator's decision on one whose outcome the supplier never
//! made clear.

use crate::wallets::reason_for;
use crate::{Actor, OpsError, OpsResult, Permission};
use billpay_domain::{AccountId, Delivery, TxStatus};
use billpay_store::work;
use billpay_store::{Store, Transaction, TxFilter, TxLookup};
use billpay_worker::Fulfilment;
use billpay_worker::fulfilment::{Outcome, settle};

/// How the operator resolves a purchase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    Successful,
    /// Refunds the wallet, once.
    Failed,
}

/// Which transaction an action names: its reference_code (always one), or a
/// client's reference, which is unique per account only — `account` narrows
/// it to one customer's.
#[derive(Debug, Clone, Copy)]
pub struct TxName<'a> {
    pub reference_or_code: &'a str,
    pub account: Option<AccountId>,
}

impl<'a> TxName<'a> {
    /// A reference_code, or a reference any account may have used.
    pub fn any(reference_or_code: &'a str) -> Self {
        TxName {
            reference_or_code,
            account: None,
        }
    }
}

/// At most this many matches of a reference are listed when it is ambiguous.
const MATCHES_LISTED: usize = 20;
/// How many transactions whose reference or code contains it are read to
/// find every one whose reference is exactly it.
const SEARCHED: u32 = 500;

/// A transaction by reference_code, else by the client's reference (of
/// `name.account` when given). A reference two accounts used is refused,
/// listing each match's code and account, so the operator names one.
pub async fn find(store: &dyn Store, name: TxName<'_>) -> OpsResult<Transaction> {
    let text = name.reference_or_code;
    let not_found = || OpsError::NotFound(format!("no transaction with reference or code {text}"));
    if let Some(tx) = store
        .transaction(None, TxLookup::Code(text.to_owned()))
        .await?
    {
        return match name.account {
            Some(account) if account != tx.account_id => Err(not_found()),
            _ => Ok(tx),
        };
    }
    let by_reference = TxLookup::Reference(text.to_owned());
    if let Some(account) = name.account {
        return store
            .transaction(Some(account), by_reference)
            .await?
            .ok_or_else(not_found);
    }
    let found = store
        .transactions(TxFilter {
            search: Some(text.to_owned()),
            limit: SEARCHED + 1,
            ..TxFilter::default()
        })
        .await?;
    let complete = found.len() <= SEARCHED as usize;
    let matches: Vec<Transaction> = found
        .into_iter()
        .filter(|tx| tx.reference == text)
        .collect();
    if !complete && matches.len() < 2 {
        return Err(OpsError::Refused(format!(
            "reference {text} is too common to tell whose it is: name the transaction by its code, or give the account"
        )));
    }
    let mut matches = match matches.len() {
        0 => return Err(not_found()),
        1 => return Ok(matches.into_iter().next().expect("one match")),
        _ => matches,
    };
    matches.truncate(MATCHES_LISTED);
    let mut listed = Vec::with_capacity(matches.len());
    for tx in &matches {
        let owner = store
            .account(tx.account_id)
            .await?
            .map_or_else(|| "an unknown account".to_owned(), |a| a.name);
        listed.push(format!("{} ({owner}, account {})", tx.code, tx.account_id));
    }
    Err(OpsError::Refused(format!(
        "reference {text} was used by more than one account: {}; name the transaction by its code, or give the account",
        listed.join("; ")
    )))
}

/// Settles a `processing` purchase as the worker would (a failure refunds
/// once; the client's webhook goes out as for any final status); answers its
/// reference_code and new status. Anything already final is refused and changes nothing.
/// `reason`: why, for the log (required of a console operator). The log
/// line is written in the same transaction as the new status.
pub async fn resolve(
    store: &dyn Store,
    actor: Actor,
    name: TxName<'_>,
    resolution: Resolution,
    reason: Option<&str>,
) -> OpsResult<(String, TxStatus)> {
    actor.require(Permission::ResolvePurchases)?;
    let reason = reason_for(&actor, reason)?;
    let tx = find(store, name).await?;
    if tx.status != TxStatus::Processing {
        return Err(OpsError::Refused(format!(
            "{} is already {}: only a processing purchase can be resolved",
            tx.code, tx.status
        )));
    }
    if tx.held_for.is_some() {
        return Err(OpsError::Refused(format!(
            "{} is held for review and was never sent to a supplier: release it or reject it",
            tx.code
        )));
    }
    let outcome = match resolution {
        Resolution::Successful => Outcome::Successful(Delivery::default()),
        Resolution::Failed => Outcome::Failed("the supplier did not deliver it"),
    };
    let (code, fin) = settle(&tx, outcome);
    let status = fin.status;
    let mut log = actor.log("transaction.resolve", code.clone());
    log.before = Some(tx.status.to_string());
    log.after = Some(status.to_string());
    log.reason = reason.clone();
    let changed = store
        .write((code.clone(), fin, log), |tx, (code, fin, log)| {
            Box::pin(work::finalize_logged(tx, code, fin, log))
        })
        .await?;
    if !changed {
        return Err(OpsError::Refused(format!(
            "{code} became final meanwhile; nothing changed"
        )));
    }
    tracing::info!(%actor, code, %status, reason = reason.as_deref(), "resolved by the operator");
    Ok((code, status))
}

/// What a successful purchase earned: charged − the supplier's cost; `None`
/// while that cost is unknown, or for a purchase that did not succeed.
pub fn profit(tx: &Transaction) -> Option<billpay_domain::Kobo> {
    let cost = tx
        .cost
        .filter(|_| tx.status == billpay_domain::TxStatus::Successful)?;
    tx.amount.checked_sub(cost)
}

/// Asks the supplier about a purchase now (as a callback would): a
/// `processing` one may become final; a successful one the supplier
/// reversed is refunded once. Logged with the status before and after.
pub async fn requery(
    store: &dyn Store,
    actor: Actor,
    fulfilment: &Fulfilment,
    name: TxName<'_>,
) -> OpsResult<Transaction> {
    actor.require(Permission::ResolvePurchases)?;
    let before = find(store, name).await?;
    fulfilment.recheck(&before.code).await?;
    let after = find(store, TxName::any(&before.code)).await?;
    let mut log = actor.log("transaction.requery", after.code.clone());
    log.before = Some(before.status.to_string());
    log.after = Some(after.status.to_string());
    store.append_log(log).await?;
    tracing::info!(%actor, code = after.code, status = %after.status, "requeried by the operator");
    Ok(after)
}

/// At most this many held purchases are listed.
pub const HELD_LISTED: u32 = 500;

/// What a rejected held purchase tells the customer (after "Transaction failed: ").
pub const REJECTED: &str = "it was held for review and not approved";

/// Purchases held for review by a fraud rule, oldest first.
pub async fn held(store: &dyn Store, actor: &Actor) -> OpsResult<Vec<Transaction>> {
    actor.require(Permission::Read)?;
    Ok(store.held_purchases(HELD_LISTED).await?)
}

/// How an owner resolves a held purchase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldDecision {
    /// Sent on to the supplier as any purchase.
    Release,
    /// Failed and refunded once (webhook and notice as for any failure).
    Reject,
}

/// An owner's decision on a purchase held for review (`docs/limits.md`):
/// released to the supplier, or rejected (failed, refunded once). The line
/// (its `before` the rule that held it) is written in the same transaction;
/// a purchase no longer held is refused and nothing changes. A rejection
/// needs a reason.
pub async fn decide_held(
    store: &dyn Store,
    actor: Actor,
    name: TxName<'_>,
    decision: HeldDecision,
    reason: Option<&str>,
) -> OpsResult<Transaction> {
    actor.require(Permission::MoveMoney)?;
    let reason = match decision {
        HeldDecision::Reject => Some(crate::reason_of(reason)?),
        HeldDecision::Release => reason_for(&actor, reason)?,
    };
    let tx = find(store, name).await?;
    let not_held = || {
        OpsError::Refused(format!(
            "{} is not held for review (it is {}); nothing changed",
            tx.code, tx.status
        ))
    };
    let Some(rule) = tx
        .held_for
        .clone()
        .filter(|_| tx.status == TxStatus::Processing)
    else {
        return Err(not_held());
    };
    let (action, after) = match decision {
        HeldDecision::Release => ("transaction.release", "released"),
        HeldDecision::Reject => ("transaction.reject", "rejected"),
    };
    let mut log = actor.log(action, tx.code.clone());
    log.after = Some(after.to_owned());
    log.reason = reason.clone();
    let changed = match decision {
        HeldDecision::Release => {
            store
                .write((tx.code.clone(), log), |tx, (code, log)| {
                    Box::pin(work::release_held_logged(tx, code, log))
                })
                .await?
        }
        HeldDecision::Reject => {
            let (code, fin) = settle(&tx, Outcome::Failed(REJECTED));
            store
                .write((code, fin, log), |tx, (code, fin, log)| {
                    Box::pin(work::reject_held_logged(tx, code, fin, log))
                })
                .await?
        }
    };
    if !changed {
        return Err(not_held());
    }
    tracing::info!(%actor, code = tx.code, rule, decision = after, reason = reason.as_deref(), "held purchase resolved");
    let code = TxLookup::Code(tx.code.clone());
    let found = store.transaction(None, code).await?;
    found.ok_or_else(|| OpsError::NotFound(format!("no transaction {}", tx.code)))
}
