//! Row → record mapping, once for both backends: each column is read at its
//! position in the list the query selects (`columns.rs`), that position found
//! by the column's name at compile time ([`col!`]): a column added or moved
//! cannot shift the others, a name not in the list does not compile, a row
//! costs no name lookups, and debug builds check each name against the
//! driver's.

use crate::columns::*;
use crate::db::{RowRead, col, unreadable};
use crate::*;
use billpay_domain::{AccountId, KeyId};

pub(crate) fn account(row: &dyn RowRead) -> StoreResult<Account> {
    const COLUMNS: &str = ACCOUNT_COLUMNS;
    Ok(Account {
        id: row.parsed::<AccountId>(col!("id"))?,
        name: row.get(col!("name"))?,
        email: row.get(col!("email"))?,
        status: row.parsed(col!("status"))?,
        balance: row.get(col!("balance"))?,
        password_hash: row.get(col!("password_hash"))?,
        created_at: row.get(col!("created_at"))?,
        phone: row.get(col!("phone"))?,
        signed_up: row.parsed(col!("signed_up"))?,
        email_verified_at: row.get(col!("email_verified_at"))?,
        developer_access: row.parsed_opt(col!("developer_access"))?,
    })
}

pub(crate) fn api_key(row: &dyn RowRead) -> StoreResult<ApiKey> {
    const COLUMNS: &str = KEY_COLUMNS;
    let per_second: Option<u32> = row.get(col!("rate_per_second"))?;
    let burst: Option<u32> = row.get(col!("rate_burst"))?;
    Ok(ApiKey {
        id: row.parsed::<KeyId>(col!("id"))?,
        account_id: row.parsed::<AccountId>(col!("account_id"))?,
        name: row.get(col!("name"))?,
        display_prefix: row.get(col!("display_prefix"))?,
        status: row.parsed(col!("status"))?,
        rate_limit: per_second
            .zip(burst)
            .map(|(per_second, burst)| RateLimit { per_second, burst }),
        webhook_url: row.get(col!("webhook_url"))?,
        webhook_secret_sealed: row.get(col!("webhook_secret_sealed"))?,
        webhook_retries: row.get(col!("webhook_retries"))?,
        created_at: row.get(col!("created_at"))?,
        last_used_at: row.get(col!("last_used_at"))?,
    })
}

pub(crate) fn transaction(row: &dyn RowRead) -> StoreResult<Transaction> {
    const COLUMNS: &str = TX_COLUMNS;
    let amount = row.get(col!("amount"))?;
    Ok(Transaction {
        code: row.get(col!("code"))?,
        account_id: row.parsed::<AccountId>(col!("account_id"))?,
        key_id: row.parsed::<KeyId>(col!("key_id"))?,
        reference: row.get(col!("reference"))?,
        product: row.parsed(col!("product"))?,
        provider: row.get(col!("provider"))?,
        plan_id: row.get(col!("plan_id"))?,
        label: row.get(col!("label"))?,
        recipient: row.get(col!("recipient"))?,
        amount,
        face_value: row.get::<Option<_>>(col!("face_value"))?.unwrap_or(amount),
        cost: row.get(col!("cost"))?,
        tier: row.get(col!("tier"))?,
        details: row.json(col!("details"))?,
        status: row.parsed(col!("status"))?,
        message: row.get(col!("message"))?,
        balance_before: row.get(col!("balance_before"))?,
        balance_after: row.get(col!("balance_after"))?,
        result: row.json(col!("result"))?,
        attempts: row.get(col!("attempts"))?,
        submitted: row.get(col!("submitted"))?,
        created_at: row.get(col!("created_at"))?,
        completed_at: row.get(col!("completed_at"))?,
        supplier: row.get(col!("supplier"))?,
        supplier_reference: row.get(col!("supplier_reference"))?,
        held_for: row.get(col!("held_for"))?,
        review_requested_at: row.get(col!("review_requested_at"))?,
    })
}

