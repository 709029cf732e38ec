//! Row → record mapping for the PostgreSQL backend (the same records, from the
//! same column lists, as the SQLite backend).

use super::error::PgError;
use crate::*;
use billpay_domain::{AccountId, KeyId, Kobo};
use std::str::FromStr;
use tokio_postgres::Row;
use tokio_postgres::types::FromSql;

pub fn get<'a, T: FromSql<'a>>(row: &'a Row, index: usize) -> Result<T, PgError> {
    Ok(row.try_get(index)?)
}

fn parsed<T: FromStr>(row: &Row, index: usize) -> Result<T, PgError>
where
    T::Err: std::fmt::Display,
{
    let text: String = get(row, index)?;
    T::from_str(&text).map_err(|e| {
        PgError::Store(StoreError::Backend(format!(
            "column {index}: cannot read {text:?}: {e}"
        )))
    })
}

fn json<T: serde::de::DeserializeOwned>(row: &Row, index: usize) -> Result<T, PgError> {
    let text: String = get(row, index)?;
    serde_json::from_str(&text)
        .map_err(|e| PgError::Store(StoreError::Backend(format!("column {index}: {e}"))))
}

fn kobo(row: &Row, index: usize) -> Result<Kobo, PgError> {
    get(row, index).map(Kobo)
}

fn count(row: &Row, index: usize) -> Result<u32, PgError> {
    let n: i32 = get(row, index)?;
    Ok(n.max(0) as u32)
}

pub fn account(row: &Row) -> Result<Account, PgError> {
    Ok(Account {
        id: parsed::<AccountId>(row, 0)?,
        name: get(row, 1)?,
        email: get(row, 2)?,
        status: parsed(row, 3)?,
        balance: kobo(row, 4)?,
        password_hash: get(row, 5)?,
        created_at: get(row, 6)?,
    })
}

pub fn api_key(row: &Row) -> Result<ApiKey, PgError> {
    let per_second: Option<i32> = get(row, 5)?;
    let burst: Option<i32> = get(row, 6)?;
    Ok(ApiKey {
        id: parsed::<KeyId>(row, 0)?,
        account_id: parsed::<AccountId>(row, 1)?,
        name: get(row, 2)?,
        display_prefix: get(row, 3)?,
        status: parsed(row, 4)?,
        rate_limit: per_second.zip(burst).map(|(per_second, burst)| RateLimit {
            per_second: per_second.max(0) as u32,
            burst: burst.max(0) as u32,
        }),
        webhook_url: get(row, 7)?,
        webhook_secret_sealed: get(row, 8)?,
        webhook_retries: get(row, 9)?,
        created_at: get(row, 10)?,
        last_used_at: get(row, 11)?,
    })
}

pub fn transaction(row: &Row) -> Result<Transaction, PgError> {
    Ok(Transaction {
        code: get(row, 0)?,
        account_id: parsed::<AccountId>(row, 1)?,
        key_id: parsed::<KeyId>(row, 2)?,
        reference: get(row, 3)?,
        product: parsed(row, 4)?,
        provider: get(row, 5)?,
        plan_id: get(row, 6)?,
        label: get(row, 7)?,
        recipient: get(row, 8)?,
        amount: kobo(row, 9)?,
        details: json(row, 10)?,
        status: parsed(row, 11)?,
        message: get(row, 12)?,
        balance_before: kobo(row, 13)?,
        balance_after: kobo(row, 14)?,
        result: json(row, 15)?,
        attempts: count(row, 16)?,
        submitted: get(row, 17)?,
        created_at: get(row, 18)?,
        completed_at: get(row, 19)?,
        supplier: get(row, 20)?,
        supplier_reference: get(row, 21)?,
    })
}

pub fn event(row: &Row) -> Result<Event, PgError> {
    Ok(Event {
        id: get(row, 0)?,
        transaction_code: get(row, 1)?,
        account_id: parsed::<AccountId>(row, 2)?,
        key_id: parsed::<KeyId>(row, 3)?,
        event: get(row, 4)?,
        payload: get(row, 5)?,
        status: parsed(row, 6)?,
        attempts: count(row, 7)?,
        created_at: get(row, 8)?,
    })
}

pub fn ledger_entry(row: &Row) -> Result<LedgerEntry, PgError> {
    Ok(LedgerEntry {
        id: get(row, 0)?,
        account_id: parsed::<AccountId>(row, 1)?,
        amount: kobo(row, 2)?,
        kind: get(row, 3)?,
        balance_after: kobo(row, 4)?,
        transaction_code: get(row, 5)?,
        credit_reference: get(row, 6)?,
        created_at: get(row, 7)?,
    })
}

pub fn attempt(row: &Row) -> Result<Attempt, PgError> {
    let status: Option<i32> = get(row, 3)?;
    let latency: i64 = get(row, 5)?;
    Ok(Attempt {
        id: get(row, 0)?,
        event_id: get(row, 1)?,
        url: get(row, 2)?,
        http_status: status.map(|s| s.clamp(0, i32::from(u16::MAX)) as u16),
        error: get(row, 4)?,
        latency_ms: latency.max(0) as u64,
        response_excerpt: get(row, 6)?,
        created_at: get(row, 7)?,
    })
}

pub fn daily_spend_row(row: &Row) -> Result<DailySpend, PgError> {
    let count: i64 = get(row, 2)?;
    Ok(DailySpend {
        day: get(row, 0)?,
        product: parsed(row, 1)?,
        count: count.max(0) as u32,
        amount: kobo(row, 3)?,
    })
}
