//! Money in by bank transfer: reserved accounts, payments received, the
//! once-only credit (event row + payment + fee in one transaction), job leases.

use super::connection::{Params, PgTx, execute, map_opt, map_rows, query, query_one, query_opt};
use super::error::PgResult;
use super::operators::append_in;
use super::rows::{funding_event, get, reserved_account};
use super::{Pg, PostgresStore};
use crate::areas::notices;
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{FUNDING_COLUMNS, RESERVED_COLUMNS};
use crate::rules::{check_new_funding, funding_id, funding_writes, ms_from_now};
use crate::*;
use async_trait::async_trait;
use billpay_domain::{AccountId, Kobo};
use deadpool_postgres::GenericClient;

#[async_trait]
impl FundingStore for PostgresStore {
    async fn save_reservation(&self, new: NewReservation) -> StoreResult<()> {
        self.write(move |tx| {
            let new = new.clone();
            Box::pin(async move {
                let (now, account) = (now_rfc3339(), new.account_id.to_string());
                let customer =
                    "INSERT INTO funding_customers (gateway, customer_ref, account_id, created_at)
                                VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING";
                let params: Params = &[&new.gateway, &new.customer_ref, &account, &now];
                execute(tx, customer, params).await?;
                for (bank_name, number, name) in &new.accounts {
                    let sql = "INSERT INTO funding_accounts (gateway, account_number, customer_ref,
                               account_id, bank_name, account_name, created_at)
                               VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING";
                    let params: Params = &[
                        &new.gateway,
                        number,
                        &new.customer_ref,
                        &account,
                        bank_name,
                        name,
                        &now,
                    ];
                    execute(tx, sql, params).await?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn funding_customer(
        &self,
        account: AccountId,
        gateway: &str,
    ) -> StoreResult<Option<String>> {
        let gateway = gateway.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "SELECT customer_ref FROM funding_customers WHERE account_id = $1 AND gateway = $2";
                let row = query_opt(c, sql, &[&account.to_string(), &gateway]).await?;
                row.map(|r| get(&r, 0)).transpose()
            })
        })
        .await
    }

    async fn funding_customers(&self, gateway: &str) -> StoreResult<Vec<String>> {
        let gateway = gateway.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "SELECT customer_ref FROM funding_customers WHERE gateway = $1 ORDER BY created_at";
                let rows = query(c, sql, &[&gateway]).await?;
                rows.iter().map(|r| get(r, 0)).collect()
            })
        })
        .await
    }

    async fn reserved_accounts(
        &self,
        account: Option<AccountId>,
    ) -> StoreResult<Vec<ReservedAccount>> {
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {RESERVED_COLUMNS} FROM funding_accounts
                     WHERE $1::TEXT IS NULL OR account_id = $1 ORDER BY gateway, created_at, account_number"
                );
                let account = account.map(|a| a.to_string());
                map_rows(query(c, &sql, &[&account]).await?, reserved_account)
            })
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
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "SELECT account_id FROM funding_customers WHERE gateway = $1 AND customer_ref = $2
                           UNION ALL
                           SELECT account_id FROM funding_accounts WHERE gateway = $1 AND account_number = $3
                           LIMIT 1";
                let row = query_opt(c, sql, &[&gateway, &customer_ref, &number]).await?;
                let Some(row) = row else { return Ok(None) };
                let account: String = get(&row, 0)?;
                let account = account.parse().map_err(|e: uuid::Error| StoreError::Backend(e.to_string()))?;
                Ok(Some(account))
            })
        })
        .await
    }

    async fn record_funding(&self, new: NewFunding) -> StoreResult<FundingRecorded> {
        let source = check_new_funding(&new)?;
        self.write(move |tx| {
            let new = new.clone();
            Box::pin(async move { record(tx, &new, source).await })
        })
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
        self.write(move |tx| {
            let (id, note, log) = (id.clone(), note.clone(), log.clone());
            Box::pin(async move {
                let sql = format!(
                    "SELECT {FUNDING_COLUMNS} FROM funding_events WHERE id = $1 FOR UPDATE"
                );
                let event = map_opt(query_opt(tx, &sql, &[&id]).await?, funding_event)?
                    .ok_or(StoreError::NotFound("funding"))?;
                if event.status != FundingStatus::Unmatched {
                    return Err(StoreError::Invalid(format!(
                        "funding {id} is {}: only an unmatched payment can be assigned",
                        event.status.as_str()
                    ))
                    .into());
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
                let event = record(tx, &new, source).await?.event;
                append_in(tx, &log).await?;
                Ok(event)
            })
        })
        .await
    }

    async fn funding_event(&self, id_or_reference: &str) -> StoreResult<Option<FundingEvent>> {
        let key = id_or_reference.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {FUNDING_COLUMNS} FROM funding_events WHERE id = $1 OR gateway_reference = $1
                     ORDER BY (id = $1) DESC LIMIT 1"
                );
                map_opt(query_opt(c, &sql, &[&key]).await?, funding_event)
            })
        })
        .await
    }

    async fn funding_events(&self, filter: FundingFilter) -> StoreResult<Vec<FundingEvent>> {
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {FUNDING_COLUMNS} FROM funding_events
                     WHERE ($1::TEXT IS NULL OR account_id = $1) AND ($2::TEXT IS NULL OR status = $2)
                       AND ($3::TEXT IS NULL OR gateway = $3)
                     ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5"
                );
                let account = filter.account_id.map(|a| a.to_string());
                let status = filter.status.map(FundingStatus::as_str);
                let limit = i64::from(filter.limit.max(1));
                let offset = i64::from(filter.offset);
                let params: Params = &[&account, &status, &filter.gateway, &limit, &offset];
                map_rows(query(c, &sql, params).await?, funding_event)
            })
        })
        .await
    }

    async fn funding_totals(&self, from: &str, until: &str) -> StoreResult<FundingTotals> {
        let (from, until) = (from.to_owned(), until.to_owned());
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = crate::operators::FUNDING_TOTALS;
                let row = query_one(c, sql, &[&from, &until]).await?;
                Ok(FundingTotals {
                    received: Kobo(get(&row, 0)?),
                    payments: get::<i64>(&row, 1)? as u64,
                    fees: Kobo(get(&row, 2)?),
                })
            })
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
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = "INSERT INTO job_leases (name, holder, lease_until) VALUES ($1, $2, $3)
                           ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
                           WHERE job_leases.holder = excluded.holder OR job_leases.lease_until < $4";
                let params: Params = &[&name, &holder, &ms_from_now(lease), &now_ms()];
                Ok(execute(c, sql, params).await? == 1)
            })
        })
        .await
    }
}

