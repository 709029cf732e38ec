//! Customers: search (phone in any spelling, name, email, a purchase's
//! reference or code, account id, key prefix, virtual account number), an
//! account's page (balance, tier, keys, webhook health, funding
//! accounts, latest transactions, statement, the operator log about it), and
//! the owner's actions on it: create, suspend/reactivate, credit or debit
//! the wallet with a reason, change its tier, create or disable a key (a new
//! key's secret is shown once), set its KYC level and its own limits (with
//! the limits that apply and today's and the 30 days' usage beside them,
//! `limits.rs`), close it and erase a closed account's personal data.

use super::{Chrome, Done, Notice, PageResult, actor, done, not_found, refused, render};
use crate::ConsoleState;
use crate::form::Refill;
use crate::pages::limits::{self as limits_page, KycView, LimitsForm, UsageRow};
use crate::pages::transactions::TxRow;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use billpay_domain::{AccountId, KeyId};
use billpay_operations::keys::{self, KeyUpdate};
use billpay_operations::limits::LimitTexts;
use billpay_operations::limits::{self, Verified};
use billpay_operations::{accounts, pricing, upgrades, wallets};
use billpay_store::{
    Account, AccountStatus, EventFilter, EventSubject, KeyStatus, LogFilter, TxFilter,
};
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
    /// "self" (the dashboard's sign-up) or "operator".
    pub signed_up: &'static str,
    /// "verified", "not verified" (a self sign-up yet to enter its code),
    /// or "vouched for by the operator".
    pub email_state: &'static str,
    pub phone: String,
    /// Whether the dashboard shows API keys and webhooks, and who turned
    /// them on ("off", "on (the customer)", "on (an operator)").
    pub developer: &'static str,
    pub developer_on: bool,
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
            signed_up: a.signed_up.as_str(),
            email_state: match (a.email_verified_at.is_some(), a.verified()) {
                (true, _) => "verified",
                (false, false) => "not verified",
                (false, true) => "not verified (opened by the operator)",
            },
            phone: a.phone.clone().unwrap_or_default(),
            developer: billpay_webkit::rows::developer_access(a.developer_access),
            developer_on: a.developer_access.is_some(),
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
    pub id: String,
    pub prefix: String,
    pub name: String,
    pub status: &'static str,
    pub webhook: String,
    /// "10/s, burst 20", or "default".
    pub rate_limit: String,
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
    /// What it was about, as stored (an account id, a reference code…).
    pub subject: String,
    /// As a person reads it: the account's name for an account.
    pub subject_label: String,
    /// Its page, when it has one (an account, a transaction).
    pub subject_link: Option<String>,
    pub change: String,
    pub reason: String,
}

impl From<&billpay_store::LogEntry> for LogRow {
    fn from(l: &billpay_store::LogEntry) -> Self {
        let change = match (l.before.as_deref(), l.after.as_deref()) {
            (None, None) => String::new(),
            (None, Some(after)) => after.to_owned(),
            (Some(before), after) => format!("{before} → {}", after.unwrap_or("—")),
        };
        let subject_link = if l.action.starts_with("transaction.") || l.action == "webhook.resend" {
            Some(format!("/admin/transactions/{}", l.subject))
        } else if l.subject.parse::<AccountId>().is_ok() {
            Some(format!("/admin/customers/{}", l.subject))
        } else {
            None
        };
        LogRow {
            at: short_time(&l.at),
            who: l.operator_email.clone().unwrap_or_else(|| l.actor.clone()),
            action: l.action.clone(),
            subject: l.subject.clone(),
            subject_label: l.subject.clone(),
            subject_link,
            change,
            reason: l.reason.clone().unwrap_or_default(),
        }
    }
}

/// Log lines about accounts named by the account's name (one lookup).
pub async fn name_subjects(
    state: &ConsoleState,
    rows: &mut [LogRow],
) -> Result<(), super::PageError> {
    let ids: Vec<AccountId> = rows.iter().filter_map(|r| r.subject.parse().ok()).collect();
    let names = state.store.account_names(&ids).await?;
    for row in rows {
        if let Some(name) = row.subject.parse().ok().and_then(|id| names.get(&id)) {
            row.subject_label = name.clone();
        }
    }
    Ok(())
}

