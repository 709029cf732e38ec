//! Row ⇄ record mapping for the SQLite backend.

use crate::*;
use billpay_domain::{AccountId, KeyId, Kobo};
use rusqlite::Row;
use std::str::FromStr;

fn parsed<T: FromStr>(row: &Row, index: usize) -> rusqlite::Result<T>
where
    T::Err: std::fmt::Display,
{
    let text: String = row.get(index)?;
    T::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            e.to_string().into(),
        )
    })
}

fn json<T: serde::de::DeserializeOwned>(row: &Row, index: usize) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, e.into())
    })
}

fn kobo(row: &Row, index: usize) -> rusqlite::Result<Kobo> {
    row.get(index).map(Kobo)
}

pub fn account(row: &Row) -> rusqlite::Result<Account> {
    Ok(Account {
        id: parsed::<AccountId>(row, 0)?,
        name: row.get(1)?,
        email: row.get(2)?,
        status: parsed(row, 3)?,
        balance: kobo(row, 4)?,
        password_hash: row.get(5)?,
        created_at: row.get(6)?,
    })
}

pub fn api_key(row: &Row) -> rusqlite::Result<ApiKey> {
    let per_second: Option<u32> = row.get(5)?;
    let burst: Option<u32> = row.get(6)?;
    Ok(ApiKey {
        id: parsed::<KeyId>(row, 0)?,
        account_id: parsed::<AccountId>(row, 1)?,
        name: row.get(2)?,
        display_prefix: row.get(3)?,
        status: parsed(row, 4)?,
        rate_limit: per_second
            .zip(burst)
            .map(|(per_second, burst)| RateLimit { per_second, burst }),
        webhook_url: row.get(7)?,
        webhook_secret_sealed: row.get(8)?,
        webhook_retries: row.get(9)?,
        created_at: row.get(10)?,
        last_used_at: row.get(11)?,
    })
}

pub fn transaction(row: &Row) -> rusqlite::Result<Transaction> {
    Ok(Transaction {
        code: row.get(0)?,
        account_id: parsed::<AccountId>(row, 1)?,
        key_id: parsed::<KeyId>(row, 2)?,
        reference: row.get(3)?,
        product: parsed(row, 4)?,
        provider: row.get(5)?,
        plan_id: row.get(6)?,
        label: row.get(7)?,
        recipient: row.get(8)?,
        amount: kobo(row, 9)?,
        details: json(row, 10)?,
        status: parsed(row, 11)?,
        message: row.get(12)?,
        balance_before: kobo(row, 13)?,
        balance_after: kobo(row, 14)?,
        result: json(row, 15)?,
        attempts: row.get(16)?,
        submitted: row.get(17)?,
        created_at: row.get(18)?,
        completed_at: row.get(19)?,
        supplier: row.get(20)?,
        supplier_reference: row.get(21)?,
    })
}

pub fn event(row: &Row) -> rusqlite::Result<Event> {
    Ok(Event {
        id: row.get(0)?,
        transaction_code: row.get(1)?,
        account_id: parsed::<AccountId>(row, 2)?,
        key_id: parsed::<KeyId>(row, 3)?,
        event: row.get(4)?,
        payload: row.get(5)?,
        status: parsed(row, 6)?,
        attempts: row.get(7)?,
        created_at: row.get(8)?,
    })
}

pub fn ledger_entry(row: &Row) -> rusqlite::Result<LedgerEntry> {
    Ok(LedgerEntry {
        id: row.get(0)?,
        account_id: parsed::<AccountId>(row, 1)?,
        amount: kobo(row, 2)?,
        kind: row.get(3)?,
        balance_after: kobo(row, 4)?,
        transaction_code: row.get(5)?,
        credit_reference: row.get(6)?,
        created_at: row.get(7)?,
    })
}

pub fn attempt(row: &Row) -> rusqlite::Result<Attempt> {
    Ok(Attempt {
        id: row.get(0)?,
        event_id: row.get(1)?,
        url: row.get(2)?,
        http_status: row.get(3)?,
        error: row.get(4)?,
        latency_ms: row.get(5)?,
        response_excerpt: row.get(6)?,
        created_at: row.get(7)?,
    })
}

pub fn daily_spend_row(row: &Row) -> rusqlite::Result<DailySpend> {
    Ok(DailySpend {
        day: row.get(0)?,
        product: parsed(row, 1)?,
        count: row.get(2)?,
        amount: kobo(row, 3)?,
    })
}
