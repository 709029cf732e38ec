//! Money in by bank transfer: reserved accounts, payments received, the
//! once-only credit (event row + payment + fee in one write), job leases.

use super::operators::append_in;
use super::rows::{funding_event, reserved_account};
use super::statements::{collect, execute, query_row};
use super::wallet::{Entry, post_ledger};
use super::{Lite, SqliteStore};
use crate::areas::notices;
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{FUNDING_COLUMNS, RESERVED_COLUMNS};
use crate::db::ready;
use crate::rules::{check_new_funding, funding_id, funding_writes, ms_from_now};
use crate::*;
use async_trait::async_trait;
use billpay_domain::{AccountId, Kobo};
use rusqlite::{Connection, OptionalExtension, params};

#[async_trait]
impl FundingStore for SqliteStore {
    async fn save_reservation(&self, new: NewReservation) -> StoreResult<()> {
        self.engine
            .write(move |conn| {
                let now = now_rfc3339();
                let account = new.account_id.to_string();
                execute(
                    conn,
                    "INSERT INTO funding_customers (gateway, customer_ref, account_id, created_at)
                     VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                    params![new.gateway, new.customer_ref, account, now],
                )?;
                for (bank_name, number, name) in &new.accounts {
                    execute(
                        conn,
                        "INSERT INTO funding_accounts (gateway, account_number, customer_ref,
                         account_id, bank_name, account_name, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
                        params![
                            new.gateway,
                            number,
                            new.customer_ref,
                            account,
                            bank_name,
                            name,
                            now
                        ],
                    )?;
                }
                Ok(())
            })
            .await
    }

    async fn funding_customer(
        &self,
        account: AccountId,
        gateway: &str,
    ) -> StoreResult<Option<String>> {
        let gateway = gateway.to_owned();
        self.engine
            .read(move |conn| {
                let sql = "SELECT customer_ref FROM funding_customers WHERE account_id = ?1 AND gateway = ?2";
                let found = query_row(conn, sql, params![account.to_string(), gateway], |r| r.get(0));
                Ok(found.optional()?)
            })
            .await
    }

    async fn funding_customers(&self, gateway: &str) -> StoreResult<Vec<String>> {
        let gateway = gateway.to_owned();
        self.engine
            .read(move |conn| {
                let sql = "SELECT customer_ref FROM funding_customers WHERE gateway = ?1 ORDER BY created_at";
                collect(conn, sql, [gateway], |r| r.get(0))
            })
            .await
    }

    async fn reserved_accounts(
        &self,
        account: Option<AccountId>,
    ) -> StoreResult<Vec<ReservedAccount>> {
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {RESERVED_COLUMNS} FROM funding_accounts
                     WHERE ?1 IS NULL OR account_id = ?1 ORDER BY gateway, created_at, account_number"
                );
                let account = account.map(|a| a.to_string());
                collect(conn, &sql, [account], reserved_account)
            })
            .await
    }

    async fn funding_owner(
        &self,
        gateway: &str,
        customer_ref: Option<&str>,
        account_number: Option<&str>,
    ) -> StoreResult<Option<AccountId>> {
        let (gateway, customer_ref, number) = (
            gateway.to_owned(),
            customer_ref.map(str::to_owned),
            account_number.map(str::to_owned),
        );
        self.engine
            .read(move |conn| {
                let sql = "SELECT account_id FROM funding_customers WHERE gateway = ?1 AND customer_ref = ?2
                           UNION ALL
                           SELECT account_id FROM funding_accounts WHERE gateway = ?1 AND account_number = ?3
                           LIMIT 1";
                let found: Option<String> = query_row(conn, sql, params![gateway, customer_ref, number], |r| r.get(0)).optional()?;
                found
                    .map(|a| a.parse().map_err(|e: uuid::Error| StoreError::Backend(e.to_string())))
                    .transpose()
            })
            .await
    }

    async fn record_funding(&self, new: NewFunding) -> StoreResult<FundingRecorded> {
        let source = check_new_funding(&new)?;
        self.engine
            .write(move |conn| record(conn, &new, source))
            .await
    }

    async fn assign_funding(
        &self,
        id: &str,
        account: AccountId,
        fee: Kobo,
        note: &str,
        log: NewLogEntry,
    ) -> StoreResult<FundingEvent> {
        let (id, note) = (id.to_owned(), note.to_owned());
        self.engine
            .write(move |conn| {
                let event = event_by(conn, "id", &id)?.ok_or(StoreError::NotFound("funding"))?;
                if event.status != FundingStatus::Unmatched {
                    return Err(StoreError::Invalid(format!(
                        "funding {id} is {}: only an unmatched payment can be assigned",
                        event.status.as_str()
                    )));
                }
                let new = NewFunding {
                    gateway: event.gateway.clone(),
                    gateway_reference: event.gateway_reference.clone(),
                    status: FundingStatus::Credited,
                    account_id: Some(account),
                    amount: event.amount,
                    fee,
                    currency: event.currency.clone(),
                    customer_ref: event.customer_ref.clone(),
                    account_number: event.account_number.clone(),
                    payer: event.payer.clone(),
                    note,
                };
                let source = check_new_funding(&new)?;
                let event = record(conn, &new, source)?.event;
                append_in(conn, &log)?;
                Ok(event)
            })
            .await
    }

    async fn funding_event(&self, id_or_reference: &str) -> StoreResult<Option<FundingEvent>> {
        let key = id_or_reference.to_owned();
        self.engine
            .read(move |conn| match event_by(conn, "id", &key)? {
                Some(event) => Ok(Some(event)),
                None => event_by(conn, "gateway_reference", &key),
            })
            .await
    }

    async fn funding_events(&self, filter: FundingFilter) -> StoreResult<Vec<FundingEvent>> {
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {FUNDING_COLUMNS} FROM funding_events
                     WHERE (?1 IS NULL OR account_id = ?1) AND (?2 IS NULL OR status = ?2)
                       AND (?3 IS NULL OR gateway = ?3)
                     ORDER BY created_at DESC, id DESC LIMIT ?4 OFFSET ?5"
                );
                let params = params![
                    filter.account_id.map(|a| a.to_string()),
                    filter.status.map(FundingStatus::as_str),
                    filter.gateway,
                    filter.limit.max(1),
                    filter.offset,
                ];
                collect(conn, &sql, params, funding_event)
            })
            .await
    }

    async fn funding_totals(&self, from: &str, until: &str) -> StoreResult<FundingTotals> {
        let (from, until) = (from.to_owned(), until.to_owned());
        self.engine
            .read(move |conn| {
                let sql = crate::operators::FUNDING_TOTALS;
                Ok(query_row(conn, sql, [from, until], |r| {
                    Ok(FundingTotals {
                        received: Kobo(r.get(0)?),
                        payments: r.get::<_, i64>(1)? as u64,
                        fees: Kobo(r.get(2)?),
                    })
                })?)
            })
            .await
    }

    async fn take_job_lease(
        &self,
        name: &str,
        holder: &str,
        lease: std::time::Duration,
    ) -> StoreResult<bool> {
        let (name, holder) = (name.to_owned(), holder.to_owned());
        self.engine
            .write(move |conn| {
                let taken = execute(
                    conn,
                    "INSERT INTO job_leases (name, holder, lease_until) VALUES (?1, ?2, ?3)
                     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
                     WHERE job_leases.holder = excluded.holder OR job_leases.lease_until < ?4",
                    params![name, holder, ms_from_now(lease), now_ms()],
                )?;
                Ok(taken == 1)
            })
            .await
    }
}