#[derive(Template)]
#[template(path = "customer.html")]
struct AccountPage {
    chrome: Chrome,
    account: AccountRow,
    suspended: bool,
    keys: Vec<KeyRow>,
    /// A key just created: its secret, shown this once.
    new_secret: Option<String>,
    tier: String,
    tiers: Vec<String>,
    failed_webhooks: Vec<FailedEventRow>,
    funding: Vec<FundingAccountRow>,
    /// The configured funding gateways, where an owner reserves accounts.
    gateways: Vec<String>,
    transactions: Vec<TxRow>,
    /// The customer's latest batches (bulk purchases, docs/bulk.md).
    batches: Vec<BatchRow>,
    entries: Vec<EntryRow>,
    log: Vec<LogRow>,
    /// The shop's transaction PIN: "not set", "set", or "locked until …".
    pin: PinRow,
    /// When an operator closed the account (Lagos time), if it is closed.
    closed: Option<String>,
    /// When its personal data was erased (Lagos time), if it was.
    erased: Option<String>,
    /// The KYC level: how, when, by whom, why.
    kyc: KycView,
    /// The levels, for the owner's "set level" form.
    levels: Vec<(u8, String)>,
    /// The limits that apply, what was used of them and what is left.
    limits: Vec<UsageRow>,
    /// What the daily and 30-day value limits still allow today.
    left_today: Option<String>,
    /// The wallet is over its largest balance: level 0's limits apply.
    held_to_level0: bool,
    /// The account's own limits (an owner's page only).
    limits_form: Option<LimitsForm>,
    /// The blocklist's entry for this account: its reason.
    blocked: Option<String>,
    /// A refused form of this page, drawn again with its message and input.
    refill: Refill,
    /// The customer's schedules (issue 50), newest first.
    schedules: Vec<ScheduleRow>,
    /// One of them is active: an owner may pause them all.
    schedules_active: bool,
    /// Who referred the customer, and where the referral stands (issue 49):
    /// (referrer id, "earning" / "no commission: why" / "void: why", voidable).
    referral: Option<(String, String, bool)>,
    /// How many the customer referred, and their bonus balance.
    referred: (u64, String),
}

/// A customer's schedule as the operator reads it.
pub struct ScheduleRow {
    pub reference: String,
    pub what: String,
    pub recipient: String,
    pub every: &'static str,
    pub status: &'static str,
    pub reason: String,
    /// The next run (Lagos time), or "—" while paused or stopped.
    pub next: String,
    pub runs: u64,
}

fn schedule_row(s: billpay_store::Schedule) -> ScheduleRow {
    ScheduleRow {
        next: billpay_operations::schedules::next_run(&s).map_or_else(|| "—".into(), short_time),
        reference: s.reference,
        what: s.label,
        recipient: s.recipient,
        every: s.every.adverb(),
        status: s.status.as_str(),
        reason: s.status_reason.unwrap_or_default(),
        runs: s.runs,
    }
}

/// Where the customer's transaction PIN stands (the shop's purchases).
pub struct PinRow {
    pub words: String,
    /// Purchases are locked now (five wrong PINs): an owner may clear it.
    pub locked: bool,
}

fn pin_row(pin: Option<billpay_store::PinState>) -> PinRow {
    let now = billpay_store::clock::now_ms();
    match pin {
        None => PinRow {
            words: "not set".into(),
            locked: false,
        },
        Some(p) if p.locked_until_ms > now => PinRow {
            words: format!(
                "locked after wrong PINs, until {}",
                billpay_webkit::format::lagos_time(&billpay_store::clock::rfc3339(
                    p.locked_until_ms
                ))
            ),
            locked: true,
        },
        Some(p) if p.failures > 0 => PinRow {
            words: format!("set ({} wrong in a row)", p.failures),
            locked: false,
        },
        Some(_) => PinRow {
            words: "set".into(),
            locked: false,
        },
    }
}

/// A batch on the customer's page.
pub struct BatchRow {
    /// Its row's anchor (`#batch-…`), a failed webhook's link.
    pub id: String,
    pub at: String,
    pub reference: String,
    pub status: &'static str,
    pub counts: billpay_store::BatchCounts,
    /// Items not final yet (queued or processing).
    pub waiting: u32,
    pub charged: String,
}

