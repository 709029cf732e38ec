//! Row → record mapping for the PostgreSQL backend (the same records, from the
//! same column lists, as the SQLite backend), reading each column by its name.

use super::error::PgError;
use crate::*;
use billpay_domain::{AccountId, KeyId, Kobo};
use std::str::FromStr;
use tokio_postgres::Row;
use tokio_postgres::row::RowIndex;
use tokio_postgres::types::FromSql;

/// A column by its position (one-column answers) or by its name (records).
pub fn get<'a, T: FromSql<'a>>(
    row: &'a Row,
    column: impl RowIndex + std::fmt::Display,
) -> Result<T, PgError> {
    Ok(row.try_get(column)?)
}

fn parsed<T: FromStr>(row: &Row, column: &str) -> Result<T, PgError>
where
    T::Err: std::fmt::Display,
{
    let text: String = get(row, column)?;
    T::from_str(&text).map_err(|e| {
        PgError::Store(StoreError::Backend(format!(
            "column {column}: cannot read {text:?}: {e}"
        )))
    })
}

fn json<T: serde::de::DeserializeOwned>(row: &Row, column: &str) -> Result<T, PgError> {
    let text: String = get(row, column)?;
    serde_json::from_str(&text)
        .map_err(|e| PgError::Store(StoreError::Backend(format!("column {column}: {e}"))))
}

fn kobo(row: &Row, column: &str) -> Result<Kobo, PgError> {
    get(row, column).map(Kobo)
}

fn optional_kobo(row: &Row, column: &str) -> Result<Option<Kobo>, PgError> {
    Ok(get::<Option<i64>>(row, column)?.map(Kobo))
}

fn count(row: &Row, column: &str) -> Result<u32, PgError> {
    let n: i32 = get(row, column)?;
    Ok(n.max(0) as u32)
}

pub fn account(row: &Row) -> Result<Account, PgError> {
    Ok(Account {
        id: parsed::<AccountId>(row, "id")?,
        name: get(row, "name")?,
        email: get(row, "email")?,
        status: parsed(row, "status")?,
        balance: kobo(row, "balance")?,
        password_hash: get(row, "password_hash")?,
        created_at: get(row, "created_at")?,
    })
}

pub fn api_key(row: &Row) -> Result<ApiKey, PgError> {
    let per_second: Option<i32> = get(row, "rate_per_second")?;
    let burst: Option<i32> = get(row, "rate_burst")?;
    Ok(ApiKey {
        id: parsed::<KeyId>(row, "id")?,
        account_id: parsed::<AccountId>(row, "account_id")?,
        name: get(row, "name")?,
        display_prefix: get(row, "display_prefix")?,
        status: parsed(row, "status")?,
        rate_limit: per_second.zip(burst).map(|(per_second, burst)| RateLimit {
            per_second: per_second.max(0) as u32,
            burst: burst.max(0) as u32,
        }),
        webhook_url: get(row, "webhook_url")?,
        webhook_secret_sealed: get(row, "webhook_secret_sealed")?,
        webhook_retries: get(row, "webhook_retries")?,
        created_at: get(row, "created_at")?,
        last_used_at: get(row, "last_used_at")?,
    })
}

pub fn transaction(row: &Row) -> Result<Transaction, PgError> {
    Ok(Transaction {
        code: get(row, "code")?,
        account_id: parsed::<AccountId>(row, "account_id")?,
        key_id: parsed::<KeyId>(row, "key_id")?,
        reference: get(row, "reference")?,
        product: parsed(row, "product")?,
        provider: get(row, "provider")?,
        plan_id: get(row, "plan_id")?,
        label: get(row, "label")?,
        recipient: get(row, "recipient")?,
        amount: kobo(row, "amount")?,
        face_value: optional_kobo(row, "face_value")?.unwrap_or(kobo(row, "amount")?),
        cost: optional_kobo(row, "cost")?,
        tier: get(row, "tier")?,
        details: json(row, "details")?,
        status: parsed(row, "status")?,
        message: get(row, "message")?,
        balance_before: kobo(row, "balance_before")?,
        balance_after: kobo(row, "balance_after")?,
        result: json(row, "result")?,
        attempts: count(row, "attempts")?,
        submitted: get(row, "submitted")?,
        created_at: get(row, "created_at")?,
        completed_at: get(row, "completed_at")?,
        supplier: get(row, "supplier")?,
        supplier_reference: get(row, "supplier_reference")?,
    })
}

pub fn event(row: &Row) -> Result<Event, PgError> {
    Ok(Event {
        id: get(row, "id")?,
        transaction_code: get(row, "transaction_code")?,
        account_id: parsed::<AccountId>(row, "account_id")?,
        key_id: parsed::<KeyId>(row, "key_id")?,
        event: get(row, "event")?,
        payload: get(row, "payload")?,
        status: parsed(row, "status")?,
        attempts: count(row, "attempts")?,
        created_at: get(row, "created_at")?,
    })
}

pub fn ledger_entry(row: &Row) -> Result<LedgerEntry, PgError> {
    let kind = parsed(row, "kind")?;
    let stored: Option<String> = get(row, "credit_source")?;
    let credit_source = rules::credit_source(kind, stored.as_deref())
        .map_err(|e| PgError::Store(StoreError::Backend(e)))?;
    Ok(LedgerEntry {
        id: get(row, "id")?,
        account_id: parsed::<AccountId>(row, "account_id")?,
        amount: kobo(row, "amount")?,
        kind,
        balance_after: kobo(row, "balance_after")?,
        transaction_code: get(row, "transaction_code")?,
        credit_reference: get(row, "credit_reference")?,
        created_at: get(row, "created_at")?,
        credit_source,
    })
}

pub fn attempt(row: &Row) -> Result<Attempt, PgError> {
    let status: Option<i32> = get(row, "http_status")?;
    let latency: i64 = get(row, "latency_ms")?;
    Ok(Attempt {
        id: get(row, "id")?,
        event_id: get(row, "event_id")?,
        url: get(row, "url")?,
        http_status: status.map(|s| s.clamp(0, i32::from(u16::MAX)) as u16),
        error: get(row, "error")?,
        latency_ms: latency.max(0) as u64,
        response_excerpt: get(row, "response_excerpt")?,
        created_at: get(row, "created_at")?,
    })
}

pub fn daily_spend_row(row: &Row) -> Result<DailySpend, PgError> {
    let count: i64 = get(row, "purchases")?;
    Ok(DailySpend {
        day: get(row, "day")?,
        product: parsed(row, "product")?,
        count: count.max(0) as u32,
        amount: kobo(row, "spent")?,
    })
}
