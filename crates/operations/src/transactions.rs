//! Purchases: the operator's decision on one whose outcome the supplier never
//! made clear.

use crate::wallets::reason_for;
use crate::{Actor, OpsError, OpsResult, Permission};
use billpay_domain::{Delivery, TxStatus};
use billpay_store::{Store, Transaction, TxLookup};
use billpay_worker::Fulfilment;
use billpay_worker::fulfilment::{Outcome, settle};

/// How the operator resolves a purchase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    Successful,
    /// Refunds the wallet, once.
    Failed,
}

/// A transaction by reference_code, else by the client's reference.
pub async fn find(store: &dyn Store, reference_or_code: &str) -> OpsResult<Transaction> {
    let by_code = TxLookup::Code(reference_or_code.to_owned());
    let by_reference = TxLookup::Reference(reference_or_code.to_owned());
    if let Some(tx) = store.transaction(None, by_code).await? {
        return Ok(tx);
    }
    store.transaction(None, by_reference).await?.ok_or_else(|| {
        OpsError::NotFound(format!(
            "no transaction with reference or code {reference_or_code}"
        ))
    })
}

/// Settles a `processing` purchase as the worker would (a failure refunds
/// once; the client's webhook goes out as for any final status); answers its
/// reference_code and new status. Anything already final is refused and changes nothing.
/// `reason`: why, for the log (required of a console operator). The log
/// line is written in the same transaction as the new status.
pub async fn resolve(
    store: &dyn Store,
    actor: Actor,
    reference_or_code: &str,
    resolution: Resolution,
    reason: Option<&str>,
) -> OpsResult<(String, TxStatus)> {
    actor.require(Permission::ResolvePurchases)?;
    let reason = reason_for(&actor, reason)?;
    let tx = find(store, reference_or_code).await?;
    if tx.status != TxStatus::Processing {
        return Err(OpsError::Refused(format!(
            "{} is already {}: only a processing purchase can be resolved",
            tx.code, tx.status
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
    if !store.finalize_logged(&code, fin, log).await? {
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
    reference_or_code: &str,
) -> OpsResult<Transaction> {
    actor.require(Permission::ResolvePurchases)?;
    let before = find(store, reference_or_code).await?;
    fulfilment.recheck(&before.code).await?;
    let after = find(store, &before.code).await?;
    let mut log = actor.log("transaction.requery", after.code.clone());
    log.before = Some(before.status.to_string());
    log.after = Some(after.status.to_string());
    store.append_log(log).await?;
    tracing::info!(%actor, code = after.code, status = %after.status, "requeried by the operator");
    Ok(after)
}
