//! The rows both UIs' transaction pages show alike, formatted for a table:
//! a transaction in a list, a named field, and the ledger entries and webhook
//! attempts tables (rendered here; a page inserts them with `|safe`, their
//! text escaped by their own templates); and, in words, what a purchase
//! bought ([`describe`]) and what moved a wallet ([`entry_description`]).

use crate::format::{lagos_time, naira, short_time};
use askama::Template;
use billpay_domain::{MeterType, Product};
use billpay_store::{Attempt, CreditSource, DeveloperAccess, LedgerEntry, LedgerKind, Transaction};

/// An account's developer access as the operators read it (console, CLI).
pub fn developer_access(access: Option<DeveloperAccess>) -> &'static str {
    match access {
        None => "off",
        Some(DeveloperAccess::Myself) => "on (the customer turned it on)",
        Some(DeveloperAccess::Operator) => "on (an operator)",
        Some(DeveloperAccess::Tier) => "on (its price tier)",
    }
}

/// What a purchase bought, as a customer reads it on a statement:
/// `MTN 1GB data to 08031234567`, `Ikeja Electric prepaid token ₦5,000.00
/// for meter 45012345678`.
pub fn describe(tx: &Transaction) -> String {
    let (label, to, value) = (&tx.label, &tx.recipient, naira(tx.face_value));
    let several = |label: &str| match tx.details.quantity {
        Some(n) if n > 1 => format!("{n} × {label}"),
        _ => label.to_owned(),
    };
    match tx.product {
        Product::Airtime => format!("{label} {value} to {to}"),
        Product::Data => format!("{label} data to {to}"),
        Product::Epin | Product::Education => several(label),
        Product::Cable => format!("{label} for smartcard {to}"),
        Product::Electricity => {
            let meter = tx.details.meter_type.and_then(|c| MeterType::parse(c).ok());
            let what = match meter {
                Some(MeterType::Postpaid) => "postpaid bill",
                _ => "prepaid token",
            };
            format!("{label} {what} {value} for meter {to}")
        }
        Product::Betting => format!("{label} {value} for {to}"),
    }
}

/// What moved a wallet, in words: a purchase's entries say what it bought
/// (`tx`, the entry's transaction when it has one), money in says where it
/// came from — a bank transfer, unless the page knows it was a card payment
/// ([`entry_description_paid`]).
pub fn entry_description(entry: &LedgerEntry, tx: Option<&Transaction>) -> String {
    entry_description_paid(entry, tx, Paid::Transfer)
}

/// How money came in through a gateway: to a reserved account by bank
/// transfer, or on the gateway's hosted checkout (its reference is a
/// checkout's) by card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paid {
    Transfer,
    Card,
}

/// [`entry_description`], a gateway's credit named by its channel.
pub fn entry_description_paid(entry: &LedgerEntry, tx: Option<&Transaction>, paid: Paid) -> String {
    match (entry.kind, tx) {
        (LedgerKind::Debit, Some(tx)) => describe(tx),
        (LedgerKind::Refund, Some(tx)) => format!("Refund: {}", describe(tx)),
        (LedgerKind::Debit, None) if entry.credit_source == Some(CreditSource::Upgrade) => {
            "Account upgrade fee".into()
        }
        (LedgerKind::Debit, None) => "Taken off by the operator".into(),
        (LedgerKind::Refund, None) => "Refund".into(),
        (LedgerKind::Fee, _) => "Funding fee".into(),
        (LedgerKind::Credit, _) => match (&entry.credit_source, paid) {
            (Some(CreditSource::Gateway(name)), Paid::Transfer) => {
                format!("Bank transfer ({})", title(name))
            }
            (Some(CreditSource::Gateway(name)), Paid::Card) => {
                format!("Card payment ({})", title(name))
            }
            (Some(CreditSource::Referral), _) => "Referral bonus moved to the wallet".into(),
            _ => "Wallet top-up".into(),
        },
    }
}