pub(crate) fn event(row: &dyn RowRead) -> StoreResult<Event> {
    const COLUMNS: &str = EVENT_COLUMNS;
    Ok(Event {
        id: row.get(col!("id"))?,
        transaction_code: row.get(col!("transaction_code"))?,
        account_id: row.parsed::<AccountId>(col!("account_id"))?,
        key_id: row.parsed::<KeyId>(col!("key_id"))?,
        event: row.get(col!("event"))?,
        payload: row.get(col!("payload"))?,
        status: row.parsed(col!("status"))?,
        attempts: row.get(col!("attempts"))?,
        created_at: row.get(col!("created_at"))?,
    })
}

pub(crate) fn ledger_entry(row: &dyn RowRead) -> StoreResult<LedgerEntry> {
    const COLUMNS: &str = LEDGER_COLUMNS;
    let kind = row.parsed(col!("kind"))?;
    let stored: Option<String> = row.get(col!("credit_source"))?;
    let credit_source = rules::credit_source(kind, stored.as_deref())
        .map_err(|e| unreadable(col!("credit_source"), e))?;
    Ok(LedgerEntry {
        id: row.get(col!("id"))?,
        account_id: row.parsed::<AccountId>(col!("account_id"))?,
        amount: row.get(col!("amount"))?,
        kind,
        balance_after: row.get(col!("balance_after"))?,
        transaction_code: row.get(col!("transaction_code"))?,
        credit_reference: row.get(col!("credit_reference"))?,
        created_at: row.get(col!("created_at"))?,
        credit_source,
    })
}

pub(crate) fn attempt(row: &dyn RowRead) -> StoreResult<Attempt> {
    const COLUMNS: &str = ATTEMPT_COLUMNS;
    Ok(Attempt {
        id: row.get(col!("id"))?,
        event_id: row.get(col!("event_id"))?,
        url: row.get(col!("url"))?,
        http_status: row.get(col!("http_status"))?,
        error: row.get(col!("error"))?,
        latency_ms: row.get(col!("latency_ms"))?,
        response_excerpt: row.get(col!("response_excerpt"))?,
        created_at: row.get(col!("created_at"))?,
    })
}

/// What `sql/daily_spend.sql` selects.
pub(crate) const DAILY_SPEND_COLUMNS: &str = "day, product, purchases, spent";

pub(crate) fn daily_spend_row(row: &dyn RowRead) -> StoreResult<DailySpend> {
    const COLUMNS: &str = DAILY_SPEND_COLUMNS;
    Ok(DailySpend {
        day: row.get(col!("day"))?,
        product: row.parsed(col!("product"))?,
        count: row.get(col!("purchases"))?,
        amount: row.get(col!("spent"))?,
    })
}

pub(crate) fn funding_event(row: &dyn RowRead) -> StoreResult<FundingEvent> {
    const COLUMNS: &str = FUNDING_COLUMNS;
    let status = row.parsed(col!("status"))?;
    let account_id = row.parsed_opt(col!("account_id"))?;
    let (amount, fee) = (row.get(col!("amount"))?, row.get(col!("fee"))?);
    Ok(FundingEvent {
        id: row.get(col!("id"))?,
        gateway: row.get(col!("gateway"))?,
        gateway_reference: row.get(col!("gateway_reference"))?,
        status,
        account_id,
        amount,
        fee,
        credited: FundingEvent::credited_amount(status, amount, fee),
        currency: row.get(col!("currency"))?,
        customer_ref: row.get(col!("customer_ref"))?,
        account_number: row.get(col!("account_number"))?,
        payer: row.get(col!("payer"))?,
        note: row.get(col!("note"))?,
        created_at: row.get(col!("created_at"))?,
        updated_at: row.get(col!("updated_at"))?,
        credited_at: row.get(col!("credited_at"))?,
    })
}

pub(crate) fn reserved_account(row: &dyn RowRead) -> StoreResult<ReservedAccount> {
    const COLUMNS: &str = RESERVED_COLUMNS;
    Ok(ReservedAccount {
        account_id: row.parsed::<AccountId>(col!("account_id"))?,
        gateway: row.get(col!("gateway"))?,
        customer_ref: row.get(col!("customer_ref"))?,
        bank_name: row.get(col!("bank_name"))?,
        account_number: row.get(col!("account_number"))?,
        account_name: row.get(col!("account_name"))?,
        created_at: row.get(col!("created_at"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::position;

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
    }
}
