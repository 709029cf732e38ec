//! Money in: the operator's actions on bank-transfer funding — reserving a
//! customer's accounts at a gateway, assigning an unmatched payment,
//! reconciling with the gateways, and reading what was received.

use crate::wallets::reason_for;
use crate::{Actor, OpsError, OpsResult, Permission, invalid};
use billpay_domain::AccountId;
use billpay_funding::Customer;
use billpay_funding::identity::IdNumber;
use billpay_store::work;
use billpay_store::{
    FundingEvent, FundingFilter, FundingStatus, NewReservation, ReservationIdentity,
    ReservedAccount, Store,
};
use billpay_worker::payment_settlement::{Funding, Reconciled};
use std::time::Duration;

/// The account's reserved accounts at `gateway`: those already held (the
/// gateway is not called again), else new ones from the gateway. `bvn` or
/// `nin` (11 digits) is what Monnify requires.
pub async fn reserve(
    store: &dyn Store,
    funding: &Funding,
    actor: Actor,
    account: AccountId,
    gateway: &str,
    bvn: Option<&str>,
    nin: Option<&str>,
) -> OpsResult<Vec<ReservedAccount>> {
    actor.require(Permission::ManageAccounts)?;
    let identity = Identity::of(bvn, nin)?;
    let reserved = reserve_accounts(store, funding, account, gateway, identity).await?;
    if let Some(customer_ref) = reserved.customer_ref {
        let mut log = actor.log("funding.reserve", account.to_string());
        log.after = Some(format!("{gateway} customer {customer_ref}"));
        store.append_log(log).await?;
        tracing::info!(%actor, %account, gateway, customer = customer_ref, "accounts reserved");
    }
    Ok(reserved.accounts)
}

/// The customer's own reservation (the dashboard's wallet page): as
/// [`reserve`], for the signed-in account; of the identity number only the
/// last 4 digits and the gateway's answer are kept.
pub async fn reserve_own(
    store: &dyn Store,
    funding: &Funding,
    account: AccountId,
    gateway: &str,
    identity: Option<Identity>,
) -> OpsResult<Vec<ReservedAccount>> {
    let kept = identity.as_ref().map(Identity::last4);
    let reserved = reserve_accounts(store, funding, account, gateway, identity).await;
    if let Some((kind, last4)) = kept {
        let state = if reserved.is_ok() {
            "accepted"
        } else {
            "refused"
        };
        let identity = ReservationIdentity {
            account_id: account,
            gateway: gateway.to_owned(),
            kind: kind.to_owned(),
            last4,
            state: state.to_owned(),
        };
        store.save_reservation_identity(identity).await?;
    }
    let reserved = reserved?;
    if let Some(customer) = &reserved.customer_ref {
        tracing::info!(%account, gateway, customer, "accounts reserved by the customer");
    }
    Ok(reserved.accounts)
}

/// A BVN or a NIN (11 digits), passed to the gateway and never kept whole.
pub struct Identity {
    kind: &'static str,
    number: IdNumber,
}

impl Identity {
    /// The one given (a BVN before a NIN), checked; `None` when neither is.
    pub fn of(bvn: Option<&str>, nin: Option<&str>) -> OpsResult<Option<Identity>> {
        for (kind, value) in [("bvn", bvn), ("nin", nin)] {
            let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
                continue;
            };
            let fields: &'static [&'static str] = if kind == "bvn" { &["bvn"] } else { &["nin"] };
            let number = IdNumber::parse(value).map_err(|why| invalid(fields, why))?;
            return Ok(Some(Identity { kind, number }));
        }
        Ok(None)
    }

    fn last4(&self) -> (&'static str, String) {
        (self.kind, self.number.last4().to_owned())
    }
}

/// What a reservation did: the accounts held, and the gateway's customer
/// when it was called now (`None`: held before, nothing called).
struct Reserved {
    accounts: Vec<ReservedAccount>,
    customer_ref: Option<String>,
}

async fn reserve_accounts(
    store: &dyn Store,
    funding: &Funding,
    account: AccountId,
    gateway: &str,
    identity: Option<Identity>,
) -> OpsResult<Reserved> {
    let client = funding.gateway(gateway).ok_or_else(|| {
        OpsError::Refused(format!(
            "{gateway} is not configured: set its BILLPAY_{}_* settings",
            gateway.to_uppercase()
        ))
    })?;
    // Reserved before: what is held (none yet while Paystack is still
    // assigning them; its webhook brings them), without calling the gateway.
    if store.funding_customer(account, gateway).await?.is_some() {
        let accounts = held_at(store, account, gateway).await?;
        return Ok(Reserved {
            accounts,
            customer_ref: None,
        });
    }
    let owner = store
        .account(account)
        .await?
        .ok_or_else(|| OpsError::NotFound(format!("no account {account}")))?;
    let (bvn, nin) = match identity {
        Some(Identity {
            kind: "bvn",
            number,
        }) => (Some(number), None),
        Some(Identity { number, .. }) => (None, Some(number)),
        None => (None, None),
    };
    let customer = Customer {
        reference: account.to_string(),
        name: owner.name,
        email: owner.email,
        bvn,
        nin,
    };
    let reservation = client
        .reserve(&customer)
        .await
        .map_err(|e| OpsError::Refused(format!("{gateway}: {e}")))?;
    let accounts = reservation.accounts.iter();
    let accounts = accounts.map(|a| {
        (
            a.bank_name.clone(),
            a.account_number.clone(),
            a.account_name.clone(),
        )
    });
    store
        .save_reservation(NewReservation {
            account_id: account,
            gateway: gateway.to_owned(),
            customer_ref: reservation.customer_ref.clone(),
            accounts: accounts.collect(),
        })
        .await?;
    Ok(Reserved {
        accounts: held_at(store, account, gateway).await?,
        customer_ref: Some(reservation.customer_ref),
    })
}

