//! Wallet statement: ledger entries with the running balance, and CSV download.

use super::{Chrome, PageResult, render};
use crate::DashboardState;
use crate::format::{naira, short_time};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use billpay_store::LedgerEntry;

/// The statement page shows this many of the latest entries; the CSV has all.
const PAGE_ENTRIES: u32 = 200;
const CSV_ENTRIES: u32 = 1_000_000;

pub struct EntryRow {
    pub at: String,
    pub kind: String,
    pub amount: String,
    pub credit: bool,
    pub balance_after: String,
    pub reference: String,
    pub link: Option<String>,
}

#[derive(Template)]
#[template(path = "wallet.html")]
struct WalletPage {
    chrome: Chrome,
    balance: String,
    entries: Vec<EntryRow>,
    funding: super::fund_wallet::FundingSection,
}

pub async fn statement(State(state): State<DashboardState>, signed_in: SignedIn) -> PageResult {
    let account = signed_in.user.id;
    let balance = state.store.balance(account).await?;
    let entries = state.store.ledger(account, PAGE_ENTRIES).await?;
    let entries = entries
        .iter()
        .map(|e| EntryRow {
            at: short_time(&e.created_at),
            kind: e.kind.to_string(),
            amount: naira(e.amount),
            credit: e.amount.0 > 0,
            balance_after: naira(e.balance_after),
            reference: reference_of(e).to_owned(),
            link: e
                .transaction_code
                .as_ref()
                .map(|c| format!("/dashboard/transactions/{c}")),
        })
        .collect();
    Ok(render(&WalletPage {
        chrome: Chrome::new(&signed_in, "wallet"),
        balance: naira(balance),
        entries,
        funding: super::fund_wallet::load(&state.store, account).await?,
    }))
}

fn reference_of(e: &LedgerEntry) -> &str {
    e.transaction_code
        .as_deref()
        .or(e.credit_reference.as_deref())
        .unwrap_or_default()
}

/// Oldest first, amounts in Naira with 2 decimals, one header row.
pub async fn csv(State(state): State<DashboardState>, signed_in: SignedIn) -> PageResult {
    let mut entries = state.store.ledger(signed_in.user.id, CSV_ENTRIES).await?;
    entries.reverse();
    let mut out = String::from("date,kind,amount_naira,balance_after_naira,reference\n");
    for e in &entries {
        out.push_str(&format!(
            "{},{},{},{},{}\n",
            e.created_at,
            e.kind,
            e.amount,
            e.balance_after,
            csv_field(reference_of(e))
        ));
    }
    let filename = format!(
        "attachment; filename=\"billpay-statement-{}.csv\"",
        &billpay_store::clock::now_rfc3339()[..10]
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (header::CONTENT_DISPOSITION, filename),
        ],
        out,
    )
        .into_response())
}

/// Quotes a field when needed, and defuses spreadsheet formulas.
fn csv_field(value: &str) -> String {
    let value = if value.starts_with(['=', '+', '-', '@']) {
        format!("'{value}")
    } else {
        value.to_owned()
    };
    if value.contains([',', '"', '\n']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value
    }
}
