//! The rows both UIs' transaction pages show alike, formatted for a table:
//! a transaction in a list, a named field, a ledger entry.

use crate::format::{naira, short_time};
use billpay_store::{LedgerEntry, Transaction};

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