/// `record_funding` in one transaction. The event row is claimed first —
/// inserted, or locked if another request inserted it — so a concurrent
/// duplicate waits for this one to commit and then finds it credited.
async fn record(
    tx: &PgTx<'_>,
    new: &NewFunding,
    source: CreditSource,
) -> PgResult<FundingRecorded> {
    let now = now_rfc3339();
    let claim = "INSERT INTO funding_events (id, gateway, gateway_reference, status, amount, note,
                     created_at, updated_at)
                 VALUES ($1, $2, $3, 'pending_verification', 0, '', $4, $4)
                 ON CONFLICT (gateway, gateway_reference) DO NOTHING RETURNING id";
    let fresh_id = funding_id();
    let params: Params = &[&fresh_id, &new.gateway, &new.gateway_reference, &now];
    let inserted = query_opt(tx, claim, params).await?.is_some();
    let sql = format!(
        "SELECT {FUNDING_COLUMNS} FROM funding_events WHERE gateway = $1 AND gateway_reference = $2 FOR UPDATE"
    );
    let params: Params = &[&new.gateway, &new.gateway_reference];
    let existing = map_opt(query_opt(tx, &sql, params).await?, funding_event)?
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
    let update = "UPDATE funding_events SET status = $2, account_id = $3, amount = $4, fee = $5,
                      currency = $6, customer_ref = $7, account_number = $8, payer = $9, note = $10,
                      updated_at = $11, credited_at = $12
                  WHERE id = $1";
    let account = new.account_id.map(|a| a.to_string());
    let fee = if credited { new.fee.0 } else { 0 };
    let credited_at = credited.then_some(&now);
    let params: Params = &[
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
    execute(tx, update, params).await?;
    if let (true, Some(account)) = (credited, new.account_id) {
        let reference = Some(new.gateway_reference.as_str());
        post(
            tx,
            account,
            new.amount,
            "credit",
            reference,
            Some(source),
            &existing.id,
        )
        .await?;
        if new.fee > Kobo::ZERO {
            post(
                tx,
                account,
                Kobo(-new.fee.0),
                "fee",
                None,
                None,
                &existing.id,
            )
            .await?;
        }
        let (id, amount, fee) = (&existing.id, new.amount, new.fee);
        notices::funding_credited(&Pg(tx), account, id, amount, fee).await?;
    }
    let sql = format!("SELECT {FUNDING_COLUMNS} FROM funding_events WHERE id = $1");
    let event = map_opt(query_opt(tx, &sql, &[&existing.id]).await?, funding_event)?
        .ok_or(StoreError::NotFound("funding"))?;
    Ok(FundingRecorded {
        event,
        credited_now: credited,
        before,
    })
}

/// One ledger entry of a funding (`sql/post_funding_ledger.sql`).
async fn post<C: GenericClient>(
    c: &C,
    account: AccountId,
    amount: Kobo,
    kind: &str,
    reference: Option<&str>,
    source: Option<CreditSource>,
    funding_id: &str,
) -> PgResult<Kobo> {
    let source = source.map(CreditSource::as_str);
    let params: Params = &[
        &amount.0,
        &account.to_string(),
        &kind,
        &reference,
        &now_rfc3339(),
        &source,
        &funding_id,
    ];
    match query_opt(c, include_str!("sql/post_funding_ledger.sql"), params).await? {
        Some(row) => Ok(Kobo(get(&row, 0)?)),
        None => Err(Refusal::InsufficientBalance.into()),
    }
}
