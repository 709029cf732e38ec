//! Wallets: an operator's credit (a funding received outside billpay) or
//! debit (a correction), each once per reference and logged with the
//! balance before and after in the same transaction.

use crate::{Actor, OpsResult, Permission, invalid, optional_reason, reason_of};
use billpay_domain::{AccountId, Kobo};
use billpay_store::work;
use billpay_store::{Credit, Store};

/// Credits `account` once per `reference` (a repeat changes nothing and
/// answers `applied: false`). `reason`: why, for the log; required of a
/// console operator (the CLI's `--reason` stays optional for scripts).
pub async fn credit(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    amount: Kobo,
    reference: &str,
    reason: Option<&str>,
) -> OpsResult<Credit> {
    actor.require(Permission::MoveMoney)?;
    check_move(amount, reference)?;
    let reason = reason_for(&actor, reason)?;
    let mut log = actor.log("wallet.credit", account.to_string());
    log.after = Some(format!("+{amount}, reference {reference}"));
    log.reason = reason.clone();
    let credit = store
        .write(
            (account, amount, reference.to_owned(), log),
            |tx, (account, amount, reference, log)| {
                Box::pin(work::credit_logged(tx, *account, *amount, reference, log))
            },
        )
        .await?;
    tracing::info!(%actor, %account, %amount, reference, reason = reason.as_deref(), applied = credit.applied, "wallet credited");
    Ok(credit)
}

/// Debits `amount` from `account` once per `reference` (a reference is one
/// operator move on the wallet, credit or debit); refused below zero. Always
/// needs a reason.
pub async fn debit(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    amount: Kobo,
    reference: &str,
    reason: Option<&str>,
) -> OpsResult<Credit> {
    actor.require(Permission::MoveMoney)?;
    check_move(amount, reference)?;
    let reason = reason_of(reason)?;
    let mut log = actor.log("wallet.debit", account.to_string());
    log.after = Some(format!("-{amount}, reference {reference}"));
    log.reason = Some(reason.clone());
    let debit = store
        .write(
            (account, amount, reference.to_owned(), log),
            |tx, (account, amount, reference, log)| {
                Box::pin(work::debit_logged(tx, *account, *amount, reference, log))
            },
        )
        .await?;
    tracing::info!(%actor, %account, %amount, reference, reason, applied = debit.applied, "wallet debited");
    Ok(debit)
}

/// An amount an operator typed (`5,000`, `₦5,000`, `5000.50`), as `amount`'s
/// refusal when it is not one.
pub fn typed_amount(text: &str) -> OpsResult<Kobo> {
    Kobo::parse_typed_naira(text).map_err(|e| invalid(&["amount"], e.to_string()))
}

fn check_move(amount: Kobo, reference: &str) -> OpsResult<()> {
    if amount <= Kobo::ZERO {
        return Err(invalid(&["amount"], "must be more than 0"));
    }
    if reference.trim().is_empty() || reference.len() > 100 {
        return Err(invalid(&["reference"], "must be 1 to 100 characters"));
    }
    Ok(())
}

/// A console operator must say why money moves; the CLI may.
pub(crate) fn reason_for(actor: &Actor, reason: Option<&str>) -> OpsResult<Option<String>> {
    match actor {
        Actor::Cli => optional_reason(reason),
        Actor::Operator { .. } => reason_of(reason).map(Some),
    }
}
