//! Forgot password: `/dashboard/forgot` emails a single-use link (30
//! minutes) to the address if it has an active account, and answers the
//! same either way; `/dashboard/reset/{token}` sets the new password, ends
//! every session of the account and kills its other links.

use super::{Client, email_field, link_page, new_password, open_page, too_often};
use crate::DashboardState;
use askama::Template;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use billpay_store::AccountStatus;
use billpay_store::issue::{issue_password_reset, reset_token_hash};
use billpay_webkit::{PageError, PageResult, SignInForm, render};
use serde::Deserialize;

#[derive(Template)]
#[template(path = "care/forgot.html")]
struct ForgotPage {
    csrf: String,
    email: String,
    error: Option<String>,
    sent: bool,
}

#[derive(Template)]
#[template(path = "care/reset.html")]
struct ResetPage {
    csrf: String,
    token: String,
    valid: bool,
    error: Option<String>,
}

#[derive(Deserialize)]
pub struct ForgotFields {
    #[serde(default)]
    email: String,
}

#[derive(Deserialize)]
pub struct ResetFields {
    #[serde(default)]
    password: String,
    #[serde(default)]
    password_again: String,
}

fn forgot_page(
    headers: &HeaderMap,
    email: &str,
    error: Option<String>,
    sent: bool,
    status: StatusCode,
) -> Response {
    open_page(headers, status, |csrf| {
        render(&ForgotPage {
            csrf,
            email: email.to_owned(),
            error,
            sent,
        })
    })
}

pub async fn forgot_form(headers: HeaderMap) -> Response {
    forgot_page(&headers, "", None, false, StatusCode::OK)
}

pub async fn forgot(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Client(client): Client,
    SignInForm(typed): SignInForm<ForgotFields>,
) -> PageResult {
    let email = match email_field(&typed.email) {
        Ok(email) => email,
        Err(message) => {
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            return Ok(forgot_page(
                &headers,
                &typed.email,
                Some(message),
                false,
                status,
            ));
        }
    };
    if let Err(locked) = state
        .care
        .forms
        .admit(state.store.as_ref(), client, &email)
        .await?
    {
        let status = StatusCode::TOO_MANY_REQUESTS;
        return Ok(forgot_page(
            &headers,
            &email,
            Some(too_often(locked)),
            false,
            status,
        ));
    }
    let account = state.store.account_by_email(&email).await?;
    if let Some(account) = account.filter(|a| a.status == AccountStatus::Active) {
        let base = super::public_url(&state);
        issue_password_reset(state.store.as_ref(), &account, base, None).await?;
    }
    Ok(forgot_page(&headers, &email, None, true, StatusCode::OK))
}

/// A reset page: the link's token stays out of other sites' logs.
fn reset_page(
    headers: &HeaderMap,
    token: &str,
    valid: bool,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    link_page(headers, status, |csrf| {
        render(&ResetPage {
            csrf,
            token: token.to_owned(),
            valid,
            error,
        })
    })
}

/// Only a token of the shape we issue is looked up.
pub(crate) fn plausible(token: &str) -> bool {
    token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

pub async fn reset_form(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> PageResult {
    let valid = plausible(&token)
        && state
            .store
            .password_reset_valid(&reset_token_hash(&token))
            .await?;
    let status = if valid {
        StatusCode::OK
    } else {
        StatusCode::GONE
    };
    Ok(reset_page(&headers, &token, valid, None, status))
}

pub async fn reset(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    SignInForm(typed): SignInForm<ResetFields>,
) -> PageResult {
    if !plausible(&token) {
        return Ok(reset_page(&headers, &token, false, None, StatusCode::GONE));
    }
    let password = match new_password(&typed.password, &typed.password_again) {
        Ok(password) => password,
        Err(message) => {
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            return Ok(reset_page(&headers, &token, true, Some(message), status));
        }
    };
    let Ok(permit) = state.kit.passwords.permit().await else {
        let message = "Too many requests at once. Try again in a moment.".to_owned();
        let status = StatusCode::SERVICE_UNAVAILABLE;
        return Ok(reset_page(&headers, &token, true, Some(message), status));
    };
    let hash = permit
        .hash(password)
        .await
        .map_err(|e| PageError::internal(&e))?;
    let used = state
        .store
        .reset_password(&reset_token_hash(&token), hash)
        .await?;
    match used {
        Some(account) => {
            tracing::info!(%account, "password reset by emailed link");
            Ok(Redirect::to("/dashboard/login?done=password-reset").into_response())
        }
        None => Ok(reset_page(&headers, &token, false, None, StatusCode::GONE)),
    }
}
