//! Customers: search (name, email, account id, key prefix), an account's
//! page (balance, keys, latest transactions, statement, the operator log
//! about it), and the owner's actions on it: create, suspend/reactivate,
//! credit or debit the wallet with a reason.

use super::{Chrome, Done, PageResult, actor, done, not_found, refused, render};
use crate::ConsoleState;
use crate::pages::transactions::TxRow;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_domain::{AccountId, Kobo};
use billpay_operations::{accounts, wallets};
use billpay_store::{Account, AccountStatus, LogFilter, TxFilter};
use billpay_webkit::CsrfForm;
use billpay_webkit::format::{naira, short_time};
use serde::Deserialize;

const RESULTS: u32 = 50;

pub struct AccountRow {
    pub id: String,
    pub name: String,
    pub email: String,
    pub status: &'static str,
    pub balance: String,
    pub created: String,
}

impl From<&Account> for AccountRow {
    fn from(a: &Account) -> Self {
        AccountRow {
            id: a.id.to_string(),
            name: a.name.clone(),
            email: a.email.clone(),
            status: a.status.as_str(),
            balance: naira(a.balance),
            created: short_time(&a.created_at),
        }
    }
}

#[derive(Deserialize, Default)]
pub struct Search {
    #[serde(default)]
    q: String,
    #[serde(default)]
    done: Option<String>,
}

#[derive(Template)]
#[template(path = "customers.html")]
struct SearchPage {
    chrome: Chrome,
    q: String,
    rows: Vec<AccountRow>,
}

pub async fn search(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(search): Query<Search>,
) -> PageResult {
    let q: String = search.q.trim().chars().take(200).collect();
    let accounts = state.store.search_accounts(&q, RESULTS).await?;
    let done = Done { done: search.done };
    Ok(render(&SearchPage {
        chrome: Chrome::new(&signed_in, "customers", &done),
        q,
        rows: accounts.iter().map(AccountRow::from).collect(),
    }))
}

pub struct KeyRow {
    pub prefix: String,
    pub name: String,
    pub status: &'static str,
    pub webhook: String,
    pub last_used: String,
}

pub struct EntryRow {
    pub at: String,
    pub kind: &'static str,
    pub amount: String,
    pub balance_after: String,
    pub about: String,
}

pub struct LogRow {
    pub at: String,
    pub who: String,
    pub action: String,
    pub change: String,
    pub reason: String,
}

impl From<&billpay_store::LogEntry> for LogRow {
    fn from(l: &billpay_store::LogEntry) -> Self {
        LogRow {
            at: short_time(&l.at),
            who: l.operator_email.clone().unwrap_or_else(|| l.actor.clone()),
            action: l.action.clone(),
            change: format!(
                "{} → {}",
                l.before.as_deref().unwrap_or("—"),
                l.after.as_deref().unwrap_or("—")
            ),
            reason: l.reason.clone().unwrap_or_default(),
        }
    }
}

#[derive(Template)]
#[template(path = "customer.html")]
struct AccountPage {
    chrome: Chrome,
    account: AccountRow,
    suspended: bool,
    keys: Vec<KeyRow>,
    transactions: Vec<TxRow>,
    entries: Vec<EntryRow>,
    log: Vec<LogRow>,
}

pub async fn account(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    Query(done): Query<Done>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let store = &state.store;
    let account = store.account(id).await?.ok_or_else(not_found)?;
    let keys = store.api_keys(id).await?;
    let filter = TxFilter {
        account_id: Some(id),
        limit: 20,
        ..TxFilter::default()
    };
    let transactions = store.transactions(filter).await?;
    let entries = store.ledger(id, 20).await?;
    let log_filter = LogFilter {
        subject: Some(id.to_string()),
        limit: 20,
        ..LogFilter::default()
    };
    let log = store.operator_log(log_filter).await?;
    Ok(render(&AccountPage {
        chrome: Chrome::new(&signed_in, "customers", &done),
        suspended: account.status == AccountStatus::Suspended,
        account: AccountRow::from(&account),
        keys: keys
            .iter()
            .map(|k| KeyRow {
                prefix: k.display_prefix.clone(),
                name: k.name.clone().unwrap_or_default(),
                status: k.status.as_str(),
                webhook: k.webhook_url.clone().unwrap_or_else(|| "—".into()),
                last_used: k
                    .last_used_at
                    .as_deref()
                    .map(short_time)
                    .unwrap_or_default(),
            })
            .collect(),
        transactions: transactions.iter().map(TxRow::from).collect(),
        entries: entries
            .iter()
            .map(|e| EntryRow {
                at: short_time(&e.created_at),
                kind: e.kind.as_str(),
                amount: naira(e.amount),
                balance_after: naira(e.balance_after),
                about: e
                    .transaction_code
                    .clone()
                    .or_else(|| e.credit_reference.clone())
                    .unwrap_or_default(),
            })
            .collect(),
        log: log.iter().map(LogRow::from).collect(),
    }))
}

#[derive(Deserialize)]
pub struct NewCustomer {
    name: String,
    email: String,
}

pub async fn create(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<NewCustomer>,
) -> PageResult {
    let actor = actor(&signed_in);
    let account = accounts::create(
        state.store.as_ref(),
        actor,
        &form.name,
        form.email.trim(),
        None,
    )
    .await
    .map_err(refused)?;
    Ok(done(
        &format!("/admin/customers/{}", account.id),
        "account created",
    ))
}

#[derive(Deserialize)]
pub struct StatusForm {
    status: String,
    #[serde(default)]
    reason: String,
}

pub async fn set_status(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<StatusForm>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let status: AccountStatus = form
        .status
        .parse()
        .map_err(|_| super::PageError::bad_request("status must be active or suspended"))?;
    let actor = actor(&signed_in);
    let reason = Some(form.reason.as_str());
    accounts::set_status_because(state.store.as_ref(), actor, id, status, reason)
        .await
        .map_err(refused)?;
    Ok(done(
        &format!("/admin/customers/{id}"),
        &format!("account {}", status.as_str()),
    ))
}

#[derive(Deserialize)]
pub struct MoneyForm {
    /// Naira, at most 2 decimal places.
    amount: String,
    reference: String,
    reason: String,
}

pub async fn credit(
    state: State<ConsoleState>,
    signed_in: SignedIn,
    id: Path<String>,
    CsrfForm(form): CsrfForm<MoneyForm>,
) -> PageResult {
    move_money(state, signed_in, id, form, true).await
}

pub async fn debit(
    state: State<ConsoleState>,
    signed_in: SignedIn,
    id: Path<String>,
    CsrfForm(form): CsrfForm<MoneyForm>,
) -> PageResult {
    move_money(state, signed_in, id, form, false).await
}

async fn move_money(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    form: MoneyForm,
    is_credit: bool,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let amount = Kobo::parse_naira(form.amount.trim())
        .map_err(|e| super::PageError::bad_request(format!("amount {e}")))?;
    let (actor, store) = (actor(&signed_in), state.store.as_ref());
    let (reference, reason) = (form.reference.trim(), Some(form.reason.as_str()));
    let moved = if is_credit {
        wallets::credit(store, actor, id, amount, reference, reason).await
    } else {
        wallets::debit(store, actor, id, amount, reference, reason).await
    }
    .map_err(refused)?;
    let verb = if is_credit { "credited" } else { "debited" };
    let notice = if moved.applied {
        format!("{verb} {amount}, balance {}", moved.balance)
    } else {
        format!("reference {reference} was used before, nothing changed")
    };
    Ok(done(&format!("/admin/customers/{id}"), &notice))
}
