//! Sign-in and sign-out. The checks (field lengths, the throttle, the bound
//! on password hashing) are the web kit's; this page looks the account up,
//! refuses a suspended one and starts its session.

use super::{PageResult, render};
use crate::DashboardState;
use crate::session::{SCOPE, SignedIn};
use askama::Template;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use billpay_store::AccountStatus;
use billpay_store::issue::issue_session;
use billpay_webkit::{Credentials, CsrfForm, Found, NoFields, Refusal, SignInForm, SignInView};

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    view: SignInView,
}

/// The sign-in page sets a fresh double-submit CSRF cookie.
pub async fn form(headers: HeaderMap) -> Response {
    login_page(&headers, "", None, StatusCode::OK)
}

fn login_page(
    headers: &HeaderMap,
    email: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    SCOPE.sign_in_form(headers, email, error, status, |view| {
        render(&LoginPage { view })
    })
}

pub async fn submit(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    SignInForm(credentials): SignInForm<Credentials>,
) -> PageResult {
    let email = credentials.email();
    let refused = |refusal: Refusal| {
        refusal.respond(|message| login_page(&headers, email, Some(message), StatusCode::OK))
    };
    let found = async {
        let account = state.store.account_by_email(email).await?;
        Ok(account.map(|a| Found {
            password_hash: a.password_hash.clone(),
            user: a,
        }))
    };
    let account = match state.kit.sign_in(&credentials, found).await {
        Ok(account) => account,
        Err(refusal) => return Ok(refused(refusal)),
    };
    if account.status != AccountStatus::Active {
        let message = "This account is suspended. Contact the operator.";
        return Ok(login_page(
            &headers,
            email,
            Some(message),
            StatusCode::FORBIDDEN,
        ));
    }
    let token = issue_session(state.store.as_ref(), account.id, SCOPE.lifetime).await?;
    Ok(SCOPE.signed_in(&headers, &token))
}

pub async fn logout(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    signed_in: SignedIn,
    _: CsrfForm<NoFields>,
) -> PageResult {
    state.store.delete_session(&signed_in.token_hash).await?;
    Ok(SCOPE.signed_out(&headers))
}