/// A gateway's name as a person reads it: `monnify` → `Monnify`.
fn title(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

pub struct TxRow {
    pub code: String,
    pub reference: String,
    pub created: String,
    /// What was bought, in words ([`describe`]).
    pub what: String,
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
            what: describe(tx),
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

/// A transaction's "Created" and "Completed" lines, in Lagos time.
pub fn time_fields(tx: &Transaction) -> [Field; 2] {
    let completed = tx.completed_at.as_deref();
    [
        Field {
            name: "Created",
            value: lagos_time(&tx.created_at),
        },
        Field {
            name: "Completed",
            value: completed.map_or_else(|| "—".into(), lagos_time),
        },
    ]
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
    use billpay_domain::{AccountId, KeyId, Kobo, PurchaseDetails, TxStatus};

    fn purchase(product: Product, label: &str, to: &str, naira: i64) -> Transaction {
        Transaction {
            code: "BP1".into(),
            account_id: AccountId::new(),
            key_id: KeyId::new(),
            reference: "ref-1".into(),
            product,
            provider: "p".into(),
            plan_id: None,
            label: label.into(),
            recipient: to.into(),
            amount: Kobo::from_naira(naira),
            face_value: Kobo::from_naira(naira),
            cost: None,
            tier: None,
            details: PurchaseDetails::default(),
            status: TxStatus::Successful,
            message: String::new(),
            balance_before: Kobo::ZERO,
            balance_after: Kobo::ZERO,
            result: Default::default(),
            attempts: 1,
            submitted: true,
            created_at: "2026-11-25T19:15:00.000+00:00".into(),
            completed_at: None,
            supplier: None,
            supplier_reference: None,
            held_for: None,
            review_requested_at: None,
        }
    }

    #[test]
    fn a_purchase_says_what_it_bought() {
        let data = purchase(Product::Data, "MTN 1GB", "08031234567", 300);
        assert_eq!(describe(&data), "MTN 1GB data to 08031234567");
        let mut power = purchase(Product::Electricity, "Ikeja Electric", "45012345678", 5000);
        power.details.meter_type = Some(1);
        assert_eq!(
            describe(&power),
            "Ikeja Electric prepaid token ₦5,000.00 for meter 45012345678"
        );
        power.details.meter_type = Some(2);
        assert!(describe(&power).contains("postpaid bill"));
        let mut pins = purchase(Product::Epin, "MTN Nigeria 100 e-PIN", "B1", 300);
        pins.details.quantity = Some(3);
        assert_eq!(describe(&pins), "3 × MTN Nigeria 100 e-PIN");

        let entry = |kind, code: Option<&str>, source| LedgerEntry {
            id: 1,
            account_id: AccountId::new(),
            amount: Kobo::from_naira(300),
            kind,
            balance_after: Kobo::ZERO,
            transaction_code: code.map(str::to_owned),
            credit_reference: None,
            created_at: String::new(),
            credit_source: source,
        };
        let refund = entry(LedgerKind::Refund, Some("BP1"), None);
        assert_eq!(
            entry_description(&refund, Some(&data)),
            "Refund: MTN 1GB data to 08031234567"
        );
        for (gateway, words) in [
            ("monnify", "Bank transfer (Monnify)"),
            ("paystack", "Bank transfer (Paystack)"),
        ] {
            let source = CreditSource::gateway(gateway);
            let transfer = entry(LedgerKind::Credit, None, source);
            assert_eq!(entry_description(&transfer, None), words);
        }
        // a payment on the hosted checkout is a card payment, not a transfer
        let card = entry(LedgerKind::Credit, None, CreditSource::gateway("paystack"));
        assert_eq!(
            entry_description_paid(&card, None, Paid::Card),
            "Card payment (Paystack)"
        );
        let fee = entry(LedgerKind::Fee, None, None);
        assert_eq!(entry_description(&fee, None), "Funding fee");
    }

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
        assert!(html.contains(r#"<table id="attempts" class="cards">"#));
        assert!(html.contains("a=1&#38;b=&#60;2&#62;") || html.contains("a=1&amp;b=&lt;2&gt;"));
        assert!(html.contains(r#"<td class="num" data-label="Latency">12 ms</td>"#));
    }
}
