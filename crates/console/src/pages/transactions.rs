//! Transactions: search and filter across every account; a transaction's
//! page with every field, its ledger entries, webhook event and attempts
//! ("resend webhook", which support may do too), and the operator log about
//! it; the needs-review queue with "requery now", "mark successful" and
//! "mark failed (refund once)".

use super::customers::LogRow;
use super::{Chrome, Done, PageResult, actor, done, not_found, refused, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_domain::{AccountId, Product, TxStatus};
use billpay_operations::transactions::{self as ops, Resolution};
use billpay_operations::webhooks;
use billpay_store::{LogFilter, Transaction, TxFilter, TxLookup};
use billpay_webkit::CsrfForm;
use billpay_webkit::format::{naira, short_time};
use billpay_worker::fulfilment::needs_review_before;
use serde::Deserialize;

const PAGE_SIZE: u32 = 50;

pub struct TxRow {
    pub code: String,
    pub account: String,
    pub reference: String,
    pub created: String,
    pub label: String,
    pub recipient: String,
    pub amount: String,
    pub status: &'static str,
    pub supplier: String,
}

impl From<&Transaction> for TxRow {
    fn from(tx: &Transaction) -> Self {
        TxRow {
            code: tx.code.clone(),
            account: tx.account_id.to_string(),
            reference: tx.reference.clone(),
            created: short_time(&tx.created_at),
            label: tx.label.clone(),
            recipient: tx.recipient.clone(),
            amount: naira(tx.amount),
            status: tx.status.as_str(),
            supplier: tx.supplier.clone().unwrap_or_default(),
        }
    }
}

#[derive(Deserialize, Default)]
pub struct Filters {
    #[serde(default)]
    product: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    account: String,
    /// `YYYY-MM-DD`, inclusive.
    #[serde(default)]
    from: String,
    /// `YYYY-MM-DD`, inclusive.
    #[serde(default)]
    to: String,
    /// A reference or reference_code.
    #[serde(default)]
    q: String,
    #[serde(default)]
    provider: String,
    #[serde(default)]
    supplier: String,
    /// Part of a recipient (phone, meter, smartcard number).
    #[serde(default)]
    recipient: String,
    #[serde(default)]
    page: u32,
    #[serde(default)]
    done: Option<String>,
}

#[derive(Template)]
#[template(path = "transactions.html")]
struct ListPage {
    chrome: Chrome,
    title: &'static str,
    review: bool,
    rows: Vec<TxRow>,
    products: Vec<&'static str>,
    statuses: Vec<&'static str>,
    f: Filters,
    next_link: Option<String>,
}

fn day_start(date: &str, days_later: bool) -> Option<String> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let mut day = time::Date::parse(date, format).ok()?;
    if days_later {
        day = day.next_day()?;
    }
    Some(format!("{day}T00:00:00.000+00:00"))
}

pub async fn list(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(f): Query<Filters>,
) -> PageResult {
    let page = f.page.max(1);
    let filter = TxFilter {
        account_id: f.account.trim().parse::<AccountId>().ok(),
        status: f.status.parse::<TxStatus>().ok(),
        product: f.product.parse::<Product>().ok(),
        created_from: day_start(&f.from, false),
        created_until: day_start(&f.to, true),
        search: typed(&f.q),
        provider: typed(&f.provider),
        supplier: typed(&f.supplier),
        recipient: typed(&f.recipient),
        limit: PAGE_SIZE + 1,
        offset: (page - 1) * PAGE_SIZE,
    };
    let mut txs = state.store.transactions(filter).await?;
    let has_next = txs.len() > PAGE_SIZE as usize;
    txs.truncate(PAGE_SIZE as usize);
    let next_link = has_next.then(|| {
        let query = [
            ("product", &f.product),
            ("status", &f.status),
            ("account", &f.account),
            ("from", &f.from),
            ("to", &f.to),
            ("q", &f.q),
            ("provider", &f.provider),
            ("supplier", &f.supplier),
            ("recipient", &f.recipient),
        ]
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", url_encode(v)))
        .collect::<Vec<_>>()
        .join("&");
        format!("/admin/transactions?{query}&page={}", page + 1)
    });
    let done = Done {
        done: f.done.clone(),
    };
    Ok(render(&ListPage {
        chrome: Chrome::new(&signed_in, "transactions", &done),
        title: "Transactions",
        review: false,
        rows: txs.iter().map(TxRow::from).collect(),
        products: Product::ALL.iter().map(|p| p.service()).collect(),
        statuses: vec!["processing", "successful", "failed"],
        f,
        next_link,
    }))
}

/// Processing purchases older than the needs-review bound, oldest first.
pub async fn review(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    let filter = TxFilter {
        status: Some(TxStatus::Processing),
        created_until: Some(needs_review_before(state.needs_review_after)),
        limit: 500,
        ..TxFilter::default()
    };
    let mut txs = state.store.transactions(filter).await?;
    txs.reverse();
    Ok(render(&ListPage {
        chrome: Chrome::new(&signed_in, "review", &done),
        title: "Needs review",
        review: true,
        rows: txs.iter().map(TxRow::from).collect(),
        products: Vec::new(),
        statuses: Vec::new(),
        f: Filters::default(),
        next_link: None,
    }))
}

/// A filter as typed: `None` when left blank.
fn typed(text: &str) -> Option<String> {
    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
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
    pub kind: &'static str,
    pub amount: String,
    pub balance_after: String,
}

