//! Money in by bank transfer: reserved accounts, payments received, the
//! once-only credit (event row + payment + fee in one transaction), job leases.

use super::notices;
use super::operators::append;
use super::wallet::{Entry, post_ledger};
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{FUNDING_COLUMNS, RESERVED_COLUMNS};
use crate::db::{Column, One, Param, ReadTx, Tx, col, for_both_engines};
use crate::listing::{Filters, Listing};
use crate::rows::{funding_event, reserved_account};
use crate::rules::{check_new_funding, funding_id, funding_writes, ms_from_now};
use crate::*;
use billpay_domain::{AccountId, Kobo};
use std::sync::LazyLock;
use std::time::Duration;

for_both_engines! {
    /// Money in by bank transfer: the accounts reserved at each gateway, and
    /// every payment received with where it stands. A payment is credited once
    /// per (gateway, gateway reference): its event row is unique on that pair
    /// and is written in the same transaction as its two ledger entries (the
    /// payment as a credit of its gateway's [`CreditSource`], then the fee).
    pub trait FundingStore {
        /// Stores a reservation and its accounts (those already held are kept).
        fn save_reservation(new: NewReservation) -> () = write |tx| save_reservation(tx, &new);
        /// The gateway's name for this account's customer, if it has reserved.
        fn funding_customer(account: AccountId, gateway: &str) -> Option<String>
            = read |tx| customer_of(tx, account, &gateway);
        /// Every customer reference held with a gateway (for reconciliation).
        fn funding_customers(gateway: &str) -> Vec<String> = read |tx| customers(tx, &gateway);
        /// Reserved accounts: one account's, or all.
        fn reserved_accounts(account: Option<AccountId>) -> Vec<ReservedAccount>
            = read |tx| reserved(tx, account);
        /// Whose payment this is: by the gateway's customer reference, else by
        /// the account number it was paid into.
        fn funding_owner(
            gateway: &str,
            customer_ref: Option<&str> => customer_ref.map(str::to_owned),
            account_number: Option<&str> => account_number.map(str::to_owned),
        ) -> Option<AccountId>
            = read |tx| owner(tx, &gateway, customer_ref.as_deref(), account_number.as_deref());
        /// Records a payment, and credits it if `new.status` is credited — all
        /// in one transaction, once: a payment already credited changes nothing.
        fn record_funding(new: NewFunding) -> FundingRecorded = write |tx| record_checked(tx, &new);
        /// By its id or its gateway reference.
        fn funding_event(id_or_reference: &str) -> Option<FundingEvent>
            = read |tx| find(tx, &id_or_reference);
        /// Newest first.
        fn funding_events(filter: FundingFilter) -> Vec<FundingEvent>
            = read |tx| list(tx, &filter);
        /// The funding ledger entries written in `[from, until)` (RFC 3339
        /// bounds, as `sales`): payments credited and fees.
        fn funding_totals(from: &str, until: &str) -> FundingTotals
            = read |tx| totals(tx, &from, &until);
        /// A named job's lease for `holder` (one node at a time): taken when free
        /// or expired, renewed when `holder` has it; false when another holds it.
        fn take_job_lease(name: &str, holder: &str, lease: Duration) -> bool
            = statement |tx| take_lease(tx, &name, &holder, lease);
    }
}

async fn save_reservation<T: Tx>(tx: &T, new: &NewReservation) -> Result<(), T::Error> {
    let (now, account) = (now_rfc3339(), new.account_id.to_string());
    let customer = "INSERT INTO funding_customers (gateway, customer_ref, account_id, created_at)
                    VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING";
    tx.execute(customer, &[&new.gateway, &new.customer_ref, &account, &now])
        .await?;
    let insert = "INSERT INTO funding_accounts (gateway, account_number, customer_ref, account_id,
                      bank_name, account_name, created_at)
                  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING";
    for (bank_name, number, name) in &new.accounts {
        let params: [&dyn Param; 7] = [
            &new.gateway,
            number,
            &new.customer_ref,
            &account,
            bank_name,
            name,
            &now,
        ];
        tx.execute(insert, &params).await?;
    }
    Ok(())
}

async fn customer_of<T: ReadTx>(
    tx: &T,
    account: AccountId,
    gateway: &str,
) -> Result<Option<String>, T::Error> {
    const COLUMNS: &str = "customer_ref";
    let sql = "SELECT customer_ref FROM funding_customers WHERE account_id = ?1 AND gateway = ?2";
    tx.query_opt(sql, &[&account.to_string(), &gateway], |row| {
        row.get(col!("customer_ref"))
    })
    .await
}