impl From<&billpay_store::Batch> for BatchRow {
    fn from(batch: &billpay_store::Batch) -> Self {
        let counts = batch.counts;
        BatchRow {
            id: batch.id.clone(),
            at: short_time(&batch.created_at),
            reference: batch.reference.clone(),
            status: batch.status.as_str(),
            counts,
            waiting: counts.queued + counts.processing,
            charged: naira(counts.charged),
        }
    }
}

pub struct FailedEventRow {
    pub at: String,
    /// What it is about: a purchase's reference code or a batch's reference.
    pub subject: String,
    /// Its purchase's page, or its batch's row on this page.
    pub link: String,
    pub event: String,
    pub attempts: u32,
}

impl From<&billpay_store::Event> for FailedEventRow {
    fn from(e: &billpay_store::Event) -> Self {
        let (subject, link) = match e.subject() {
            EventSubject::Purchase(code) => {
                let link = format!("/admin/transactions/{code}");
                (code, link)
            }
            EventSubject::Batch { id, reference } => (reference, format!("#batch-{id}")),
        };
        FailedEventRow {
            at: short_time(&e.created_at),
            subject,
            link,
            event: e.event.clone(),
            attempts: e.attempts,
        }
    }
}

pub struct FundingAccountRow {
    pub gateway: String,
    pub bank: String,
    pub number: String,
    pub name: String,
}

pub async fn account(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    Query(done): Query<Done>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    account_page(&state, &signed_in, id, &done, None, Refill::none()).await
}

