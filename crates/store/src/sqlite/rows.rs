//! Row ⇄ record mapping for the SQLite backend. Each column is read at its
//! position in the list the query selects (`columns.rs`), that position found
//! by the column's name at compile time: a column added or moved cannot shift
//! the others, a name not in the list does not compile, and a row costs no
//! name lookups (rusqlite's `get("name")` asks SQLite for the statement's
//! column names on every read: a fifth of a status lookup's instructions).

use crate::columns::*;
use crate::*;
use billpay_domain::{AccountId, KeyId, Kobo};
use rusqlite::Row;
use rusqlite::types::FromSql;
use std::str::FromStr;

/// A column of a mapper's list: its name and where the query selects it.
#[derive(Clone, Copy)]
struct Column {
    index: usize,
    name: &'static str,
}

/// `name`'s position in a column list such as `"a, b, c"`; evaluated at
/// compile time, where a missing name is an error.
const fn position(columns: &str, name: &str) -> usize {
    let list = columns.as_bytes();
    let mut start = 0;
    let mut index = 0;
    while start < list.len() {
        while start < list.len() && list[start].is_ascii_whitespace() {
            start += 1;
        }
        let mut end = start;
        while end < list.len() && list[end] != b',' && !list[end].is_ascii_whitespace() {
            end += 1;
        }
        if same(list, start, end, name.as_bytes()) {
            return index;
        }
        while end < list.len() && list[end] != b',' {
            end += 1;
        }
        start = end + 1;
        index += 1;
    }
    panic!("a mapper reads a column its list does not select");
}

/// Whether `list[start..end]` is `name`.
const fn same(list: &[u8], start: usize, end: usize, name: &[u8]) -> bool {
    if end - start != name.len() {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if list[start + i] != name[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `col!("name")`: the column `name` of the mapper's `COLUMNS` (a const in
/// the calling function), placed at compile time.
macro_rules! col {
    ($name:literal) => {
        Column {
            index: const { position(COLUMNS, $name) },
            name: $name,
        }
    };
}

/// The column's index, checked in debug builds (every test) against the
/// name SQLite gives it: a query selecting another order fails its tests.
fn at(row: &Row, column: Column) -> usize {
    debug_assert!(
        row.as_ref()
            .column_name(column.index)
            .is_ok_and(|name| name.eq_ignore_ascii_case(column.name)),
        "column {} is not at index {} of the query",
        column.name,
        column.index
    );
    column.index
}

fn get<T: FromSql>(row: &Row, column: Column) -> rusqlite::Result<T> {
    row.get(at(row, column))
}

fn parsed<T: FromStr>(row: &Row, column: Column) -> rusqlite::Result<T>
where
    T::Err: std::fmt::Display,
{
    let index = at(row, column);
    let text: String = row.get(index)?;
    T::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            e.to_string().into(),
        )
    })
}

fn json<T: serde::de::DeserializeOwned>(row: &Row, column: Column) -> rusqlite::Result<T> {
    let index = at(row, column);
    let text: String = row.get(index)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, e.into())
    })
}

fn kobo(row: &Row, column: Column) -> rusqlite::Result<Kobo> {
    get(row, column).map(Kobo)
}

fn optional_kobo(row: &Row, column: Column) -> rusqlite::Result<Option<Kobo>> {
    Ok(get::<Option<i64>>(row, column)?.map(Kobo))
}

pub fn account(row: &Row) -> rusqlite::Result<Account> {
    const COLUMNS: &str = ACCOUNT_COLUMNS;
    Ok(Account {
        id: parsed::<AccountId>(row, col!("id"))?,
        name: get(row, col!("name"))?,
        email: get(row, col!("email"))?,
        status: parsed(row, col!("status"))?,
        balance: kobo(row, col!("balance"))?,
        password_hash: get(row, col!("password_hash"))?,
        created_at: get(row, col!("created_at"))?,
    })
}

pub fn api_key(row: &Row) -> rusqlite::Result<ApiKey> {
    const COLUMNS: &str = KEY_COLUMNS;
    let per_second: Option<u32> = get(row, col!("rate_per_second"))?;
    let burst: Option<u32> = get(row, col!("rate_burst"))?;
    Ok(ApiKey {
        id: parsed::<KeyId>(row, col!("id"))?,
        account_id: parsed::<AccountId>(row, col!("account_id"))?,
        name: get(row, col!("name"))?,
        display_prefix: get(row, col!("display_prefix"))?,
        status: parsed(row, col!("status"))?,
        rate_limit: per_second
            .zip(burst)
            .map(|(per_second, burst)| RateLimit { per_second, burst }),
        webhook_url: get(row, col!("webhook_url"))?,
        webhook_secret_sealed: get(row, col!("webhook_secret_sealed"))?,
        webhook_retries: get(row, col!("webhook_retries"))?,
        created_at: get(row, col!("created_at"))?,
        last_used_at: get(row, col!("last_used_at"))?,
    })
}

pub fn transaction(row: &Row) -> rusqlite::Result<Transaction> {
    const COLUMNS: &str = TX_COLUMNS;
    Ok(Transaction {
        code: get(row, col!("code"))?,
        account_id: parsed::<AccountId>(row, col!("account_id"))?,
        key_id: parsed::<KeyId>(row, col!("key_id"))?,
        reference: get(row, col!("reference"))?,
        product: parsed(row, col!("product"))?,
        provider: get(row, col!("provider"))?,
        plan_id: get(row, col!("plan_id"))?,
        label: get(row, col!("label"))?,
        recipient: get(row, col!("recipient"))?,
        amount: kobo(row, col!("amount"))?,
        face_value: optional_kobo(row, col!("face_value"))?.unwrap_or(kobo(row, col!("amount"))?),
        cost: optional_kobo(row, col!("cost"))?,
        tier: get(row, col!("tier"))?,
        details: json(row, col!("details"))?,
        status: parsed(row, col!("status"))?,
        message: get(row, col!("message"))?,
        balance_before: kobo(row, col!("balance_before"))?,
        balance_after: kobo(row, col!("balance_after"))?,
        result: json(row, col!("result"))?,
        attempts: get(row, col!("attempts"))?,
        submitted: get(row, col!("submitted"))?,
        created_at: get(row, col!("created_at"))?,
        completed_at: get(row, col!("completed_at"))?,
        supplier: get(row, col!("supplier"))?,
        supplier_reference: get(row, col!("supplier_reference"))?,
    })
}

