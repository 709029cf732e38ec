//! Wallets: an operator's credit (a funding received outside billpay).

use crate::{Actor, OpsResult, invalid};
use billpay_domain::{AccountId, Kobo};
use billpay_store::{Credit, Store};

/// Credits `account` once per `reference` (a repeat changes nothing and
/// answers `applied: false`). `reason`: why, for the record (the console
/// will require one).
pub async fn credit(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    amount: Kobo,
    reference: &str,
    reason: Option<&str>,
) -> OpsResult<Credit> {
    if amount <= Kobo::ZERO {
        return Err(invalid(&["amount"], "must be more than 0"));
    }
    if reference.trim().is_empty() || reference.len() > 100 {
        return Err(invalid(&["reference"], "must be 1 to 100 characters"));
    }
    let credit = store.credit(account, amount, reference).await?;
    tracing::info!(%actor, %account, %amount, reference, reason, applied = credit.applied, "wallet credited");
    Ok(credit)
}