async fn account_page(
    state: &ConsoleState,
    signed_in: &SignedIn,
    id: AccountId,
    done: &Done,
    new_secret: Option<String>,
    refill: Refill,
) -> PageResult {
    let store = &state.store;
    let account = store.account(id).await?.ok_or_else(not_found)?;
    let ops_store = store.as_ref();
    let tier = pricing::account_tier(ops_store, id)
        .await
        .map_err(refused)?;
    let tiers = pricing::tiers(ops_store).await.map_err(refused)?;
    let failed = store
        .events(EventFilter {
            account_id: Some(id),
            failed_only: true,
            limit: 10,
            ..EventFilter::default()
        })
        .await?;
    let funding = store.reserved_accounts(Some(id)).await?;
    let keys = store.api_keys(id).await?;
    let filter = TxFilter {
        account_id: Some(id),
        limit: 20,
        ..TxFilter::default()
    };
    let transactions = store.transactions(filter).await?;
    let mut batches = store.batches(id, 10).await?;
    // A failed `batch.completed` links to its batch's row: listed even when
    // older than the latest ten.
    for event in &failed {
        if let EventSubject::Batch {
            id: batch,
            reference,
        } = event.subject()
            && !batches.iter().any(|b| b.id == batch)
            && let Some(found) = store.batch(id, &reference).await?
        {
            batches.push(found);
        }
    }
    let entries = store.ledger(id, 20).await?;
    let log_filter = LogFilter {
        subject: Some(id.to_string()),
        limit: 20,
        ..LogFilter::default()
    };
    let log = store.operator_log(log_filter).await?;
    let pin = pin_row(store.transaction_pin(id).await?);
    let closure = store.account_closure(id).await?;
    let reader = actor(signed_in);
    let levels = limits::levels(ops_store, &reader).await.map_err(refused)?;
    let own = limits::account(ops_store, &reader, id)
        .await
        .map_err(refused)?;
    let blocked = limits::blocklist(ops_store, &reader)
        .await
        .map_err(refused)?
        .into_iter()
        .find(|e| e.kind == billpay_store::limits::BlockKind::Account && e.value == id.to_string())
        .map(|e| e.reason);
    let schedules: Vec<ScheduleRow> = store
        .schedules(id)
        .await?
        .into_iter()
        .map(schedule_row)
        .collect();
    let referral = store.referral_of(id).await?.map(|r| {
        let state = match (&r.voided_at, &r.matched, &r.void_reason) {
            (Some(_), _, reason) => format!("void: {}", reason.clone().unwrap_or_default()),
            (None, Some(why), _) => format!("no commission: {why}"),
            (None, None, _) => "earning".to_owned(),
        };
        (r.referrer_id.to_string(), state, r.voided_at.is_none())
    });
    let totals = store.referral_totals(id).await?;
    let referred = (totals.referees, naira(totals.balance));
    let chrome = Chrome::new(signed_in, "customers", done);
    Ok(render(&AccountPage {
        referral,
        referred,
        schedules_active: schedules.iter().any(|s| s.status == "active"),
        schedules,
        kyc: KycView::new(&own.kyc, &levels),
        levels: levels
            .iter()
            .map(|l| (l.level, limits_page::level_title(l)))
            .collect(),
        limits: limits_page::usage_rows(&own, account.balance),
        left_today: own.left_today().map(naira),
        held_to_level0: own.held_to_level0,
        limits_form: chrome.owner.then(|| {
            let level = levels.iter().find(|l| l.level == own.kyc.level);
            LimitsForm::new(
                "account-limits",
                format!("/admin/customers/{id}/limits"),
                &own.overrides,
                Some(level.map(|l| &l.limits).unwrap_or(&own.limits)),
                "Save the account's own limits".into(),
            )
        }),
        blocked,
        pin,
        closed: closure.as_ref().map(|c| short_time(&c.closed_at)),
        erased: closure
            .as_ref()
            .and_then(|c| c.erased_at.as_deref().map(short_time)),
        chrome,
        new_secret,
        tier,
        tiers: tiers.into_iter().map(|t| t.name).collect(),
        failed_webhooks: failed.iter().map(FailedEventRow::from).collect(),
        funding: funding
            .into_iter()
            .map(|f| FundingAccountRow {
                gateway: f.gateway,
                bank: f.bank_name,
                number: f.account_number,
                name: f.account_name,
            })
            .collect(),
        gateways: state
            .funding
            .gateways()
            .iter()
            .map(|g| g.name().to_owned())
            .collect(),
        suspended: account.status == AccountStatus::Suspended,
        account: AccountRow::from(&account),
        keys: keys
            .iter()
            .map(|k| KeyRow {
                id: k.id.to_string(),
                prefix: k.display_prefix.clone(),
                name: k.name.clone().unwrap_or_default(),
                status: k.status.as_str(),
                webhook: k.webhook_url.clone().unwrap_or_else(|| "—".into()),
                rate_limit: k.rate_limit.as_ref().map_or_else(
                    || "default".into(),
                    |r| format!("{}/s, burst {}", r.per_second, r.burst),
                ),
                last_used: k
                    .last_used_at
                    .as_deref()
                    .map(short_time)
                    .unwrap_or_default(),
            })
            .collect(),
        transactions: transactions.iter().map(TxRow::from).collect(),
        batches: batches.iter().map(BatchRow::from).collect(),
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
        refill,
    }))
}

