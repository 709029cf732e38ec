//! Purchases: the operator's decision on one whose outcome the supplier never
//! made clear.

use crate::{Actor, OpsError, OpsResult};
use billpay_domain::{Delivery, TxStatus};
use billpay_store::{Store, Transaction, TxLookup};
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
/// `reason`: why, for the record (the console will require one).
pub async fn resolve(
    store: &dyn Store,
    actor: Actor,
    reference_or_code: &str,
    resolution: Resolution,
    reason: Option<&str>,
) -> OpsResult<(String, TxStatus)> {
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
    if !store.finalize(&code, fin).await? {
        return Err(OpsError::Refused(format!(
            "{code} became final meanwhile; nothing changed"
        )));
    }
    tracing::info!(%actor, code, %status, reason, "resolved by the operator");
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
