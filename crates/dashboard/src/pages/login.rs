//! Sign-in and sign-out.

use super::{PageResult, render};
use crate::DashboardState;
use crate::session::*;
use askama::Template;
use axum::Form;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use billpay_store::AccountStatus;
use billpay_store::issue::issue_session;
use serde::Deserialize;
use std::time::Duration;

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    csrf: String,
    email: String,
    error: Option<String>,
}

#[derive(Deserialize)]
pub struct LoginForm {
    email: String,
    password: String,
    #[serde(default)]
    csrf: String,
}

#[derive(Deserialize)]
pub struct CsrfForm {
    #[serde(default)]
    pub csrf: String,
}

/// The sign-in page sets a fresh double-submit CSRF cookie.
pub async fn form(headers: HeaderMap) -> Response {
    login_page(&headers, String::new(), None, StatusCode::OK)
}

fn login_page(
    headers: &HeaderMap,
    email: String,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    let csrf = new_token();
    let mut response = render(&LoginPage {
        csrf: csrf.clone(),
        email,
        error,
    });
    *response.status_mut() = status;
    response.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(
            LOGIN_CSRF_COOKIE,
            &csrf,
            Duration::from_secs(3600),
            is_https(headers),
        ),
    );
    response
}

pub async fn submit(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> PageResult {
    let cookie_csrf = cookie(&headers, LOGIN_CSRF_COOKIE).unwrap_or_default();
    if form.csrf.is_empty() || !same_secret(&cookie_csrf, &form.csrf) {
        let message = "Invalid or missing CSRF token. Reload the sign-in page.";
        return Err((StatusCode::FORBIDDEN, message).into_response().into());
    }
    let email = form.email.trim().to_owned();
    let fail = |message: &str, status| {
        Err(login_page(&headers, email.clone(), Some(message.to_owned()), status).into())
    };
    if let Some(left) = state.throttle.locked_for(&email) {
        let minutes = left.as_secs().div_ceil(60);
        return fail(
            &format!("Too many failed sign-ins. Try again in {minutes} minutes."),
            StatusCode::TOO_MANY_REQUESTS,
        );
    }
    let account = state.store.account_by_email(&email).await?;
    let verified = verify_password(
        account.as_ref().and_then(|a| a.password_hash.as_deref()),
        &form.password,
    )
    .await;
    let Some(account) = account.filter(|_| verified) else {
        state.throttle.record_failure(&email);
        return fail("Wrong email or password.", StatusCode::UNAUTHORIZED);
    };
    if account.status != AccountStatus::Active {
        return fail(
            "This account is suspended. Contact the operator.",
            StatusCode::FORBIDDEN,
        );
    }
    state.throttle.clear(&email);
    let token = issue_session(state.store.as_ref(), account.id, SESSION_LIFETIME).await?;
    let mut response = Redirect::to("/dashboard").into_response();
    let secure = is_https(&headers);
    let cookies = response.headers_mut();
    cookies.append(
        header::SET_COOKIE,
        set_cookie(SESSION_COOKIE, &token, SESSION_LIFETIME, secure),
    );
    cookies.append(
        header::SET_COOKIE,
        set_cookie(LOGIN_CSRF_COOKIE, "", Duration::ZERO, secure),
    );
    Ok(response)
}

/// argon2id verification off the async threads.
async fn verify_password(hash: Option<&str>, password: &str) -> bool {
    let (hash, password) = (hash.map(str::to_owned), password.to_owned());
    tokio::task::spawn_blocking(move || {
        billpay_domain::password::verify(hash.as_deref(), &password)
    })
    .await
    .unwrap_or(false)
}

pub async fn logout(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    signed_in: SignedIn,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    signed_in.check_csrf(&form.csrf)?;
    state.store.delete_session(&signed_in.token_hash).await?;
    let mut response = Redirect::to("/dashboard/login").into_response();
    response.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(SESSION_COOKIE, "", Duration::ZERO, is_https(&headers)),
    );
    Ok(response)
}
