//! Sign-in and sign-out. The checks (field lengths, the throttle, the bound
//! on password hashing) are the web kit's; this page looks the account up,
//! refuses a suspended one and starts its session.

use crate::DashboardState;
use crate::page::{PageResult, render};
use crate::session::{SCOPE, SignedIn};
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use billpay_store::AccountStatus;
use billpay_store::issue::issue_session;
use billpay_webkit::{Credentials, CsrfForm, Found, NoFields, Refusal, SignInForm, SignInView};
use serde::Deserialize;

#[derive(Template)]
#[template(path = "care/login.html")]
struct LoginPage {
    view: SignInView,
    signup_open: bool,
    notice: Option<&'static str>,
}

/// What sent the visitor here (`?done=…`), looked up: any other text shows nothing.
#[derive(Deserialize, Default)]
pub struct Done {
    #[serde(default)]
    done: String,
}

/// The sign-in page sets a fresh double-submit CSRF cookie.
pub async fn form(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Query(done): Query<Done>,
) -> Response {
    let notice = match done.done.as_str() {
        "password-reset" => Some(
            "Your password is changed and every device is signed out. Sign in with the new password.",
        ),
        _ => None,
    };
    login_page(&state, &headers, "", None, notice, StatusCode::OK)
}

fn login_page(
    state: &DashboardState,
    headers: &HeaderMap,
    email: &str,
    error: Option<&str>,
    notice: Option<&'static str>,
    status: StatusCode,
) -> Response {
    let signup_open = state.care.policy.open;
    SCOPE.sign_in_form(headers, email, error, status, |view| {
        render(&LoginPage {
            view,
            signup_open,
            notice,
        })
    })
}

pub async fn submit(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    SignInForm(credentials): SignInForm<Credentials>,
) -> PageResult {
    let email = credentials.email();
    let refused = |refusal: Refusal| {
        refusal.respond(|message| {
            login_page(&state, &headers, email, Some(message), None, StatusCode::OK)
        })
    };
    let found = async {
        let account = state.store.account_by_email(email).await?;
        Ok(account.map(|a| Found {
            password_hash: a.password_hash.clone(),
            user: a,
        }))
    };
    let account = match state
        .kit
        .sign_in(state.store.as_ref(), &credentials, found)
        .await
    {
        Ok(account) => account,
        Err(refusal) => return Ok(refused(refusal)),
    };
    if account.status != AccountStatus::Active {
        let message = "This account is suspended. Contact the operator.";
        return Ok(login_page(
            &state,
            &headers,
            email,
            Some(message),
            None,
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
