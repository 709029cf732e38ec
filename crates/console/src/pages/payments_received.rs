//! Funding: payments received — by bank transfer to a reserved account or
//! by card on a gateway's hosted checkout, each named by its channel;
//! credited, unmatched, rejected and pending verification — newest first,
//! paged, with the customer's name, the account number paid into and the
//! payer as the gateway gave them; an owner assigns
//! an unmatched one to a customer with a reason (`bank_transfers::assign`: once,
//! less the fee, logged).

use super::{Chrome, Done, Notice, PageError, PageResult, actor, done, refused, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_domain::AccountId;
use billpay_operations::bank_transfers;
use billpay_store::{FundingEvent, FundingFilter, FundingStatus};
use billpay_webkit::CsrfForm;
use billpay_webkit::filters::{more_pages, page_link};
use billpay_webkit::format::{naira, short_time};
use serde::Deserialize;

const PAGE_SIZE: u32 = 50;
const STATUSES: [&str; 4] = ["credited", "unmatched", "rejected", "pending_verification"];

pub struct FundingRow {
    pub id: String,
    pub at: String,
    pub gateway: String,
    pub reference: String,
    pub status: &'static str,
    pub amount: String,
    pub fee: String,
    pub account: String,
    /// The customer's name (the link has the id); blank: none or unknown.
    pub customer: String,
    /// The reserved account number paid into, as the gateway said it.
    pub paid_into: String,
    /// `bank transfer`, or `card` when its reference is a checkout's.
    pub channel: &'static str,
    pub payer: String,
    pub note: String,
    pub unmatched: bool,
}

impl From<&FundingEvent> for FundingRow {
    fn from(e: &FundingEvent) -> Self {
        FundingRow {
            id: e.id.clone(),
            at: short_time(&e.created_at),
            gateway: e.gateway.clone(),
            reference: e.gateway_reference.clone(),
            status: e.status.as_str(),
            amount: naira(e.amount),
            fee: naira(e.fee),
            account: e.account_id.map(|a| a.to_string()).unwrap_or_default(),
            customer: String::new(),
            paid_into: e.account_number.clone().unwrap_or_default(),
            channel: "bank transfer",
            payer: e.payer.clone().unwrap_or_default(),
            note: e.note.clone(),
            unmatched: e.status == FundingStatus::Unmatched,
        }
    }
}

#[derive(Deserialize, Default)]
pub struct Filters {
    #[serde(default)]
    status: String,
    #[serde(default)]
    page: u32,
    #[serde(default)]
    done: Option<String>,
}

#[derive(Template)]
#[template(path = "funding.html")]
struct FundingPage {
    chrome: Chrome,
    statuses: [&'static str; 4],
    status: String,
    rows: Vec<FundingRow>,
    may_assign: bool,
    newer_link: Option<String>,
    older_link: Option<String>,
}

pub async fn list(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(f): Query<Filters>,
) -> PageResult {
    let status = f.status.parse::<FundingStatus>().ok();
    let page = f.page.max(1);
    let filter = FundingFilter {
        status,
        limit: PAGE_SIZE + 1,
        offset: (page - 1) * PAGE_SIZE,
        ..FundingFilter::default()
    };
    let mut events = state.store.funding_events(filter).await?;
    let has_older = more_pages(&mut events, PAGE_SIZE);
    let rows = named(&state, &events).await?;
    // Only a known status goes back into a link.
    let status = status.map(|s| s.as_str().to_owned()).unwrap_or_default();
    let link = |page: u32| page_link("/admin/funding", &[("status", &status)], page);
    let done = Done { done: f.done };
    Ok(render(&FundingPage {
        chrome: Chrome::new(&signed_in, "funding", &done),
        statuses: STATUSES,
        may_assign: super::actor(&signed_in).may(billpay_operations::Permission::MoveMoney),
        rows,
        newer_link: (page > 1).then(|| link(page - 1)),
        older_link: has_older.then(|| link(page + 1)),
        status,
    }))
}

/// The rows with their customer's name and channel: a payment whose
/// reference is one of our checkouts was made by card on the gateway's page.
async fn named(
    state: &ConsoleState,
    events: &[FundingEvent],
) -> Result<Vec<FundingRow>, PageError> {
    let ids: Vec<AccountId> = events.iter().filter_map(|e| e.account_id).collect();
    let names = state.store.account_names(&ids).await?;
    let mut rows = Vec::with_capacity(events.len());
    for e in events {
        let mut row = FundingRow::from(e);
        if let Some(name) = e.account_id.and_then(|a| names.get(&a)) {
            row.customer = name.clone();
        }
        let checkout = state.store.checkout(&e.gateway_reference).await?;
        if checkout.is_some_and(|c| c.gateway == e.gateway) {
            row.channel = "card";
        }
        rows.push(row);
    }
    Ok(rows)
}

#[derive(Deserialize)]
pub struct AssignForm {
    account: String,
    reason: String,
}

pub async fn assign(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<AssignForm>,
) -> PageResult {
    let account: AccountId = form
        .account
        .trim()
        .parse()
        .map_err(|_| PageError::bad_request("account must be an account id"))?;
    let (store, actor) = (state.store.as_ref(), actor(&signed_in));
    let reason = Some(form.reason.as_str());
    let event = bank_transfers::assign(store, &state.funding, actor, &id, account, reason)
        .await
        .map_err(refused)?;
    tracing::debug!(funding = %event.id, %account, "payment assigned from the console");
    Ok(done("/admin/funding", Notice::PaymentAssigned))
}

#[derive(Deserialize)]
pub struct ReserveForm {
    gateway: String,
    #[serde(default)]
    bvn: String,
    #[serde(default)]
    nin: String,
}

/// Reserves a customer's virtual accounts at a configured gateway (owner),
/// as `billpay funding reserve`: already held ones are not asked again.
pub async fn reserve(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<ReserveForm>,
) -> PageResult {
    let account: AccountId = id.parse().map_err(|_| super::not_found())?;
    let filled = |v: &str| Some(v.trim().to_owned()).filter(|v| !v.is_empty());
    let (bvn, nin) = (filled(&form.bvn), filled(&form.nin));
    let gateway = form.gateway.trim();
    let held = bank_transfers::reserve(
        state.store.as_ref(),
        &state.funding,
        actor(&signed_in),
        account,
        gateway,
        bvn.as_deref(),
        nin.as_deref(),
    )
    .await
    .map_err(refused)?;
    let notice = match held.len() {
        0 => Notice::AccountsPending,
        _ => Notice::AccountsHeld,
    };
    Ok(done(&format!("/admin/customers/{account}"), notice))
}

/// What one gateway's reconciliation found.
pub struct ReconciledRow {
    pub gateway: String,
    pub listed: usize,
    pub error: Option<String>,
    pub credited: Vec<FundingRow>,
    pub not_credited: Vec<FundingRow>,
}

#[derive(Template)]
#[template(path = "reconciled.html")]
struct ReconciledPage {
    chrome: Chrome,
    hours: u64,
    runs: Vec<ReconciledRow>,
}

#[derive(Deserialize)]
pub struct ReconcileForm {
    #[serde(default = "a_day")]
    since_hours: u64,
}

fn a_day() -> u64 {
    24
}

/// The longest window a reconciliation lists (a week, in hours).
const MAX_HOURS: u64 = 24 * 7;

/// Asks every gateway for its payments of the last hours and credits, once,
/// those whose webhook never arrived (owner; `billpay funding reconcile`).
pub async fn reconcile(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ReconcileForm>,
) -> PageResult {
    let hours = form.since_hours;
    if !(1..=MAX_HOURS).contains(&hours) {
        return Err(PageError::bad_request(format!(
            "since_hours must be 1 to {MAX_HOURS}"
        )));
    }
    let since = std::time::Duration::from_secs(hours * 3600);
    let report = bank_transfers::reconcile(
        state.store.as_ref(),
        &state.funding,
        actor(&signed_in),
        since,
    )
    .await
    .map_err(refused)?;
    let runs = report
        .iter()
        .map(|r| ReconciledRow {
            gateway: r.gateway.clone(),
            listed: r.listed,
            error: r.error.clone(),
            credited: r.credited.iter().map(FundingRow::from).collect(),
            not_credited: r.not_credited.iter().map(FundingRow::from).collect(),
        })
        .collect();
    Ok(render(&ReconciledPage {
        chrome: Chrome::new(&signed_in, "funding", &Done::default()),
        hours,
        runs,
    }))
}
