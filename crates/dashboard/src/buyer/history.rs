//! Transactions: a filtered, paginated list and a detail page with what was
//! delivered, the ledger entries and the webhook attempts.

use crate::DashboardState;
use crate::format::naira;
use crate::page::{Chrome, PageResult, not_found, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_domain::{Pin, Product};
use billpay_store::{Attempt, Transaction, TxFilter, TxLookup};
use billpay_webkit::filters::{TxFilters, more_pages, page_link};
pub use billpay_webkit::rows::TxRow;
use billpay_webkit::rows::{AttemptRow, AttemptsTable, Field, LedgerTable, time_fields};

const PAGE_SIZE: u32 = 25;

#[derive(Template)]
#[template(path = "buyer/transactions.html")]
struct ListPage {
    chrome: Chrome,
    rows: Vec<TxRow>,
    products: Vec<&'static str>,
    statuses: Vec<&'static str>,
    f: TxFilters,
    page: u32,
    prev_link: Option<String>,
    next_link: Option<String>,
}

pub async fn list(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(f): Query<TxFilters>,
) -> PageResult {
    let page = f.page();
    let filter = TxFilter {
        account_id: Some(signed_in.user.id),
        ..f.tx_filter(PAGE_SIZE)
    };
    let mut txs = state.store.transactions(filter).await?;
    let has_next = more_pages(&mut txs, PAGE_SIZE);
    let link = |p: u32| {
        let kept = [
            ("product", f.product.as_str()),
            ("status", &f.status),
            ("from", &f.from),
            ("to", &f.to),
            ("q", &f.q),
        ];
        page_link("/dashboard/transactions", &kept, p)
    };
    Ok(render(&ListPage {
        chrome: Chrome::new(&signed_in, "transactions"),
        rows: txs.iter().map(TxRow::from).collect(),
        products: Product::ALL.iter().map(|p| p.service()).collect(),
        statuses: vec!["processing", "successful", "failed"],
        prev_link: (page > 1).then(|| link(page - 1)),
        next_link: has_next.then(|| link(page + 1)),
        f,
        page,
    }))
}

pub struct PinRow {
    pub serial: String,
    pub pin: String,
    pub expires_on: String,
}

impl From<&Pin> for PinRow {
    fn from(pin: &Pin) -> PinRow {
        match pin {
            Pin::Card(card) => PinRow {
                serial: card.serial.clone(),
                pin: card.pin.clone(),
                expires_on: card.expires_on.clone(),
            },
            Pin::Code(code) => PinRow {
                serial: String::new(),
                pin: code.clone(),
                expires_on: String::new(),
            },
        }
    }
}

#[derive(Template)]
#[template(path = "buyer/transaction.html")]
struct DetailPage {
    chrome: Chrome,
    row: TxRow,
    fields: Vec<Field>,
    token: Option<String>,
    pins: Vec<PinRow>,
    ledger: LedgerTable,
    event_status: Option<&'static str>,
    attempts: AttemptsTable,
}

pub async fn detail(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path(code): Path<String>,
) -> PageResult {
    let store = &state.store;
    let tx = store
        .transaction(Some(signed_in.user.id), TxLookup::Code(code))
        .await?
        .ok_or_else(not_found)?;
    let delivery = tx.delivery()?;
    let ledger = store.ledger_for_transaction(&tx.code).await?;
    let event = store.event(&tx.code).await?;
    let attempts = match &event {
        Some(event) => store.attempts(&event.id).await?,
        None => Vec::new(),
    };
    Ok(render(&DetailPage {
        chrome: Chrome::new(&signed_in, "transactions"),
        row: TxRow::from(&tx),
        fields: fields_of(&tx),
        token: delivery.pin,
        pins: delivery.pins.iter().map(PinRow::from).collect(),
        ledger: LedgerTable::of(&ledger),
        event_status: event.map(|e| e.status.as_str()),
        attempts: AttemptsTable {
            rows: attempts.iter().map(attempt_row).collect(),
        },
    }))
}

/// A delivery attempt: its error first, else the HTTP status.
fn attempt_row(a: &Attempt) -> AttemptRow {
    let status = || {
        a.http_status
            .map(|s| format!("HTTP {s}"))
            .unwrap_or_default()
    };
    AttemptRow::new(a, a.error.clone().unwrap_or_else(status))
}

/// The fields a customer reads, then the purchase's own details.
fn fields_of(tx: &Transaction) -> Vec<Field> {
    let field = |name, value: String| Field { name, value };
    let item = if tx.product.has_plan() {
        "Plan"
    } else {
        "Item"
    };
    let mut fields = vec![
        field("Reference code", tx.code.clone()),
        field("Your reference", tx.reference.clone()),
        field("Event", tx.product.event().to_owned()),
        field("Provider", tx.provider.clone()),
        field(item, tx.label.clone()),
        field("Recipient", tx.recipient.clone()),
        field("Face value", naira(tx.face_value)),
        // what the wallet was debited: the account's price
        field("Charged", naira(tx.amount)),
        field("Status", tx.status.as_str().to_owned()),
        field("Message", tx.message.clone()),
        field("Balance before", naira(tx.balance_before)),
        field("Balance after", naira(tx.balance_after)),
    ];
    fields.extend(time_fields(tx));
    let details = tx.details.fields().into_iter();
    fields.extend(details.map(|(name, value)| field(detail_name(name), value)));
    fields
}

fn detail_name(key: &str) -> &'static str {
    match key {
        "phone" => "Phone",
        "meter_number" => "Meter number",
        "meter_type" => "Meter type",
        "recipient_name" => "Customer name",
        "smartcard_number" => "Smartcard number",
        "customer_id" => "Customer ID",
        "batch_id" => "Batch ID",
        "quantity" => "Quantity",
        "denomination" => "Denomination",
        "plan_id" => "Plan ID",
        "duration" => "Validity (days)",
        _ => "Detail",
    }
}
