//! Notifications: the outbox of emails and SMS — queued, sent, failed with
//! the provider's error — newest first, filtered by status, channel and
//! account; "resend" queues one again (support may too; logged). What a
//! notice says is not shown: it may hold a code meant for its recipient only.

use super::{Chrome, Done, Notice, PageError, PageResult, actor, done, refused, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_domain::AccountId;
use billpay_operations::{Permission, notices};
use billpay_store::{Notice as OutboxNotice, NoticeFilter};
use billpay_webkit::CsrfForm;
use billpay_webkit::filters::{more_pages, page_link};
use billpay_webkit::format::short_time;
use serde::Deserialize;

const PAGE_SIZE: u32 = 50;
const STATUSES: [&str; 3] = ["queued", "sent", "failed"];
const CHANNELS: [&str; 2] = ["email", "sms"];

pub struct NoticeRow {
    pub id: String,
    pub at: String,
    /// What the notice is, in words (`kind_words`).
    pub kind: &'static str,
    pub kind_slug: String,
    pub channel: String,
    pub recipient: String,
    pub account: String,
    /// The customer's name, when the notice is theirs.
    pub account_name: String,
    pub status: String,
    pub attempts: u32,
    pub error: String,
    pub sent_at: String,
}

impl From<OutboxNotice> for NoticeRow {
    fn from(n: OutboxNotice) -> Self {
        NoticeRow {
            at: short_time(&n.created_at),
            account: n.account_id.map(|a| a.to_string()).unwrap_or_default(),
            error: n.last_error.unwrap_or_default(),
            sent_at: n.sent_at.as_deref().map(short_time).unwrap_or_default(),
            id: n.id,
            kind: kind_words(&n.kind),
            kind_slug: n.kind,
            account_name: String::new(),
            channel: n.channel,
            recipient: n.recipient,
            status: n.status.as_str().to_owned(),
            attempts: n.attempts,
        }
    }
}

#[derive(Deserialize, Default)]
pub struct Filters {
    #[serde(default)]
    status: String,
    #[serde(default)]
    channel: String,
    #[serde(default)]
    account: String,
    #[serde(default)]
    page: u32,
    #[serde(default)]
    done: Option<String>,
}

#[derive(Template)]
#[template(path = "notifications.html")]
struct NotificationsPage {
    chrome: Chrome,
    statuses: [&'static str; 3],
    channels: [&'static str; 2],
    status: String,
    channel: String,
    account: String,
    /// The customer as typed (a phone, an email, a name, an id).
    typed: String,
    /// Several customers match what was typed: each, to choose one.
    matches: Vec<(String, String)>,
    rows: Vec<NoticeRow>,
    may_resend: bool,
    newer_link: Option<String>,
    older_link: Option<String>,
}

/// What a notice of `kind` is, for a person reading the outbox.
pub fn kind_words(kind: &str) -> &'static str {
    match kind {
        "email_verification" => "Email verification code",
        "password_reset" => "Password reset link",
        "pin_reset" => "PIN reset link",
        "funding_credited" => "Wallet funded",
        "purchase_refunded" => "Purchase failed, refunded",
        "purchase_receipt" => "Purchase receipt",
        "purchase_held" => "Purchase held for review",
        "purchase_released" => "Held purchase approved",
        "schedule_skipped" => "Scheduled purchase not bought",
        "schedule_stopped" => "Schedule stopped",
        "referral_commission" => "Referral bonus earned",
        "referral_bonus_moved" => "Referral bonus moved to the wallet",
        "low_balance" => "Low balance",
        "api_key_created" => "New API key (security)",
        "webhook_url_changed" => "Webhook URL changed (security)",
        "account_exists" => "Sign-up with an existing email",
        "phone_verification" => "Phone verification code",
        "operator_float_low" => "Alert: low supplier float",
        "operator_backlog" => "Alert: purchases piling up",
        "operator_held" => "Alert: purchase held for review",
        "operator_review_requested" => "Alert: purchase needs review, supplier cannot say",
        "operator_payment" => "Alert: bank payment unmatched or rejected",
        "operator_start_check" => "Alert: supplier failed the start-up check",
        "operator_supplier_down" => "Alert: supplier skipped after failures",
        "operator_supplier_back" => "Alert: supplier healthy again",
        "operator_daily_summary" => "Daily summary",
        "operator_test" => "Alert: test message",
        _ => "Other notice",
    }
}

/// Only a known status or channel filters (and goes back into a link).
fn known(list: &[&'static str], typed: &str) -> Option<&'static str> {
    list.iter().copied().find(|s| *s == typed)
}

pub async fn list(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(f): Query<Filters>,
) -> PageResult {
    let status = known(&STATUSES, &f.status).unwrap_or_default();
    let channel = known(&CHANNELS, &f.channel).unwrap_or_default();
    let customer = f.account.trim();
    let (account, matches) = match customer {
        "" => (None, Vec::new()),
        text => match text.parse::<AccountId>() {
            Ok(id) => (Some(id), Vec::new()),
            Err(_) => customer_of(&state, text).await?,
        },
    };
    let page = f.page.max(1);
    let filter = NoticeFilter {
        status: status.parse().ok(),
        channel: Some(channel.to_owned()).filter(|c| !c.is_empty()),
        account_id: account,
        kind: None,
        limit: PAGE_SIZE + 1,
        offset: (page - 1) * PAGE_SIZE,
    };
    // a customer typed who is no one (or several people) lists nothing
    let mut notices = match (customer.is_empty(), account) {
        (false, None) => Vec::new(),
        _ => state.store.notices(filter).await?,
    };
    let has_older = more_pages(&mut notices, PAGE_SIZE);
    let account = account.map(|a| a.to_string()).unwrap_or_default();
    let rows = named(&state, notices).await?;
    let filters = [
        ("status", status),
        ("channel", channel),
        ("account", account.as_str()),
    ];
    let link = |page: u32| page_link("/admin/notifications", &filters, page);
    let done = Done { done: f.done };
    Ok(render(&NotificationsPage {
        chrome: Chrome::new(&signed_in, "notifications", &done),
        statuses: STATUSES,
        channels: CHANNELS,
        may_resend: actor(&signed_in).may(Permission::ResendNotices),
        rows,
        typed: customer.to_owned(),
        matches,
        newer_link: (page > 1).then(|| link(page - 1)),
        older_link: has_older.then(|| link(page + 1)),
        status: status.to_owned(),
        channel: channel.to_owned(),
        account,
    }))
}

/// At most this many customers are offered when several match.
const CUSTOMER_CHOICES: u32 = 10;

/// The one customer `typed` finds (by phone in any spelling, email, name,
/// reference…: the customers page's search), or, when several match, each
/// (id, name and email) to choose from.
async fn customer_of(
    state: &ConsoleState,
    typed: &str,
) -> Result<(Option<AccountId>, Vec<(String, String)>), PageError> {
    let found = state.store.search_accounts(typed, CUSTOMER_CHOICES).await?;
    Ok(match found.as_slice() {
        [one] => (Some(one.id), Vec::new()),
        many => (
            None,
            many.iter()
                .map(|a| (a.id.to_string(), format!("{} ({})", a.name, a.email)))
                .collect(),
        ),
    })
}

/// The rows, each customer's notice with the customer's name.
async fn named(
    state: &ConsoleState,
    notices: Vec<OutboxNotice>,
) -> Result<Vec<NoticeRow>, PageError> {
    let ids: Vec<AccountId> = notices.iter().filter_map(|n| n.account_id).collect();
    let names = state.store.account_names(&ids).await?;
    Ok(notices
        .into_iter()
        .map(|n| {
            let name = n.account_id.and_then(|a| names.get(&a).cloned());
            NoticeRow {
                account_name: name.unwrap_or_default(),
                ..NoticeRow::from(n)
            }
        })
        .collect())
}

pub async fn resend(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    _: CsrfForm<billpay_webkit::NoFields>,
) -> PageResult {
    notices::resend(state.store.as_ref(), &actor(&signed_in), &id)
        .await
        .map_err(refused)?;
    Ok(done("/admin/notifications", Notice::Resent))
}

#[cfg(test)]
mod tests {
    use super::kind_words;

    #[test]
    fn every_operator_alert_has_its_own_words() {
        for alert in billpay_worker::alerts::ALERTS {
            assert_ne!(kind_words(alert.kind), "Other notice", "{}", alert.kind);
        }
    }
}