async fn held_at(
    store: &dyn Store,
    account: AccountId,
    gateway: &str,
) -> OpsResult<Vec<ReservedAccount>> {
    let all = store.reserved_accounts(Some(account)).await?;
    Ok(all.into_iter().filter(|a| a.gateway == gateway).collect())
}

/// Payments received, newest first.
pub async fn list(
    store: &dyn Store,
    account: Option<AccountId>,
    status: Option<FundingStatus>,
    limit: u32,
) -> OpsResult<Vec<FundingEvent>> {
    let filter = FundingFilter {
        account_id: account,
        status,
        limit: limit.clamp(1, 10_000),
        ..FundingFilter::default()
    };
    Ok(store.funding_events(filter).await?)
}

/// One payment, by its funding id or its gateway reference.
pub async fn show(store: &dyn Store, id_or_reference: &str) -> OpsResult<FundingEvent> {
    store
        .funding_event(id_or_reference)
        .await?
        .ok_or_else(|| OpsError::NotFound(format!("no funding {id_or_reference}")))
}

/// Credits an unmatched payment to `account`, less the fee, once: a
/// payment that is not unmatched (already credited, say) is refused.
/// `reason`: why it is this customer's, for the log; required of a console
/// operator (money moves), optional for the CLI (as a wallet credit's).
pub async fn assign(
    store: &dyn Store,
    funding: &Funding,
    actor: Actor,
    id_or_reference: &str,
    account: AccountId,
    reason: Option<&str>,
) -> OpsResult<FundingEvent> {
    actor.require(Permission::MoveMoney)?;
    let reason = reason_for(&actor, reason)?;
    let event = show(store, id_or_reference).await?;
    if event.status != FundingStatus::Unmatched {
        return Err(OpsError::Refused(format!(
            "{} is {}: only an unmatched payment can be assigned",
            event.id,
            event.status.as_str()
        )));
    }
    if store.account(account).await?.is_none() {
        return Err(OpsError::NotFound(format!("no account {account}")));
    }
    let fee = funding.fee().fee(event.amount);
    let note = format!("assigned by the operator ({actor})");
    let mut log = actor.log("funding.assign", event.id.clone());
    log.before = Some(FundingStatus::Unmatched.as_str().to_owned());
    log.after = Some(format!(
        "{} to {account} (fee {fee})",
        FundingStatus::Credited.as_str()
    ));
    log.reason = reason;
    let event = store
        .write(
            (event.id.to_string(), account, fee, note.to_string(), log),
            |tx, (id, account, fee, note, log)| {
                Box::pin(work::assign_funding(tx, id, *account, *fee, note, log))
            },
        )
        .await
        .map_err(|e| match e {
            billpay_store::StoreError::Invalid(why) => OpsError::Refused(why),
            other => other.into(),
        })?;
    tracing::info!(%actor, funding = event.id, %account, amount = %event.amount, "unmatched payment assigned");
    Ok(event)
}

/// Lists each gateway's payments of the last `since` and credits, once,
/// those whose webhook never arrived; verifies the pending ones again.
pub async fn reconcile(
    store: &dyn Store,
    funding: &Funding,
    actor: Actor,
    since: Duration,
) -> OpsResult<Vec<Reconciled>> {
    actor.require(Permission::MoveMoney)?;
    if funding.gateways().is_empty() {
        return Err(OpsError::Refused(
            "no funding gateway is configured (BILLPAY_MONNIFY_*, BILLPAY_PAYSTACK_*)".into(),
        ));
    }
    let report = funding.reconcile(since).await;
    let credited: usize = report.iter().map(|r| r.credited.len()).sum();
    // Logged after the run: each credit is its own once-only write (the
    // worker's path), this line says who asked and what it credited.
    let gateways: Vec<&str> = report.iter().map(|r| r.gateway.as_str()).collect();
    let mut log = actor.log("funding.reconcile", gateways.join(","));
    log.after = Some(format!(
        "{credited} credited (last {} h)",
        since.as_secs() / 3600
    ));
    store.append_log(log).await?;
    tracing::info!(%actor, credited, "funding reconciled by the operator");
    Ok(report)
}
