//! A forgotten transaction PIN, reset by the emailed link plus the
//! account's password (issue 31): `/dashboard/pin/reset/{token}` — the
//! password reset's single-use 30-minute link (`issue::issue_pin_reset`,
//! `password_resets` with the purpose `pin`) — asks for the password and a
//! new PIN twice. The password is checked within the account's one budget
//! of secret checks (the sign-in's throttle) before the link is used; a
//! right one uses the link once, sets the PIN and ends the lock.

use crate::DashboardState;
use crate::care::link_page;
use crate::care::reset::plausible;
use askama::Template;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use billpay_domain::transaction_pin::TransactionPin;
use billpay_store::issue::{reset_token_hash, shop_key};
use billpay_store::{secret_right, secret_try};
use billpay_webkit::{PageError, PageResult, SignInForm, Who, render};
use serde::Deserialize;

#[derive(Template)]
#[template(path = "buyer/pin_reset.html")]
struct PinResetPage {
    csrf: String,
    token: String,
    valid: bool,
    done: bool,
    error: Option<String>,
}

#[derive(Deserialize)]
pub struct PinResetFields {
    #[serde(default)]
    password: String,
    #[serde(default)]
    pin: String,
    #[serde(default)]
    confirm: String,
}

/// What the page shows: the form (`valid`), the link gone, or done.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    Form,
    Gone,
    Done,
}

fn reset_page(
    headers: &HeaderMap,
    token: &str,
    shown: Shown,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    link_page(headers, status, |csrf| {
        render(&PinResetPage {
            csrf,
            token: token.to_owned(),
            valid: shown == Shown::Form,
            done: shown == Shown::Done,
            error,
        })
    })
}

fn gone(headers: &HeaderMap, token: &str) -> Response {
    reset_page(headers, token, Shown::Gone, None, StatusCode::GONE)
}

pub async fn form(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> PageResult {
    if !plausible(&token) {
        return Ok(gone(&headers, &token));
    }
    let hash = reset_token_hash(&token);
    match state.store.pin_reset_account(&hash).await? {
        Some(_) => Ok(reset_page(
            &headers,
            &token,
            Shown::Form,
            None,
            StatusCode::OK,
        )),
        None => Ok(gone(&headers, &token)),
    }
}

pub async fn reset(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Path(token): Path<String>,
    SignInForm(typed): SignInForm<PinResetFields>,
) -> PageResult {
    if !plausible(&token) {
        return Ok(gone(&headers, &token));
    }
    let hash = reset_token_hash(&token);
    let Some(account) = state.store.pin_reset_account(&hash).await? else {
        return Ok(gone(&headers, &token));
    };
    let refuse = |message: String, status: StatusCode| {
        Ok(reset_page(
            &headers,
            &token,
            Shown::Form,
            Some(message),
            status,
        ))
    };
    let unprocessable = StatusCode::UNPROCESSABLE_ENTITY;
    let Ok(pin) = TransactionPin::parse(&typed.pin) else {
        return refuse("Your PIN must be exactly 4 digits.".into(), unprocessable);
    };
    if typed.pin.trim() != typed.confirm.trim() {
        return refuse("The two PINs differ.".into(), unprocessable);
    }
    if typed.password.len() > billpay_webkit::MAX_PASSWORD_BYTES {
        return refuse("Wrong password.".into(), unprocessable);
    }
    let who = Who::account(&account.email);
    let Ok(permit) = state.kit.passwords.permit().await else {
        let busy = "Too busy just now: try again in a moment.".to_owned();
        return refuse(busy, StatusCode::SERVICE_UNAVAILABLE);
    };
    if let Err(locked) = secret_try(state.store.as_ref(), who).await? {
        let message = format!(
            "Too many wrong passwords: try again in {} minutes.",
            locked.minutes()
        );
        return refuse(message, StatusCode::TOO_MANY_REQUESTS);
    }
    if !permit
        .verify(account.password_hash.clone(), typed.password)
        .await
    {
        return refuse("Wrong password.".into(), unprocessable);
    }
    secret_right(state.store.as_ref(), who).await?;
    let pin_hash = tokio::task::spawn_blocking(move || pin.hash())
        .await
        .map_err(|e| PageError::internal(&e))?
        .map_err(|e| PageError::internal(&e))?;
    let key = shop_key(account.id);
    match state.store.reset_pin(&hash, pin_hash, key).await? {
        Some(id) => {
            tracing::info!(account = %id, "transaction PIN reset by emailed link");
            Ok(reset_page(
                &headers,
                &token,
                Shown::Done,
                None,
                StatusCode::OK,
            ))
        }
        None => Ok(gone(&headers, &token)),
    }
}
