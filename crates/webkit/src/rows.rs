//! The rows both UIs' transaction pages show alike, formatted for a table:
//! a transaction in a list, a named field, and the ledger entries and webhook
//! attempts tables (rendered here; a page inserts them with `|safe`, their
//! text escaped by their own templates).

use crate::format::{naira, short_time};
use askama::Template;
use billpay_store::{Attempt, LedgerEntry, Transaction};

pub struct TxRow {
    pub code: String,
    pub reference: String,
    pub created: String,
    pub product: &'static str,
    pub label: String,
    pub recipient: String,
    pub amount: String,
    pub status: &'static str,
}

impl From<&Transaction> for TxRow {
    fn from(tx: &Transaction) -> Self {
        TxRow {
            code: tx.code.clone(),
            reference: tx.reference.clone(),
            created: short_time(&tx.created_at),
            product: tx.product.service(),
            label: tx.label.clone(),
            recipient: tx.recipient.clone(),
            amount: naira(tx.amount),
            status: tx.status.as_str(),
        }
    }
}

/// One line of a detail page's `<dl>`.
pub struct Field {
    pub name: &'static str,
    pub value: String,
}

pub struct LedgerRow {
    pub at: String,
    pub kind: &'static str,
    pub amount: String,
    pub balance_after: String,
}

impl From<&LedgerEntry> for LedgerRow {
    fn from(e: &LedgerEntry) -> Self {
        LedgerRow {
            at: short_time(&e.created_at),
            kind: e.kind.as_str(),
            amount: naira(e.amount),
            balance_after: naira(e.balance_after),
        }
    }
}

/// A transaction's ledger entries (`#ledger`).
#[derive(Template)]
#[template(path = "ledger.html")]
pub struct LedgerTable {
    rows: Vec<LedgerRow>,
}

impl LedgerTable {
    pub fn of(entries: &[LedgerEntry]) -> Self {
        let rows = entries.iter().map(LedgerRow::from).collect();
        LedgerTable { rows }
    }
}

pub struct AttemptRow {
    pub at: String,
    pub url: String,
    pub outcome: String,
    pub latency_ms: u64,
}

impl AttemptRow {
    /// `outcome` is the UI's reading of the attempt's status and error.
    pub fn new(a: &Attempt, outcome: String) -> Self {
        AttemptRow {
            at: short_time(&a.created_at),
            url: a.url.clone().unwrap_or_else(|| "(no URL)".into()),
            outcome,
            latency_ms: a.latency_ms,
        }
    }
}

/// A webhook event's delivery attempts (`#attempts`), nothing when none.
#[derive(Template)]
#[template(path = "attempts.html")]
pub struct AttemptsTable {
    pub rows: Vec<AttemptRow>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_table_escapes_and_is_empty_without_attempts() {
        assert_eq!(AttemptsTable { rows: Vec::new() }.to_string().trim(), "");
        let row = AttemptRow {
            at: "2026-11-24 10:00".into(),
            url: "https://x.test/?a=1&b=<2>".into(),
            outcome: "HTTP 500".into(),
            latency_ms: 12,
        };
        let html = AttemptsTable { rows: vec![row] }.to_string();
        assert!(html.contains(r#"<table id="attempts">"#));
        assert!(html.contains("a=1&#38;b=&#60;2&#62;") || html.contains("a=1&amp;b=&lt;2&gt;"));
        assert!(html.contains("<td class=\"num\">12 ms</td>"));
    }
}
