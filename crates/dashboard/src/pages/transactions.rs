//! Transactions: a filtered, paginated list and a detail page with what was
//! delivered, the ledger entries and the webhook attempts.

use super::{Chrome, PageResult, not_found, render};
use crate::DashboardState;
use crate::format::{naira, short_time};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_domain::{Pin, Product};
use billpay_store::{TxFilter, TxLookup};
use billpay_webkit::filters::{TxFilters, more_pages, page_link};
pub use billpay_webkit::rows::TxRow;
use billpay_webkit::rows::{Field, LedgerRow};

const PAGE_SIZE: u32 = 25;

#[derive(Template)]
#[template(path = "transactions.html")]
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

pub struct AttemptRow {
    pub at: String,
    pub url: String,
    pub outcome: String,
    pub latency_ms: u64,
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
#[template(path = "transaction.html")]
struct DetailPage {
    chrome: Chrome,
    row: TxRow,
    fields: Vec<Field>,
    token: Option<String>,
    pins: Vec<PinRow>,
    ledger: Vec<LedgerRow>,
    event_status: Option<&'static str>,
    attempts: Vec<AttemptRow>,
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
    let mut fields = vec![
        Field {
            name: "Reference code",
            value: tx.code.clone(),
        },
        Field {
            name: "Your reference",
            value: tx.reference.clone(),
        },
        Field {
            name: "Event",
            value: tx.product.event().to_owned(),
        },
        Field {
            name: "Provider",
            value: tx.provider.clone(),
        },
        Field {
            name: if tx.product.has_plan() {
                "Plan"
            } else {
                "Item"
            },
            value: tx.label.clone(),
        },
        Field {
            name: "Recipient",
            value: tx.recipient.clone(),
        },
        Field {
            name: "Face value",
            value: naira(tx.face_value),
        },
        Field {
            // what the wallet was debited: the account's price
            name: "Charged",
            value: naira(tx.amount),
        },
        Field {
            name: "Status",
            value: tx.status.as_str().to_owned(),
        },
        Field {
            name: "Message",
            value: tx.message.clone(),
        },
        Field {
            name: "Balance before",
            value: naira(tx.balance_before),
        },
        Field {
            name: "Balance after",
            value: naira(tx.balance_after),
        },
        Field {
            name: "Created",
            value: tx.created_at.clone(),
        },
        Field {
            name: "Completed",
            value: tx.completed_at.clone().unwrap_or_else(|| "—".into()),
        },
    ];
    for (name, value) in tx.details.fields() {
        fields.push(Field {
            name: detail_name(name),
            value,
        });
    }
    let delivery = tx.delivery()?;
    let pins = delivery.pins.iter().map(PinRow::from).collect();
    let token = delivery.pin;
    let ledger = store
        .ledger_for_transaction(&tx.code)
        .await?
        .iter()
        .map(LedgerRow::from)
        .collect();
    let event = store.event(&tx.code).await?;
    let attempts = match &event {
        Some(event) => store
            .attempts(&event.id)
            .await?
            .into_iter()
            .map(|a| AttemptRow {
                at: short_time(&a.created_at),
                url: a.url.unwrap_or_else(|| "(no URL)".into()),
                outcome: a.error.unwrap_or_else(|| {
                    a.http_status
                        .map(|s| format!("HTTP {s}"))
                        .unwrap_or_default()
                }),
                latency_ms: a.latency_ms,
            })
            .collect(),
        None => Vec::new(),
    };
    Ok(render(&DetailPage {
        chrome: Chrome::new(&signed_in, "transactions"),
        row: TxRow::from(&tx),
        fields,
        token,
        pins,
        ledger,
        event_status: event.map(|e| e.status.as_str()),
        attempts,
    }))
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
