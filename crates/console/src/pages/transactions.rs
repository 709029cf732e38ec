//! Transactions: search and filter across every account; a transaction's
//! page with every field, its ledger entries, webhook event and attempts
//! ("resend webhook", which support may do too), and the operator log about
//! it; the needs-review queue with "requery now", "mark successful" and
//! "mark failed (refund once)", and above it the purchases held for review
//! by a fraud rule (docs/limits.md), which an owner releases or rejects.

use super::customers::LogRow;
use super::{Chrome, Done, Notice, PageResult, actor, done, not_found, refused, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_domain::{AccountId, Product, TxStatus};
use billpay_operations::transactions::{self as ops, HeldDecision, Resolution, TxName};
use billpay_operations::webhooks;
use billpay_store::limits::held_words;
use billpay_store::{Attempt, LogFilter, Transaction, TxFilter, TxLookup};
use billpay_webkit::CsrfForm;
use billpay_webkit::filters::{TxFilters, more_pages, page_link, typed};
use billpay_webkit::format::{lagos_time, naira};
use billpay_webkit::rows::{AttemptRow, AttemptsTable, Field, LedgerTable, time_fields};
use billpay_worker::fulfilment::needs_review_before;
use serde::Deserialize;

const PAGE_SIZE: u32 = 50;

/// A list row: the kit's, with what only operators see. It derefs to the
/// kit's row so that templates read `tx.code` as they would on it.
pub struct TxRow {
    kit: billpay_webkit::rows::TxRow,
    pub account: String,
    /// The account's name ([`named_rows`]); its id until looked up.
    pub account_name: String,
    /// The reference code shortened for a list; in full on its page and
    /// in the link's title.
    pub short_code: String,
    pub supplier: String,
}

impl std::ops::Deref for TxRow {
    type Target = billpay_webkit::rows::TxRow;

    fn deref(&self) -> &Self::Target {
        &self.kit
    }
}

impl From<&Transaction> for TxRow {
    fn from(tx: &Transaction) -> Self {
        TxRow {
            kit: tx.into(),
            account: tx.account_id.to_string(),
            account_name: tx.account_id.to_string(),
            short_code: shortened(&tx.code),
            supplier: tx.supplier.clone().unwrap_or_default(),
        }
    }
}

/// A long code as its first and last 6 characters (`TX2611…a9f3c1`).
pub fn shortened(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    if chars.len() <= 16 {
        return code.to_owned();
    }
    let head: String = chars[..6].iter().collect();
    let tail: String = chars[chars.len() - 6..].iter().collect();
    format!("{head}…{tail}")
}

/// The rows of `txs`, each with its account's name (one lookup for all).
pub async fn named_rows(
    state: &ConsoleState,
    txs: &[Transaction],
) -> Result<Vec<TxRow>, super::PageError> {
    let ids: Vec<AccountId> = txs.iter().map(|t| t.account_id).collect();
    let names = state.store.account_names(&ids).await?;
    Ok(txs
        .iter()
        .map(|tx| {
            let mut row = TxRow::from(tx);
            if let Some(name) = names.get(&tx.account_id) {
                row.account_name = name.clone();
            }
            row
        })
        .collect())
}

/// The console's filters beyond the kit's [`TxFilters`], read from the same
/// query string.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct MoreFilters {
    account: String,
    provider: String,
    supplier: String,
    /// Part of a recipient (phone, meter, smartcard number).
    recipient: String,
}