async fn customers<T: ReadTx>(tx: &T, gateway: &str) -> Result<Vec<String>, T::Error> {
    const COLUMNS: &str = "customer_ref";
    let sql = "SELECT customer_ref FROM funding_customers WHERE gateway = ?1 ORDER BY created_at";
    tx.query_all(sql, &[&gateway], |row| row.get(col!("customer_ref")))
        .await
}

/// One account's reserved accounts (read by its index: every buyer's home
/// asks), or all of them.
pub(crate) async fn reserved<T: ReadTx>(
    tx: &T,
    account: Option<AccountId>,
) -> Result<Vec<ReservedAccount>, T::Error> {
    const ORDER: &str = "ORDER BY gateway, created_at, account_number";
    static ONE: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT {RESERVED_COLUMNS} FROM funding_accounts WHERE account_id = ?1 {ORDER}")
    });
    static ALL: LazyLock<String> =
        LazyLock::new(|| format!("SELECT {RESERVED_COLUMNS} FROM funding_accounts {ORDER}"));
    match account {
        Some(account) => {
            let account = account.to_string();
            tx.query_all(&ONE, &[&account], reserved_account).await
        }
        None => tx.query_all(&ALL, &[], reserved_account).await,
    }
}

async fn owner<T: ReadTx>(
    tx: &T,
    gateway: &str,
    customer_ref: Option<&str>,
    account_number: Option<&str>,
) -> Result<Option<AccountId>, T::Error> {
    const COLUMNS: &str = "account_id";
    let sql = "SELECT account_id FROM funding_customers WHERE gateway = ?1 AND customer_ref = ?2
               UNION ALL
               SELECT account_id FROM funding_accounts WHERE gateway = ?1 AND account_number = ?3
               LIMIT 1";
    tx.query_opt(sql, &[&gateway, &customer_ref, &account_number], |row| {
        row.parsed(col!("account_id"))
    })
    .await
}

async fn record_checked<T: Tx>(tx: &T, new: &NewFunding) -> Result<FundingRecorded, T::Error> {
    let source = check_new_funding(new)?;
    record(tx, new, source).await
}

/// An unmatched payment credited to `account` with the operator's line;
/// refused unless it is still unmatched (PostgreSQL: read under its row lock).
pub(crate) async fn assign<T: Tx>(
    tx: &T,
    id: &str,
    account: AccountId,
    fee: Kobo,
    note: &str,
    log: &NewLogEntry,
) -> Result<FundingEvent, T::Error> {
    let event = event_locked(tx, "id = ?1", &[&id])
        .await?
        .ok_or(StoreError::NotFound("funding"))?;
    if event.status != FundingStatus::Unmatched {
        return Err(StoreError::Invalid(format!(
            "funding {id} is {}: only an unmatched payment can be assigned",
            event.status.as_str()
        ))
        .into());
    }
    let new = NewFunding {
        gateway: event.gateway,
        gateway_reference: event.gateway_reference,
        status: FundingStatus::Credited,
        account_id: Some(account),
        amount: event.amount,
        fee,
        currency: event.currency,
        customer_ref: event.customer_ref,
        account_number: event.account_number,
        payer: event.payer,
        note: note.to_owned(),
    };
    let event = record_checked(tx, &new).await?.event;
    append(tx, log).await?;
    Ok(event)
}