/// `record_funding` inside the writer's transaction: the event row first
/// (unique per gateway reference), then, for a credit, its ledger entries.
fn record(
    conn: &Connection,
    new: &NewFunding,
    source: CreditSource,
) -> StoreResult<FundingRecorded> {
    let now = now_rfc3339();
    let existing = event_by_reference(conn, &new.gateway, &new.gateway_reference)?;
    let before = existing.as_ref().map(|e| e.status);
    if !funding_writes(before, new.status) {
        let event = existing.expect("an event that is not written exists");
        return Ok(FundingRecorded {
            event,
            credited_now: false,
            before,
        });
    }
    let id = existing.map_or_else(funding_id, |e| e.id);
    let credited = new.status == FundingStatus::Credited;
    execute(
        conn,
        "INSERT INTO funding_events (id, gateway, gateway_reference, status, account_id, amount, fee,
             currency, customer_ref, account_number, payer, note, created_at, updated_at, credited_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13, ?14)
         ON CONFLICT (id) DO UPDATE SET status = excluded.status, account_id = excluded.account_id,
             amount = excluded.amount, fee = excluded.fee, currency = excluded.currency,
             customer_ref = excluded.customer_ref, account_number = excluded.account_number,
             payer = excluded.payer, note = excluded.note, updated_at = excluded.updated_at,
             credited_at = excluded.credited_at",
        params![
            id,
            new.gateway,
            new.gateway_reference,
            new.status.as_str(),
            new.account_id.map(|a| a.to_string()),
            new.amount.0,
            if credited { new.fee.0 } else { 0 },
            new.currency,
            new.customer_ref,
            new.account_number,
            new.payer,
            new.note,
            now,
            credited.then_some(&now),
        ],
    )?;
    if let (true, Some(account)) = (credited, new.account_id) {
        let payment = Entry::Funding {
            source,
            reference: &new.gateway_reference,
            funding_id: &id,
        };
        post_ledger(conn, account, new.amount, payment)?;
        if new.fee > Kobo::ZERO {
            post_ledger(conn, account, Kobo(-new.fee.0), Entry::Fee(&id))?;
        }
        let lite = Lite(conn);
        ready(notices::funding_credited(
            &lite, account, &id, new.amount, new.fee,
        ))?;
    }
    let event = event_by(conn, "id", &id)?.ok_or(StoreError::NotFound("funding"))?;
    Ok(FundingRecorded {
        event,
        credited_now: credited,
        before,
    })
}

fn event_by(conn: &Connection, column: &str, value: &str) -> StoreResult<Option<FundingEvent>> {
    let sql = format!("SELECT {FUNDING_COLUMNS} FROM funding_events WHERE {column} = ?1 LIMIT 1");
    Ok(query_row(conn, &sql, [value], funding_event).optional()?)
}

fn event_by_reference(
    conn: &Connection,
    gateway: &str,
    reference: &str,
) -> StoreResult<Option<FundingEvent>> {
    let sql = format!(
        "SELECT {FUNDING_COLUMNS} FROM funding_events WHERE gateway = ?1 AND gateway_reference = ?2"
    );
    Ok(query_row(conn, &sql, [gateway, reference], funding_event).optional()?)
}