#[derive(Template)]
#[template(path = "transactions.html")]
struct ListPage {
    chrome: Chrome,
    title: &'static str,
    review: bool,
    /// The review page's held purchases and the rule that held each.
    held: Vec<(TxRow, &'static str)>,
    rows: Vec<TxRow>,
    products: Vec<&'static str>,
    statuses: Vec<&'static str>,
    f: TxFilters,
    more: MoreFilters,
    next_link: Option<String>,
}

pub async fn list(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(f): Query<TxFilters>,
    Query(more): Query<MoreFilters>,
    Query(done): Query<Done>,
) -> PageResult {
    let filter = TxFilter {
        account_id: more.account.trim().parse::<AccountId>().ok(),
        provider: typed(&more.provider),
        supplier: typed(&more.supplier),
        recipient: typed(&more.recipient),
        ..f.tx_filter(PAGE_SIZE)
    };
    let mut txs = state.store.transactions(filter).await?;
    let next_link = more_pages(&mut txs, PAGE_SIZE).then(|| next_link(&f, &more));
    Ok(render(&ListPage {
        chrome: Chrome::new(&signed_in, "transactions", &done),
        title: "Transactions",
        review: false,
        held: Vec::new(),
        rows: named_rows(&state, &txs).await?,
        products: Product::ALL.iter().map(|p| p.service()).collect(),
        statuses: vec!["processing", "successful", "failed"],
        f,
        more,
        next_link,
    }))
}

/// The next page's link, every filter kept.
fn next_link(f: &TxFilters, more: &MoreFilters) -> String {
    let kept = [
        ("product", f.product.as_str()),
        ("status", &f.status),
        ("account", &more.account),
        ("from", &f.from),
        ("to", &f.to),
        ("q", &f.q),
        ("provider", &more.provider),
        ("supplier", &more.supplier),
        ("recipient", &more.recipient),
    ];
    page_link("/admin/transactions", &kept, f.page() + 1)
}

/// Purchases held for review (oldest first, with the rule), then
/// processing purchases older than the needs-review bound, oldest first.
pub async fn review(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    // A held purchase is listed once, in the held list (the filter leaves it out).
    let filter = TxFilter::needs_review(needs_review_before(state.needs_review_after), 500);
    let mut txs = state.store.transactions(filter).await?;
    txs.reverse();
    let held = ops::held(state.store.as_ref(), &actor(&signed_in))
        .await
        .map_err(refused)?;
    let rules = held
        .iter()
        .map(|tx| held_words(tx.held_for.as_deref().unwrap_or_default()));
    let held = named_rows(&state, &held).await?.into_iter().zip(rules);
    Ok(render(&ListPage {
        chrome: Chrome::new(&signed_in, "review", &done),
        title: "Needs review",
        review: true,
        held: held.collect(),
        rows: named_rows(&state, &txs).await?,
        products: Vec::new(),
        statuses: Vec::new(),
        f: TxFilters::default(),
        more: MoreFilters::default(),
        next_link: None,
    }))
}

#[derive(Template)]
#[template(path = "transaction.html")]
struct DetailPage {
    chrome: Chrome,
    row: TxRow,
    processing: bool,
    /// Held for review: the rule, in words.
    held: Option<&'static str>,
    fields: Vec<Field>,
    ledger: LedgerTable,
    event: Option<(String, &'static str)>,
    attempts: AttemptsTable,
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
    let row = named_rows(&state, std::slice::from_ref(&tx))
        .await?
        .remove(0);
    Ok(render(&DetailPage {
        chrome: Chrome::new(&signed_in, "transactions", &done),
        processing: tx.status == TxStatus::Processing,
        held: tx
            .held_for
            .as_deref()
            .filter(|_| tx.status == TxStatus::Processing)
            .map(held_words),
        fields: fields_of(&tx),
        row,
        ledger: LedgerTable::of(&ledger),
        event: event.map(|e| (e.id, e.status.as_str())),
        attempts: AttemptsTable {
            rows: attempts.iter().map(attempt_row).collect(),
        },
        log: log.iter().map(LogRow::from).collect(),
    }))
}

/// A delivery attempt: the HTTP status when there was an answer.
fn attempt_row(a: &Attempt) -> AttemptRow {
    let outcome = match (a.http_status, &a.error) {
        (Some(status), _) => format!("HTTP {status}"),
        (None, Some(error)) => error.clone(),
        (None, None) => "no answer".to_owned(),
    };
    AttemptRow::new(a, outcome)
}

/// What the purchase was worth, charged and cost: face value, what the
/// account was charged and at which tier, the supplier's cost and the
/// profit (charged − cost; unknown while the cost is).
fn money_of(tx: &Transaction) -> Vec<Field> {
    let field = |name, value: String| Field { name, value };
    let tier = tx.tier.as_deref().unwrap_or("default (list prices)");
    let (cost, profit) = match tx.cost {
        Some(cost) => {
            let profit = tx.amount.0 - cost.0;
            let sign = if profit < 0 { "−" } else { "" };
            (
                naira(cost),
                format!("{sign}{}", naira(billpay_domain::Kobo(profit.abs()))),
            )
        }
        None if tx.status == TxStatus::Successful => ("unknown".into(), "unknown".into()),
        None => ("none (not successful)".into(), "—".into()),
    };
    vec![
        field("Face value", naira(tx.face_value)),
        field("Charged", naira(tx.amount)),
        field("Tier", tier.to_owned()),
        field("Supplier cost", cost),
        field("Profit", profit),
    ]
}

/// Every stored field of a transaction, as an operator reads them.
fn fields_of(tx: &Transaction) -> Vec<Field> {
    let field = |name, value: String| Field { name, value };
    let optional = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    let mut fields = vec![
        field("Reference code", tx.code.clone()),
        field("Account", tx.account_id.to_string()),
        field("API key", tx.key_id.to_string()),
        field("Client reference", tx.reference.clone()),
        field("Product", tx.product.service().to_owned()),
        field("Provider", tx.provider.clone()),
        field("Plan", optional(&tx.plan_id)),
        field("Item", tx.label.clone()),
        field("Recipient", tx.recipient.clone()),
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
    ];
    fields.extend(time_fields(tx));
    // Flagged because the supplier's books cannot say: when, and the evidence.
    if let Some(at) = &tx.review_requested_at {
        let evidence = tx.result["last_note"].as_str().unwrap_or("—");
        fields.push(field(
            "Review asked",
            format!("{}: {evidence}", lagos_time(at)),
        ));
    }
    // The money after the item and recipient: face value, charged, tier, cost, profit.
    let at = fields
        .iter()
        .position(|f| f.name == "Recipient")
        .map_or(0, |i| i + 1);
    fields.splice(at..at, money_of(tx));
    fields
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
    let tx = ops::requery(
        state.store.as_ref(),
        actor,
        &state.fulfilment,
        TxName::any(&code),
    )
    .await
    .map_err(refused)?;
    Ok(done(
        &format!("/admin/transactions/{}", tx.code),
        Notice::Requeried,
    ))
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
    let (code, status) = ops::resolve(
        state.store.as_ref(),
        actor,
        TxName::any(&code),
        resolution,
        reason,
    )
    .await
    .map_err(refused)?;
    let notice = match resolution {
        Resolution::Successful => Notice::MarkedSuccessful,
        Resolution::Failed => Notice::MarkedFailed,
    };
    tracing::debug!(%code, %status, "resolved from the console");
    Ok(done(&format!("/admin/transactions/{code}"), notice))
}

#[derive(Deserialize)]
pub struct HeldForm {
    /// `release` or `reject`.
    decision: String,
    reason: String,
}

/// An owner's decision on a purchase held for review: released to the
/// supplier, or rejected (failed, refunded once); a reason is required.
pub async fn decide_held(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(code): Path<String>,
    CsrfForm(form): CsrfForm<HeldForm>,
) -> PageResult {
    let (decision, notice) = match form.decision.as_str() {
        "release" => (HeldDecision::Release, Notice::HeldReleased),
        "reject" => (HeldDecision::Reject, Notice::HeldRejected),
        _ => {
            return Err(super::PageError::bad_request(
                "decision must be release or reject",
            ));
        }
    };
    let tx = ops::decide_held(
        state.store.as_ref(),
        actor(&signed_in),
        TxName::any(&code),
        decision,
        Some(form.reason.as_str()),
    )
    .await
    .map_err(refused)?;
    // A release is claimed by the worker's next poll.
    Ok(done(&format!("/admin/transactions/{}", tx.code), notice))
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
        Notice::WebhookQueued,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Uri;

    #[test]
    fn one_query_string_fills_both_filters_and_the_next_page_keeps_them() {
        let uri: Uri =
            "/admin/transactions?product=data&account=%20a1&recipient=0803&page=2&done=x"
                .parse()
                .unwrap();
        let Query(f) = Query::<TxFilters>::try_from_uri(&uri).unwrap();
        let Query(more) = Query::<MoreFilters>::try_from_uri(&uri).unwrap();
        assert_eq!((f.product.as_str(), f.page), ("data", 2));
        assert_eq!(
            (more.account.as_str(), more.recipient.as_str()),
            (" a1", "0803")
        );
        assert_eq!(
            next_link(&f, &more),
            "/admin/transactions?product=data&account=%20a1&recipient=0803&page=3"
        );
    }
}
