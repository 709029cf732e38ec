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
    pub kind: String,
    pub channel: String,
    pub recipient: String,
    pub account: String,
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
            kind: n.kind,
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
    rows: Vec<NoticeRow>,
    may_resend: bool,
    newer_link: Option<String>,
    older_link: Option<String>,
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
    let account_text = f.account.trim();
    let account: Option<AccountId> = match account_text {
        "" => None,
        text => Some(
            text.parse()
                .map_err(|_| PageError::bad_request("account must be an account id"))?,
        ),
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
    let mut notices = state.store.notices(filter).await?;
    let has_older = more_pages(&mut notices, PAGE_SIZE);
    let account = account.map(|a| a.to_string()).unwrap_or_default();
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
        rows: notices.into_iter().map(NoticeRow::from).collect(),
        newer_link: (page > 1).then(|| link(page - 1)),
        older_link: has_older.then(|| link(page + 1)),
        status: status.to_owned(),
        channel: channel.to_owned(),
        account,
    }))
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