/// `record_funding` in the caller's transaction. The event row is claimed
/// first — inserted, or locked if another request inserted it — so a
/// concurrent duplicate (PostgreSQL) waits for this one to commit and then
/// finds it credited; SQLite's single writer needs no lock.
async fn record<T: Tx>(
    tx: &T,
    new: &NewFunding,
    source: CreditSource,
) -> Result<FundingRecorded, T::Error> {
    let now = now_rfc3339();
    let claim = "INSERT INTO funding_events (id, gateway, gateway_reference, status, amount, note,
                     created_at, updated_at)
                 VALUES (?1, ?2, ?3, 'pending_verification', 0, '', ?4, ?4)
                 ON CONFLICT (gateway, gateway_reference) DO NOTHING";
    let params: [&dyn Param; 4] = [&funding_id(), &new.gateway, &new.gateway_reference, &now];
    let inserted = tx.execute(claim, &params).await? == 1;
    let existing = event_locked(
        tx,
        "gateway = ?1 AND gateway_reference = ?2",
        &[&new.gateway, &new.gateway_reference],
    )
    .await?
    .ok_or(StoreError::NotFound("funding"))?;
    let before = (!inserted).then_some(existing.status);
    if !funding_writes(before, new.status) {
        return Ok(FundingRecorded {
            event: existing,
            credited_now: false,
            before,
        });
    }
    let credited = new.status == FundingStatus::Credited;
    let update = "UPDATE funding_events SET status = ?2, account_id = ?3, amount = ?4, fee = ?5,
                      currency = ?6, customer_ref = ?7, account_number = ?8, payer = ?9, note = ?10,
                      updated_at = ?11, credited_at = ?12
                  WHERE id = ?1";
    let account = new.account_id.map(|a| a.to_string());
    let fee = if credited { new.fee.0 } else { 0 };
    let credited_at = credited.then_some(&now);
    let params: [&dyn Param; 12] = [
        &existing.id,
        &new.status.as_str(),
        &account,
        &new.amount.0,
        &fee,
        &new.currency,
        &new.customer_ref,
        &new.account_number,
        &new.payer,
        &new.note,
        &now,
        &credited_at,
    ];
    tx.execute(update, &params).await?;
    if let (true, Some(account)) = (credited, new.account_id) {
        let payment = Entry::Funding {
            source: &source,
            reference: &new.gateway_reference,
            funding_id: &existing.id,
        };
        post_ledger(tx, account, new.amount, payment).await?;
        if new.fee > Kobo::ZERO {
            post_ledger(tx, account, Kobo(-new.fee.0), Entry::Fee(&existing.id)).await?;
        }
        notices::funding_credited(tx, account, &existing.id, new.amount, new.fee).await?;
        // The referrer's one-time bonus on a referee's first funding, if set.
        super::referrals::first_funding(tx, account).await?;
    }
    let event = event_locked(tx, "id = ?1", &[&existing.id])
        .await?
        .ok_or(StoreError::NotFound("funding"))?;
    Ok(FundingRecorded {
        event,
        credited_now: credited,
        before,
    })
}

/// The event `condition` selects, under its row lock on PostgreSQL.
async fn event_locked<T: Tx>(
    tx: &T,
    condition: &str,
    params: &[&dyn Param],
) -> Result<Option<FundingEvent>, T::Error> {
    let lock = T::ENGINE.for_update();
    let sql = format!("SELECT {FUNDING_COLUMNS} FROM funding_events WHERE {condition}{lock}");
    tx.query_opt(&sql, params, funding_event).await
}

/// By id, else by gateway reference.
async fn find<T: ReadTx>(tx: &T, key: &str) -> Result<Option<FundingEvent>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {FUNDING_COLUMNS} FROM funding_events WHERE id = ?1 OR gateway_reference = ?1
             ORDER BY (id = ?1) DESC LIMIT 1"
        )
    });
    tx.query_opt(&SQL, &[&key], funding_event).await
}

async fn list<T: ReadTx>(tx: &T, filter: &FundingFilter) -> Result<Vec<FundingEvent>, T::Error> {
    let listing = listing(filter);
    tx.query_all(&listing.sql, &listing.params(), funding_event)
        .await
}

/// The listing's statement: only the filters set (`crate::listing`).
pub(crate) fn listing(filter: &FundingFilter) -> Listing {
    Filters::default()
        .and("account_id = ?", filter.account_id.map(|a| a.to_string()))
        .and("status = ?", filter.status.map(FundingStatus::as_str))
        .and("gateway = ?", filter.gateway.clone())
        .page(
            &format!("SELECT {FUNDING_COLUMNS} FROM funding_events"),
            "ORDER BY created_at DESC, id DESC",
            filter.limit.max(1),
            Some(filter.offset),
        )
}

async fn totals<T: ReadTx>(tx: &T, from: &str, until: &str) -> Result<FundingTotals, T::Error> {
    tx.query_one(crate::operators::FUNDING_TOTALS, &[&from, &until], |row| {
        Ok(FundingTotals {
            received: row.get(Column::nth(0))?,
            payments: row.get(Column::nth(1))?,
            fees: row.get(Column::nth(2))?,
            by_card: row.get(Column::nth(3))?,
        })
    })
    .await
}

async fn take_lease<T: Tx>(
    tx: One<'_, T>,
    name: &str,
    holder: &str,
    lease: Duration,
) -> Result<bool, T::Error> {
    let sql = "INSERT INTO job_leases (name, holder, lease_until) VALUES (?1, ?2, ?3)
               ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,
                   lease_until = excluded.lease_until
               WHERE job_leases.holder = excluded.holder OR job_leases.lease_until < ?4";
    let taken = tx
        .execute(sql, &[&name, &holder, &ms_from_now(lease), &now_ms()])
        .await?;
    Ok(taken == 1)
}
