//! `/dashboard/verify`: the 6-digit code emailed at sign-up proves the
//! address and signs the customer in. Tries are counted in the same
//! throttle as the account's sign-in (one budget for every guess of one
//! person's secrets, every node's) and bounded per code in the store,
//! atomically.
//! `/dashboard/verify/resend` asks for a new code; it answers the same
//! whether or not the address has an account waiting for one.

use super::{Client, email_field, open_page, too_often};
use crate::DashboardState;
use crate::session::SCOPE;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use billpay_store::issue::{EMAIL_CODE_TRIES, email_code_hash, issue_email_code, issue_session};
use billpay_store::{AccountStatus, CodeCheck, secret_right, secret_try};
use billpay_webkit::{PageResult, SignInForm, Who, render};
use serde::Deserialize;

#[derive(Template)]
#[template(path = "care/verify.html")]
struct CodePage {
    csrf: String,
    email: String,
    error: Option<String>,
    notice: Option<&'static str>,
}

#[derive(Deserialize, Default)]
pub struct CodeFields {
    #[serde(default)]
    email: String,
    #[serde(default)]
    code: String,
}

#[derive(Deserialize, Default)]
pub struct EmailOnly {
    #[serde(default)]
    email: String,
}

/// The code form for `email` ("we sent a code to …").
pub fn code_page(
    headers: &HeaderMap,
    email: &str,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    code_page_with(headers, email, error, None, status)
}

fn code_page_with(
    headers: &HeaderMap,
    email: &str,
    error: Option<String>,
    notice: Option<&'static str>,
    status: StatusCode,
) -> Response {
    open_page(headers, status, |csrf| {
        render(&CodePage {
            csrf,
            email: email.to_owned(),
            error,
            notice,
        })
    })
}

pub async fn form(headers: HeaderMap, Query(typed): Query<EmailOnly>) -> Response {
    let email = email_field(&typed.email).unwrap_or_default();
    code_page(&headers, &email, None, StatusCode::OK)
}

pub async fn submit(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    SignInForm(typed): SignInForm<CodeFields>,
) -> PageResult {
    let refused =
        |message: String, status| Ok(code_page(&headers, &typed.email, Some(message), status));
    let Ok(email) = email_field(&typed.email) else {
        let message = "Enter the email address you signed up with.".to_owned();
        return refused(message, StatusCode::UNPROCESSABLE_ENTITY);
    };
    let code = typed.code.trim();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        let message = "Enter the 6-digit code from the email.".to_owned();
        return refused(message, StatusCode::UNPROCESSABLE_ENTITY);
    }
    let who = Who::account(&email);
    if let Err(locked) = secret_try(state.store.as_ref(), who).await? {
        return refused(too_often(locked), StatusCode::TOO_MANY_REQUESTS);
    }
    let account = state.store.account_by_email(&email).await?;
    let checked = match &account {
        Some(account) => {
            let hash = email_code_hash(code);
            state
                .store
                .check_email_code(account.id, hash, EMAIL_CODE_TRIES)
                .await?
        }
        None => CodeCheck::NoCode,
    };
    let message = match (checked, account) {
        (CodeCheck::Verified { .. }, Some(account)) if account.status == AccountStatus::Active => {
            secret_right(state.store.as_ref(), who).await?;
            let token = issue_session(state.store.as_ref(), account.id, SCOPE.lifetime).await?;
            return Ok(SCOPE.signed_in(&headers, &token));
        }
        (CodeCheck::Verified { .. }, _) => {
            "Your email is verified, but this account is suspended. Contact the operator."
        }
        (CodeCheck::EmailTaken, _) => {
            "That address now belongs to another account. Sign in and choose another."
        }
        // One sentence for every other refusal (a wrong code, a used-up or
        // expired one, no sign-up at all): the form never tells whether an
        // address has an unverified sign-up.
        _ => "That code is not right or has expired. Check the email, or ask for a new one below.",
    };
    refused(message.to_owned(), StatusCode::UNPROCESSABLE_ENTITY)
}

pub async fn resend(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Client(client): Client,
    SignInForm(typed): SignInForm<EmailOnly>,
) -> PageResult {
    let Ok(email) = email_field(&typed.email) else {
        let message = "Enter the email address you signed up with.".to_owned();
        let status = StatusCode::UNPROCESSABLE_ENTITY;
        return Ok(code_page(&headers, &typed.email, Some(message), status));
    };
    if let Err(locked) = state
        .care
        .forms
        .admit(state.store.as_ref(), client, &email)
        .await?
    {
        let status = StatusCode::TOO_MANY_REQUESTS;
        return Ok(code_page(&headers, &email, Some(too_often(locked)), status));
    }
    let waiting = state
        .store
        .account_by_email(&email)
        .await?
        .filter(|a| !a.verified() && a.status == AccountStatus::Active);
    if let Some(account) = waiting {
        issue_email_code(state.store.as_ref(), &account, &account.email).await?;
    }
    let sent = "If that address is waiting to be verified, we have emailed it a new code.";
    Ok(code_page_with(
        &headers,
        &email,
        None,
        Some(sent),
        StatusCode::OK,
    ))
}
