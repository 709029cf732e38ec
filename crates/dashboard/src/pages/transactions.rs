//! Transactions: a filtered, paginated list and a detail page with what was
//! delivered, the ledger entries and the webhook attempts.

use super::{Chrome, PageResult, not_found, render};
use crate::DashboardState;
use crate::format::{naira, short_time};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_domain::{Pin, Product, TxStatus};
use billpay_store::{Transaction, TxFilter, TxLookup};
use serde::Deserialize;

const PAGE_SIZE: u32 = 25;

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

#[derive(Deserialize, Default)]
pub struct Filters {
    #[serde(default)]
    product: String,
    #[serde(default)]
    status: String,
    /// `YYYY-MM-DD`, inclusive.
    #[serde(default)]
    from: String,
    /// `YYYY-MM-DD`, inclusive.
    #[serde(default)]
    to: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    page: u32,
}

#[derive(Template)]
#[template(path = "transactions.html")]
struct ListPage {
    chrome: Chrome,
    rows: Vec<TxRow>,
    products: Vec<&'static str>,
    statuses: Vec<&'static str>,
    f_product: String,
    f_status: String,
    f_from: String,
    f_to: String,
    f_q: String,
    page: u32,
    prev_link: Option<String>,
    next_link: Option<String>,
}

fn valid_date(s: &str) -> Option<String> {
    let ok = s.len() == 10
        && time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).is_ok();
    ok.then(|| s.to_owned())
}

fn next_day(s: &str) -> Option<String> {
    let date =
        time::Date::parse(s, time::macros::format_description!("[year]-[month]-[day]")).ok()?;
    date.next_day().map(|d| d.to_string())
}

pub async fn list(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(f): Query<Filters>,
) -> PageResult {
    let page = f.page.max(1);
    let filter = TxFilter {
        account_id: Some(signed_in.user.id),
        status: f.status.parse::<TxStatus>().ok(),
        product: f.product.parse::<Product>().ok(),
        created_from: valid_date(&f.from).map(|d| format!("{d}T00:00:00.000+00:00")),
        created_until: valid_date(&f.to)
            .and_then(|d| next_day(&d))
            .map(|d| format!("{d}T00:00:00.000+00:00")),
        search: Some(f.q.trim().to_owned()).filter(|q| !q.is_empty()),
        limit: PAGE_SIZE + 1,
        offset: (page - 1) * PAGE_SIZE,
        ..TxFilter::default()
    };
    let mut txs = state.store.transactions(filter).await?;
    let has_next = txs.len() > PAGE_SIZE as usize;
    txs.truncate(PAGE_SIZE as usize);
    let link = |p: u32| {
        let query = [
            ("product", &f.product),
            ("status", &f.status),
            ("from", &f.from),
            ("to", &f.to),
            ("q", &f.q),
        ]
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", url_encode(v)))
        .chain(std::iter::once(format!("page={p}")))
        .collect::<Vec<_>>()
        .join("&");
        format!("/dashboard/transactions?{query}")
    };
    Ok(render(&ListPage {
        chrome: Chrome::new(&signed_in, "transactions"),
        rows: txs.iter().map(TxRow::from).collect(),
        products: Product::ALL.iter().map(|p| p.service()).collect(),
        statuses: vec!["processing", "successful", "failed"],
        prev_link: (page > 1).then(|| link(page - 1)),
        next_link: has_next.then(|| link(page + 1)),
        f_product: f.product,
        f_status: f.status,
        f_from: f.from,
        f_to: f.to,
        f_q: f.q,
        page,
    }))
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub struct Field {
    pub name: &'static str,
    pub value: String,
}

pub struct LedgerRow {
    pub at: String,
    pub kind: String,
    pub amount: String,
    pub balance_after: String,
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
        .map(|e| LedgerRow {
            at: short_time(&e.created_at),
            kind: e.kind.to_string(),
            amount: naira(e.amount),
            balance_after: naira(e.balance_after),
        })
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
