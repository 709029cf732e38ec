//! The column lists both backends select; the row mappers (`rows.rs`, one
//! for both drivers through `db::RowRead`) read these columns by name (at
//! the name's position in the list, found at compile time by `col!`).

pub const ACCOUNT_COLUMNS: &str = "id, name, email, status, balance, password_hash, created_at, phone, signed_up, email_verified_at, developer_access";
pub const KEY_COLUMNS: &str = "id, account_id, name, display_prefix, status, rate_per_second, rate_burst, \
     webhook_url, webhook_secret_sealed, webhook_retries, created_at, last_used_at";
pub const TX_COLUMNS: &str = "code, account_id, key_id, reference, product, provider, plan_id, label, \
     recipient, amount, details, status, message, balance_before, balance_after, result, attempts, \
     submitted, created_at, completed_at, supplier, supplier_reference, face_value, cost, tier, held_for, \
     review_requested_at";
pub const EVENT_COLUMNS: &str =
    "id, transaction_code, account_id, key_id, event, payload, status, attempts, created_at";
pub const LEDGER_COLUMNS: &str = "id, account_id, amount, kind, balance_after, transaction_code, credit_reference, created_at, \
     credit_source";
pub const ATTEMPT_COLUMNS: &str =
    "id, event_id, url, http_status, error, latency_ms, response_excerpt, created_at";

/// The account's status beside a key's columns in `key_with_account_status`.
pub const KEY_ACCOUNT_STATUS: &str = "account_status";

/// `a, b` → `t.a, t.b`.
pub fn qualified(columns: &str, table: &str) -> String {
    columns
        .split(", ")
        .map(|c| format!("{table}.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The key lookup of `authenticate`: the key's columns, then its account's status.
pub fn key_with_account_status(placeholder: &str) -> String {
    format!(
        "SELECT {}, a.status AS {KEY_ACCOUNT_STATUS} FROM api_keys k JOIN accounts a ON a.id = k.account_id
         WHERE k.key_hash = {placeholder}",
        qualified(KEY_COLUMNS, "k")
    )
}

pub const FUNDING_COLUMNS: &str = "id, gateway, gateway_reference, status, account_id, amount, fee, currency, \
     customer_ref, account_number, payer, note, created_at, updated_at, credited_at";
pub const RESERVED_COLUMNS: &str =
    "account_id, gateway, customer_ref, bank_name, account_number, account_name, created_at";
