//! Row ⇄ record mapping for the SQLite backend, reading each column by its
//! name (the lists in `columns.rs`), so a column added or moved cannot shift
//! the others.

use crate::*;
use billpay_domain::{AccountId, KeyId, Kobo};
use rusqlite::Row;
use rusqlite::types::FromSql;
use std::cell::Cell;
use std::str::FromStr;

/// A row whose columns are read by name. rusqlite's `get("name")` scans the
/// columns from the first, asking SQLite for each one's name, on every read:
/// for a transaction's two dozen columns that was a fifth of a status
/// lookup's instructions. Mappers read columns in about the order they are
/// selected, so each lookup here starts just after the last one found: one
/// name compared per column, whatever the query's column order.
struct Named<'r, 's> {
    row: &'r Row<'s>,
    next: Cell<usize>,
}

impl<'r, 's> Named<'r, 's> {
    fn new(row: &'r Row<'s>) -> Self {
        Named {
            row,
            next: Cell::new(0),
        }
    }

    fn index(&self, name: &str) -> rusqlite::Result<usize> {
        let statement = self.row.as_ref();
        let count = statement.column_count();
        let start = self.next.get();
        for offset in 0..count {
            let index = (start + offset) % count;
            if statement.column_name(index)?.eq_ignore_ascii_case(name) {
                self.next.set(index + 1);
                return Ok(index);
            }
        }
        Err(rusqlite::Error::InvalidColumnName(name.to_owned()))
    }

    fn get<T: FromSql>(&self, name: &str) -> rusqlite::Result<T> {
        self.row.get(self.index(name)?)
    }
}

fn parsed<T: FromStr>(row: &Named, column: &str) -> rusqlite::Result<T>
where
    T::Err: std::fmt::Display,
{
    let index = row.index(column)?;
    let text: String = row.row.get(index)?;
    T::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            e.to_string().into(),
        )
    })
}

fn json<T: serde::de::DeserializeOwned>(row: &Named, column: &str) -> rusqlite::Result<T> {
    let index = row.index(column)?;
    let text: String = row.row.get(index)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, e.into())
    })
}

fn kobo(row: &Named, column: &str) -> rusqlite::Result<Kobo> {
    row.get(column).map(Kobo)
}

fn optional_kobo(row: &Named, column: &str) -> rusqlite::Result<Option<Kobo>> {
    Ok(row.get::<Option<i64>>(column)?.map(Kobo))
}

pub fn account(row: &Row) -> rusqlite::Result<Account> {
    let row = &Named::new(row);
    Ok(Account {
        id: parsed::<AccountId>(row, "id")?,
        name: row.get("name")?,
        email: row.get("email")?,
        status: parsed(row, "status")?,
        balance: kobo(row, "balance")?,
        password_hash: row.get("password_hash")?,
        created_at: row.get("created_at")?,
    })
}

pub fn api_key(row: &Row) -> rusqlite::Result<ApiKey> {
    let row = &Named::new(row);
    let per_second: Option<u32> = row.get("rate_per_second")?;
    let burst: Option<u32> = row.get("rate_burst")?;
    Ok(ApiKey {
        id: parsed::<KeyId>(row, "id")?,
        account_id: parsed::<AccountId>(row, "account_id")?,
        name: row.get("name")?,
        display_prefix: row.get("display_prefix")?,
        status: parsed(row, "status")?,
        rate_limit: per_second
            .zip(burst)
            .map(|(per_second, burst)| RateLimit { per_second, burst }),
        webhook_url: row.get("webhook_url")?,
        webhook_secret_sealed: row.get("webhook_secret_sealed")?,
        webhook_retries: row.get("webhook_retries")?,
        created_at: row.get("created_at")?,
        last_used_at: row.get("last_used_at")?,
    })
}