pub fn event(row: &Row) -> rusqlite::Result<Event> {
    const COLUMNS: &str = EVENT_COLUMNS;
    Ok(Event {
        id: get(row, col!("id"))?,
        transaction_code: get(row, col!("transaction_code"))?,
        account_id: parsed::<AccountId>(row, col!("account_id"))?,
        key_id: parsed::<KeyId>(row, col!("key_id"))?,
        event: get(row, col!("event"))?,
        payload: get(row, col!("payload"))?,
        status: parsed(row, col!("status"))?,
        attempts: get(row, col!("attempts"))?,
        created_at: get(row, col!("created_at"))?,
    })
}

pub fn ledger_entry(row: &Row) -> rusqlite::Result<LedgerEntry> {
    const COLUMNS: &str = LEDGER_COLUMNS;
    let kind = parsed(row, col!("kind"))?;
    let stored: Option<String> = get(row, col!("credit_source"))?;
    let credit_source = rules::credit_source(kind, stored.as_deref()).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
    })?;
    Ok(LedgerEntry {
        id: get(row, col!("id"))?,
        account_id: parsed::<AccountId>(row, col!("account_id"))?,
        amount: kobo(row, col!("amount"))?,
        kind,
        balance_after: kobo(row, col!("balance_after"))?,
        transaction_code: get(row, col!("transaction_code"))?,
        credit_reference: get(row, col!("credit_reference"))?,
        created_at: get(row, col!("created_at"))?,
        credit_source,
    })
}

pub fn attempt(row: &Row) -> rusqlite::Result<Attempt> {
    const COLUMNS: &str = ATTEMPT_COLUMNS;
    Ok(Attempt {
        id: get(row, col!("id"))?,
        event_id: get(row, col!("event_id"))?,
        url: get(row, col!("url"))?,
        http_status: get(row, col!("http_status"))?,
        error: get(row, col!("error"))?,
        latency_ms: get(row, col!("latency_ms"))?,
        response_excerpt: get(row, col!("response_excerpt"))?,
        created_at: get(row, col!("created_at"))?,
    })
}

/// What `sql/daily_spend.sql` selects.
const DAILY_SPEND_COLUMNS: &str = "day, product, purchases, spent";

pub fn daily_spend_row(row: &Row) -> rusqlite::Result<DailySpend> {
    const COLUMNS: &str = DAILY_SPEND_COLUMNS;
    Ok(DailySpend {
        day: get(row, col!("day"))?,
        product: parsed(row, col!("product"))?,
        count: get(row, col!("purchases"))?,
        amount: kobo(row, col!("spent"))?,
    })
}

pub fn funding_event(row: &Row) -> rusqlite::Result<FundingEvent> {
    const COLUMNS: &str = FUNDING_COLUMNS;
    let status = parsed(row, col!("status"))?;
    let account: Option<String> = get(row, col!("account_id"))?;
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
    let (amount, fee) = (kobo(row, col!("amount"))?, kobo(row, col!("fee"))?);
    Ok(FundingEvent {
        id: get(row, col!("id"))?,
        gateway: get(row, col!("gateway"))?,
        gateway_reference: get(row, col!("gateway_reference"))?,
        status,
        account_id,
        amount,
        fee,
        credited: FundingEvent::credited_amount(status, amount, fee),
        currency: get(row, col!("currency"))?,
        customer_ref: get(row, col!("customer_ref"))?,
        account_number: get(row, col!("account_number"))?,
        payer: get(row, col!("payer"))?,
        note: get(row, col!("note"))?,
        created_at: get(row, col!("created_at"))?,
        updated_at: get(row, col!("updated_at"))?,
        credited_at: get(row, col!("credited_at"))?,
    })
}

pub fn reserved_account(row: &Row) -> rusqlite::Result<ReservedAccount> {
    const COLUMNS: &str = RESERVED_COLUMNS;
    Ok(ReservedAccount {
        account_id: parsed::<AccountId>(row, col!("account_id"))?,
        gateway: get(row, col!("gateway"))?,
        customer_ref: get(row, col!("customer_ref"))?,
        bank_name: get(row, col!("bank_name"))?,
        account_number: get(row, col!("account_number"))?,
        account_name: get(row, col!("account_name"))?,
        created_at: get(row, col!("created_at"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_is_placed_at_its_position_in_its_list() {
        let lists = [
            ACCOUNT_COLUMNS,
            KEY_COLUMNS,
            TX_COLUMNS,
            EVENT_COLUMNS,
            LEDGER_COLUMNS,
            ATTEMPT_COLUMNS,
            DAILY_SPEND_COLUMNS,
            FUNDING_COLUMNS,
            RESERVED_COLUMNS,
        ];
        for list in lists {
            for (index, name) in list.split(',').map(str::trim).enumerate() {
                assert_eq!(position(list, name), index, "{name} in {list}");
            }
        }
        assert_eq!(position("a, ab,\n  b", "b"), 2);
    }
}