pub struct AttemptRow {
    pub at: String,
    pub url: String,
    pub outcome: String,
    pub latency_ms: u64,
}

#[derive(Template)]
#[template(path = "transaction.html")]
struct DetailPage {
    chrome: Chrome,
    row: TxRow,
    processing: bool,
    fields: Vec<Field>,
    ledger: Vec<LedgerRow>,
    event: Option<(String, &'static str)>,
    attempts: Vec<AttemptRow>,
    log: Vec<LogRow>,
}

pub async fn detail(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(code): Path<String>,
    Query(done): Query<Done>,
) -> PageResult {
    let store = &state.store;
    let tx = store
        .transaction(None, TxLookup::Code(code))
        .await?
        .ok_or_else(not_found)?;
    let ledger = store.ledger_for_transaction(&tx.code).await?;
    let event = store.event(&tx.code).await?;
    let attempts = match &event {
        Some(e) => store.attempts(&e.id).await?,
        None => Vec::new(),
    };
    let log_filter = LogFilter {
        subject: Some(tx.code.clone()),
        limit: 50,
        ..LogFilter::default()
    };
    let log = store.operator_log(log_filter).await?;
    Ok(render(&DetailPage {
        chrome: Chrome::new(&signed_in, "transactions", &done),
        processing: tx.status == TxStatus::Processing,
        fields: fields_of(&tx),
        row: TxRow::from(&tx),
        ledger: ledger
            .iter()
            .map(|e| LedgerRow {
                at: short_time(&e.created_at),
                kind: e.kind.as_str(),
                amount: naira(e.amount),
                balance_after: naira(e.balance_after),
            })
            .collect(),
        event: event.map(|e| (e.id, e.status.as_str())),
        attempts: attempts
            .iter()
            .map(|a| AttemptRow {
                at: short_time(&a.created_at),
                url: a.url.clone().unwrap_or_else(|| "(no URL)".into()),
                outcome: match (a.http_status, &a.error) {
                    (Some(status), _) => format!("HTTP {status}"),
                    (None, Some(error)) => error.clone(),
                    (None, None) => "no answer".to_owned(),
                },
                latency_ms: a.latency_ms,
            })
            .collect(),
        log: log.iter().map(LogRow::from).collect(),
    }))
}

/// Every stored field of a transaction, as an operator reads them.
fn fields_of(tx: &Transaction) -> Vec<Field> {
    let field = |name, value: String| Field { name, value };
    let optional = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    vec![
        field("Reference code", tx.code.clone()),
        field("Account", tx.account_id.to_string()),
        field("API key", tx.key_id.to_string()),
        field("Client reference", tx.reference.clone()),
        field("Product", tx.product.service().to_owned()),
        field("Provider", tx.provider.clone()),
        field("Plan", optional(&tx.plan_id)),
        field("Item", tx.label.clone()),
        field("Recipient", tx.recipient.clone()),
        field("Amount", naira(tx.amount)),
        field("Status", tx.status.as_str().to_owned()),
        field("Message", tx.message.clone()),
        field("Balance before", naira(tx.balance_before)),
        field("Balance after", naira(tx.balance_after)),
        field("Supplier", optional(&tx.supplier)),
        field("Supplier reference", optional(&tx.supplier_reference)),
        field("Submitted to the supplier", tx.submitted.to_string()),
        field("Supplier attempts", tx.attempts.to_string()),
        field("Details", serde_json_text(&tx.details)),
        field("Result", tx.result.to_string()),
        field("Created", tx.created_at.clone()),
        field("Completed", optional(&tx.completed_at)),
    ]
}

fn serde_json_text(details: &billpay_domain::PurchaseDetails) -> String {
    serde_json::to_string(details).unwrap_or_default()
}

pub async fn requery(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(code): Path<String>,
    _: CsrfForm<billpay_webkit::NoFields>,
) -> PageResult {
    let actor = actor(&signed_in);
    let tx = ops::requery(state.store.as_ref(), actor, &state.fulfilment, &code)
        .await
        .map_err(refused)?;
    let notice = format!("requeried, now {}", tx.status);
    Ok(done(&format!("/admin/transactions/{}", tx.code), &notice))
}

#[derive(Deserialize)]
pub struct ResolveForm {
    /// `successful` or `failed`.
    outcome: String,
    reason: String,
}

pub async fn resolve(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(code): Path<String>,
    CsrfForm(form): CsrfForm<ResolveForm>,
) -> PageResult {
    let resolution = match form.outcome.as_str() {
        "successful" => Resolution::Successful,
        "failed" => Resolution::Failed,
        _ => {
            return Err(super::PageError::bad_request(
                "outcome must be successful or failed",
            ));
        }
    };
    let actor = actor(&signed_in);
    let reason = Some(form.reason.as_str());
    let (code, status) = ops::resolve(state.store.as_ref(), actor, &code, resolution, reason)
        .await
        .map_err(refused)?;
    Ok(done(
        &format!("/admin/transactions/{code}"),
        &format!("marked {status}"),
    ))
}

/// Queues the transaction's webhook event for one more delivery now.
pub async fn resend(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(code): Path<String>,
    _: CsrfForm<billpay_webkit::NoFields>,
) -> PageResult {
    let event = webhooks::resend(state.store.as_ref(), actor(&signed_in), &code)
        .await
        .map_err(refused)?;
    Ok(done(
        &format!("/admin/transactions/{}", event.transaction_code),
        &format!("webhook event {} queued again", event.id),
    ))
}