pub fn transaction(row: &Row) -> rusqlite::Result<Transaction> {
    let row = &Named::new(row);
    Ok(Transaction {
        code: row.get("code")?,
        account_id: parsed::<AccountId>(row, "account_id")?,
        key_id: parsed::<KeyId>(row, "key_id")?,
        reference: row.get("reference")?,
        product: parsed(row, "product")?,
        provider: row.get("provider")?,
        plan_id: row.get("plan_id")?,
        label: row.get("label")?,
        recipient: row.get("recipient")?,
        amount: kobo(row, "amount")?,
        face_value: optional_kobo(row, "face_value")?.unwrap_or(kobo(row, "amount")?),
        cost: optional_kobo(row, "cost")?,
        tier: row.get("tier")?,
        details: json(row, "details")?,
        status: parsed(row, "status")?,
        message: row.get("message")?,
        balance_before: kobo(row, "balance_before")?,
        balance_after: kobo(row, "balance_after")?,
        result: json(row, "result")?,
        attempts: row.get("attempts")?,
        submitted: row.get("submitted")?,
        created_at: row.get("created_at")?,
        completed_at: row.get("completed_at")?,
        supplier: row.get("supplier")?,
        supplier_reference: row.get("supplier_reference")?,
    })
}

pub fn event(row: &Row) -> rusqlite::Result<Event> {
    let row = &Named::new(row);
    Ok(Event {
        id: row.get("id")?,
        transaction_code: row.get("transaction_code")?,
        account_id: parsed::<AccountId>(row, "account_id")?,
        key_id: parsed::<KeyId>(row, "key_id")?,
        event: row.get("event")?,
        payload: row.get("payload")?,
        status: parsed(row, "status")?,
        attempts: row.get("attempts")?,
        created_at: row.get("created_at")?,
    })
}

pub fn ledger_entry(row: &Row) -> rusqlite::Result<LedgerEntry> {
    let row = &Named::new(row);
    let kind = parsed(row, "kind")?;
    let stored: Option<String> = row.get("credit_source")?;
    let credit_source = rules::credit_source(kind, stored.as_deref()).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
    })?;
    Ok(LedgerEntry {
        id: row.get("id")?,
        account_id: parsed::<AccountId>(row, "account_id")?,
        amount: kobo(row, "amount")?,
        kind,
        balance_after: kobo(row, "balance_after")?,
        transaction_code: row.get("transaction_code")?,
        credit_reference: row.get("credit_reference")?,
        created_at: row.get("created_at")?,
        credit_source,
    })
}

pub fn attempt(row: &Row) -> rusqlite::Result<Attempt> {
    let row = &Named::new(row);
    Ok(Attempt {
        id: row.get("id")?,
        event_id: row.get("event_id")?,
        url: row.get("url")?,
        http_status: row.get("http_status")?,
        error: row.get("error")?,
        latency_ms: row.get("latency_ms")?,
        response_excerpt: row.get("response_excerpt")?,
        created_at: row.get("created_at")?,
    })
}

pub fn daily_spend_row(row: &Row) -> rusqlite::Result<DailySpend> {
    let row = &Named::new(row);
    Ok(DailySpend {
        day: row.get("day")?,
        product: parsed(row, "product")?,
        count: row.get("purchases")?,
        amount: kobo(row, "spent")?,
    })
}

pub fn funding_event(row: &Row) -> rusqlite::Result<FundingEvent> {
    let row = &Named::new(row);
    let status = parsed(row, "status")?;
    let account: Option<String> = row.get("account_id")?;
    let account_id = account
        .map(|a| a.parse::<AccountId>())
        .transpose()
        .map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(
                0,
                rusqlite::types::Type::Text,
                e.to_string().into(),
            )
        })?;
    let (amount, fee) = (kobo(row, "amount")?, kobo(row, "fee")?);
    Ok(FundingEvent {
        id: row.get("id")?,
        gateway: row.get("gateway")?,
        gateway_reference: row.get("gateway_reference")?,
        status,
        account_id,
        amount,
        fee,
        credited: FundingEvent::credited_amount(status, amount, fee),
        currency: row.get("currency")?,
        customer_ref: row.get("customer_ref")?,
        account_number: row.get("account_number")?,
        payer: row.get("payer")?,
        note: row.get("note")?,
        created_at: row.get("created_at")?,
        updated_at: row.get("updated_at")?,
        credited_at: row.get("credited_at")?,
    })
}

pub fn reserved_account(row: &Row) -> rusqlite::Result<ReservedAccount> {
    let row = &Named::new(row);
    Ok(ReservedAccount {
        account_id: parsed::<AccountId>(row, "account_id")?,
        gateway: row.get("gateway")?,
        customer_ref: row.get("customer_ref")?,
        bank_name: row.get("bank_name")?,
        account_number: row.get("account_number")?,
        account_name: row.get("account_name")?,
        created_at: row.get("created_at")?,
    })
}
