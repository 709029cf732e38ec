//! Operators and the operator log: owners only (support is refused 403).

use super::customers::{LogRow, name_subjects};
use super::{Chrome, Done, Notice, PageResult, actor, done, not_found, refused, render, require};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use billpay_operations::{Permission, operators};
use billpay_store::{LogFilter, OperatorRole, OperatorStatus};
use billpay_webkit::CsrfForm;
use billpay_webkit::format::short_time;
use serde::Deserialize;

pub struct OperatorRow {
    pub id: i64,
    pub email: String,
    pub role: &'static str,
    pub status: &'static str,
    pub active: bool,
    pub totp: bool,
    pub created: String,
    pub me: bool,
}

#[derive(Template)]
#[template(path = "operators.html")]
struct OperatorsPage {
    chrome: Chrome,
    rows: Vec<OperatorRow>,
}

pub async fn list(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    let all = operators::list(state.store.as_ref(), &actor(&signed_in))
        .await
        .map_err(refused)?;
    let rows = all
        .iter()
        .map(|o| OperatorRow {
            id: o.id,
            email: o.email.clone(),
            role: o.role.as_str(),
            status: o.status.as_str(),
            active: o.status == OperatorStatus::Active,
            totp: o.totp_enabled(),
            created: short_time(&o.created_at),
            me: o.id == signed_in.user.id,
        })
        .collect();
    Ok(render(&OperatorsPage {
        chrome: Chrome::new(&signed_in, "operators", &done),
        rows,
    }))
}

#[derive(Deserialize)]
pub struct NewOperatorForm {
    email: String,
    role: String,
    password: String,
}

pub async fn create(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<NewOperatorForm>,
) -> PageResult {
    let role: OperatorRole = form
        .role
        .parse()
        .map_err(|_| super::PageError::bad_request("role must be owner or support"))?;
    let store = state.store.as_ref();
    let created = operators::create(store, actor(&signed_in), &form.email, role, &form.password)
        .await
        .map_err(refused)?;
    tracing::debug!(operator = created.id, "operator created from the console");
    Ok(done("/admin/operators", Notice::OperatorCreated))
}

#[derive(Deserialize)]
pub struct StatusForm {
    status: String,
}

pub async fn set_status(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<i64>,
    CsrfForm(form): CsrfForm<StatusForm>,
) -> PageResult {
    require(&signed_in, Permission::ManageOperators)?;
    let status: OperatorStatus = form
        .status
        .parse()
        .map_err(|_| super::PageError::bad_request("status must be active or disabled"))?;
    let store = state.store.as_ref();
    let operator = store.operator(id).await?.ok_or_else(not_found)?;
    let changed = operators::set_status(store, actor(&signed_in), &operator.email, status)
        .await
        .map_err(refused)?;
    let notice = match changed.status {
        OperatorStatus::Active => Notice::OperatorActive,
        OperatorStatus::Disabled => Notice::OperatorDisabled,
    };
    Ok(done("/admin/operators", notice))
}

#[derive(Deserialize)]
pub struct PasswordForm {
    password: String,
}

/// An owner sets another operator's password (their sessions end), as
/// `billpay operator set-password`; one's own is changed on "My account".
pub async fn set_password(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Path(id): Path<i64>,
    CsrfForm(form): CsrfForm<PasswordForm>,
) -> PageResult {
    require(&signed_in, Permission::ManageOperators)?;
    let store = state.store.as_ref();
    let operator = store.operator(id).await?.ok_or_else(not_found)?;
    if operator.id == signed_in.user.id {
        return Err(super::PageError::bad_request(
            "change your own password on My account (it asks for the current one)",
        ));
    }
    let changed =
        operators::set_password(store, actor(&signed_in), &operator.email, &form.password)
            .await
            .map_err(refused)?;
    tracing::debug!(
        operator = changed.id,
        "operator password set from the console"
    );
    Ok(done("/admin/operators", Notice::OperatorPasswordSet))
}

#[derive(Deserialize, Default)]
pub struct LogQuery {
    #[serde(default)]
    subject: String,
    #[serde(default)]
    page: u32,
    #[serde(default)]
    done: Option<String>,
}

#[derive(Template)]
#[template(path = "log.html")]
struct LogPage {
    chrome: Chrome,
    subject: String,
    rows: Vec<LogRow>,
    next_link: Option<String>,
}

const LOG_PAGE: u32 = 100;

pub async fn log(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(q): Query<LogQuery>,
) -> PageResult {
    let page = q.page.max(1);
    let subject = q.subject.trim().to_owned();
    let filter = LogFilter {
        subject: Some(subject.clone()).filter(|s| !s.is_empty()),
        limit: LOG_PAGE + 1,
        offset: (page - 1) * LOG_PAGE,
        ..LogFilter::default()
    };
    let mut lines = operators::log(state.store.as_ref(), &actor(&signed_in), filter)
        .await
        .map_err(refused)?;
    let has_next = lines.len() > LOG_PAGE as usize;
    lines.truncate(LOG_PAGE as usize);
    let done = Done { done: q.done };
    let mut rows: Vec<LogRow> = lines.iter().map(LogRow::from).collect();
    name_subjects(&state, &mut rows).await?;
    Ok(render(&LogPage {
        chrome: Chrome::new(&signed_in, "log", &done),
        rows,
        next_link: has_next.then(|| format!("/admin/log?page={}", page + 1)),
        subject,
    }))
}