/// The account's page again with `form` refused (its message beside the
/// field, what was typed kept), answered with the refusal's status; a
/// refusal of the role is the 403 page.
async fn refused_form(
    state: &ConsoleState,
    signed_in: &SignedIn,
    id: AccountId,
    form: &'static str,
    error: billpay_operations::OpsError,
    values: Vec<(&'static str, String)>,
) -> PageResult {
    let (status, refill) = Refill::refused(form, error, values)?;
    let page = account_page(state, signed_in, id, &Done::default(), None, refill).await?;
    Ok((status, page).into_response())
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
        Notice::AccountCreated,
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
    let set = accounts::set_status_because(state.store.as_ref(), actor, id, status, reason).await;
    if let Err(e) = set {
        let values = vec![("reason", form.reason)];
        return refused_form(&state, &signed_in, id, "status", e, values).await;
    }
    let notice = match status {
        AccountStatus::Active => Notice::AccountActive,
        AccountStatus::Suspended => Notice::AccountSuspended,
    };
    Ok(done(&format!("/admin/customers/{id}"), notice))
}

#[derive(Deserialize)]
pub struct ReasonForm {
    #[serde(default)]
    reason: String,
}

/// Closes the account for good (owner; its wallet empty, nothing in flight).
pub async fn close(
    state: State<ConsoleState>,
    signed_in: SignedIn,
    id: Path<String>,
    CsrfForm(form): CsrfForm<ReasonForm>,
) -> PageResult {
    end_account(state, signed_in, id, form, Ending::Close).await
}

/// Erases a closed account's personal data (owner; after a confirmation).
pub async fn erase(
    state: State<ConsoleState>,
    signed_in: SignedIn,
    id: Path<String>,
    CsrfForm(form): CsrfForm<ReasonForm>,
) -> PageResult {
    end_account(state, signed_in, id, form, Ending::Erase).await
}

/// The two ends of an account: closed, then its personal data erased.
#[derive(Clone, Copy)]
enum Ending {
    Close,
    Erase,
}

/// Closes or erases the account with the reason typed; a refusal is its
/// form again with the message.
async fn end_account(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    form: ReasonForm,
    ending: Ending,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let (actor, store) = (actor(&signed_in), state.store.as_ref());
    let reason = Some(form.reason.as_str());
    let (ended, which, notice) = match ending {
        Ending::Close => (
            accounts::close(store, actor, id, reason).await.map(|_| ()),
            "close",
            Notice::AccountClosed,
        ),
        Ending::Erase => (
            accounts::erase(store, actor, id, reason).await.map(|_| ()),
            "erase",
            Notice::AccountErased,
        ),
    };
    if let Err(e) = ended {
        let values = vec![("reason", form.reason)];
        return refused_form(&state, &signed_in, id, which, e, values).await;
    }
    Ok(done(&format!("/admin/customers/{id}"), notice))
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
    let which = if is_credit { "credit" } else { "debit" };
    let values = vec![
        ("amount", form.amount.clone()),
        ("reference", form.reference.clone()),
        ("reason", form.reason.clone()),
    ];
    let amount = match wallets::typed_amount(&form.amount) {
        Ok(amount) => amount,
        Err(e) => return refused_form(&state, &signed_in, id, which, e, values).await,
    };
    let (actor, store) = (actor(&signed_in), state.store.as_ref());
    let (reference, reason) = (form.reference.trim(), Some(form.reason.as_str()));
    let moved = if is_credit {
        wallets::credit(store, actor, id, amount, reference, reason).await
    } else {
        wallets::debit(store, actor, id, amount, reference, reason).await
    };
    let moved = match moved {
        Ok(moved) => moved,
        Err(e) => return refused_form(&state, &signed_in, id, which, e, values).await,
    };
    let notice = match (moved.applied, is_credit) {
        (true, true) => Notice::Credited,
        (true, false) => Notice::Debited,
        (false, _) => Notice::ReferenceUsed,
    };
    Ok(done(&format!("/admin/customers/{id}"), notice))
}

#[derive(Deserialize)]
pub struct TierForm {
    tier: String,
    #[serde(default)]
    reason: String,
}

/// Puts the account on a tier (`default`: list prices), with the reason typed.
pub async fn set_tier(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<TierForm>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let (actor, tier) = (actor(&signed_in), form.tier.trim());
    let reason = Some(form.reason.as_str());
    let set =
        pricing::set_account_tier_because(state.store.as_ref(), actor, id, tier, reason).await;
    if let Err(e) = set {
        let values = vec![("tier", form.tier.clone()), ("reason", form.reason)];
        return refused_form(&state, &signed_in, id, "change-tier", e, values).await;
    }
    Ok(done(&format!("/admin/customers/{id}"), Notice::TierChanged))
}

#[derive(Deserialize)]
pub struct DowngradeForm {
    #[serde(default)]
    reason: String,
    /// `1`: give back the fee of the upgrade that put it on its tier.
    #[serde(default)]
    refund: String,
}

#[derive(Deserialize)]
pub struct VoidForm {
    #[serde(default)]
    reason: String,
}

/// Voids the customer's referral (owner), with the reason typed: it earns
/// its referrer nothing from now on.
pub async fn void_referral(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<VoidForm>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let store = state.store.as_ref();
    let reason = Some(form.reason.as_str());
    match billpay_operations::referrals::void(store, actor(&signed_in), id, reason).await {
        Ok(_) => Ok(done(
            &format!("/admin/customers/{id}"),
            Notice::ReferralVoided,
        )),
        Err(e) => {
            let values = vec![("reason", form.reason)];
            refused_form(&state, &signed_in, id, "void-referral", e, values).await
        }
    }
}

/// Back to list prices (owner), with the reason typed; the upgrade's fee
/// given back only when the box is ticked (once).
pub async fn downgrade(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<DowngradeForm>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let refund = form.refund == "1";
    let store = state.store.as_ref();
    let reason = Some(form.reason.as_str());
    match upgrades::downgrade(store, actor(&signed_in), id, refund, reason).await {
        Ok(Some(_)) => Ok(done(
            &format!("/admin/customers/{id}"),
            Notice::DowngradedRefunded,
        )),
        Ok(None) => Ok(done(&format!("/admin/customers/{id}"), Notice::Downgraded)),
        Err(e) => {
            let values = vec![("reason", form.reason)];
            refused_form(&state, &signed_in, id, "downgrade", e, values).await
        }
    }
}

#[derive(Deserialize)]
pub struct KycForm {
    #[serde(default)]
    level: String,
    #[serde(default)]
    reason: String,
}

/// Sets the account's KYC level (owner), approved by the operator with the
/// reason typed; its next purchase is checked against the new level's limits.
pub async fn set_kyc(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<KycForm>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let set = match limits::level_of(&form.level) {
        Ok(level) => {
            let (store, actor) = (state.store.as_ref(), actor(&signed_in));
            let method = Verified::Operator;
            limits::set_level(store, actor, id, level, method, None, &form.reason)
                .await
                .map(|_| ())
        }
        Err(e) => Err(e),
    };
    if let Err(e) = set {
        let values = vec![("level", form.level), ("reason", form.reason)];
        return refused_form(&state, &signed_in, id, "kyc", e, values).await;
    }
    Ok(done(&format!("/admin/customers/{id}"), Notice::KycLevelSet))
}

/// Sets or clears the account's own limits (owner): every field as typed,
/// blank = the level's.
pub async fn set_limits(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<LimitTexts>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let set = match form.patch() {
        Ok(patch) => {
            let (store, actor) = (state.store.as_ref(), actor(&signed_in));
            limits::set_account_limits(store, actor, id, patch)
                .await
                .map(|_| ())
        }
        Err(e) => Err(e),
    };
    if let Err(e) = set {
        let values = form.given();
        return refused_form(&state, &signed_in, id, "account-limits", e, values).await;
    }
    Ok(done(
        &format!("/admin/customers/{id}"),
        Notice::AccountLimitsSet,
    ))
}

#[derive(Deserialize)]
pub struct PasswordForm {
    password: String,
    #[serde(default)]
    reason: String,
}

/// Sets the customer's dashboard password (they forgot it); their dashboard
/// sessions end. The password is typed here and told to them out of band.
pub async fn set_password(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<PasswordForm>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let reason = Some(form.reason.as_str());
    let set = accounts::set_password(
        state.store.as_ref(),
        actor(&signed_in),
        id,
        &form.password,
        reason,
    )
    .await;
    if let Err(e) = set {
        // The password is never drawn back into the page.
        let values = vec![("password", String::new()), ("reason", form.reason)];
        return refused_form(&state, &signed_in, id, "dashboard-password", e, values).await;
    }
    Ok(done(
        &format!("/admin/customers/{id}"),
        Notice::DashboardPasswordSet,
    ))
}

/// Emails the customer a single-use link to choose a new password (support
/// may; logged). Nobody at the business sees the link.
pub async fn send_password_reset(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    _: CsrfForm<billpay_webkit::NoFields>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let store = state.store.as_ref();
    accounts::send_password_reset(store, actor(&signed_in), id, &state.public_url)
        .await
        .map_err(refused)?;
    Ok(done(
        &format!("/admin/customers/{id}"),
        Notice::PasswordResetSent,
    ))
}

/// Ends the customer's PIN lock before its 30 minutes (an owner; logged).
pub async fn clear_pin_lock(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    _: CsrfForm<billpay_webkit::NoFields>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let cleared = accounts::clear_pin_lock(state.store.as_ref(), actor(&signed_in), id)
        .await
        .map_err(refused)?;
    let notice = match cleared {
        true => Notice::PinLockCleared,
        false => Notice::PinNotLocked,
    };
    Ok(done(&format!("/admin/customers/{id}"), notice))
}

/// Pauses every active schedule of the customer (they may resume each; logged).
pub async fn pause_schedules(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    _: CsrfForm<billpay_webkit::NoFields>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let store = state.store.as_ref();
    billpay_operations::schedules::pause_customer(store, actor(&signed_in), id)
        .await
        .map_err(refused)?;
    Ok(done(
        &format!("/admin/customers/{id}"),
        Notice::SchedulesPaused,
    ))
}

#[derive(Deserialize)]
pub struct DeveloperAccessForm {
    #[serde(default)]
    on: String,
}

/// Shows or hides the customer's API keys and webhooks pages (their
/// developer access; logged). Their keys work either way.
pub async fn set_developer_access(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<DeveloperAccessForm>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let on = form.on == "on";
    accounts::set_developer_access(state.store.as_ref(), actor(&signed_in), id, on)
        .await
        .map_err(refused)?;
    let notice = match on {
        true => Notice::DeveloperAccessOn,
        false => Notice::DeveloperAccessOff,
    };
    Ok(done(&format!("/admin/customers/{id}"), notice))
}

#[derive(Deserialize)]
pub struct NewKey {
    #[serde(default)]
    name: String,
}

/// A new API key; the page shows its secret this once (no redirect: the
/// secret is never in a URL).
pub async fn create_key(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    CsrfForm(form): CsrfForm<NewKey>,
) -> PageResult {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let name =
        Some(form.name.trim().chars().take(100).collect::<String>()).filter(|n| !n.is_empty());
    let issued = keys::create(state.store.as_ref(), actor(&signed_in), id, name)
        .await
        .map_err(refused)?;
    let done = Done {
        done: Some(format!("key {} created", issued.record.display_prefix)),
    };
    account_page(
        &state,
        &signed_in,
        id,
        &done,
        Some(issued.secret),
        Refill::none(),
    )
    .await
}

#[derive(Deserialize)]
pub struct KeyStatusForm {
    /// `active`, `suspended` or `revoked`.
    status: String,
}

#[derive(Deserialize)]
pub struct RateLimitForm {
    per_second: u32,
    burst: u32,
}

/// Overrides a key's rate limit (as `billpay key rate-limit`).
pub async fn set_key_rate_limit(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path((id, key)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<RateLimitForm>,
) -> PageResult {
    let (id, key_id) = owned_key(&state, &id, &key).await?;
    let update = KeyUpdate::RateLimit {
        per_second: form.per_second,
        burst: form.burst,
    };
    keys::update(state.store.as_ref(), actor(&signed_in), key_id, update)
        .await
        .map_err(refused)?;
    Ok(done(
        &format!("/admin/customers/{id}"),
        Notice::KeyRateLimitSet,
    ))
}

/// The account and key a form names, when the key is the account's.
async fn owned_key(
    state: &ConsoleState,
    id: &str,
    key: &str,
) -> Result<(AccountId, KeyId), super::PageError> {
    let id: AccountId = id.parse().map_err(|_| not_found())?;
    let key_id: KeyId = key.parse().map_err(|_| not_found())?;
    let owned = state
        .store
        .api_key(key_id)
        .await?
        .filter(|k| k.account_id == id);
    owned.ok_or_else(not_found)?;
    Ok((id, key_id))
}

pub async fn set_key_status(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path((id, key)): Path<(String, String)>,
    CsrfForm(form): CsrfForm<KeyStatusForm>,
) -> PageResult {
    let status: KeyStatus = form.status.parse().map_err(|_| {
        super::PageError::bad_request("status must be active, suspended or revoked")
    })?;
    let (id, key_id) = owned_key(&state, &id, &key).await?;
    let update = KeyUpdate::Status(status);
    let key = keys::update(state.store.as_ref(), actor(&signed_in), key_id, update)
        .await
        .map_err(refused)?;
    let notice = match key.status {
        KeyStatus::Active => Notice::KeyActive,
        KeyStatus::Suspended => Notice::KeySuspended,
        KeyStatus::Revoked => Notice::KeyRevoked,
    };
    Ok(done(&format!("/admin/customers/{id}"), notice))
}
