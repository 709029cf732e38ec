//! Sign-in and sign-out. The checks (field lengths, the throttle, the bound
//! on password hashing) are the web kit's; this page looks the operator up,
//! and when it has TOTP on, the code is checked after a right password (so a
//! wrong password uses no code up): a wrong or reused code makes the attempt
//! fail like a wrong password (it counts in the throttle, and says nothing of
//! which was wrong).

use super::{PageResult, render};
use crate::ConsoleState;
use crate::session::{SCOPE, SignedIn};
use askama::Template;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use billpay_domain::keys::random_hex;
use billpay_operations::operators::check_totp;
use billpay_store::issue::session_token_hash;
use billpay_store::{Operator, OperatorStatus};
use billpay_webkit::{
    Credentials, CsrfForm, Found, NoFields, PageError, Refusal, SignInForm, SignInView,
};
use serde::Deserialize;

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    view: SignInView,
}

#[derive(Deserialize)]
pub struct ConsoleSignIn {
    #[serde(flatten)]
    credentials: Credentials,
    /// The authenticator app's code, for an operator with TOTP on.
    #[serde(default)]
    totp: String,
}

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
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    SignInForm(form): SignInForm<ConsoleSignIn>,
) -> PageResult {
    let credentials = &form.credentials;
    let email = credentials.email();
    let refused = |refusal: Refusal| {
        let refusal = match refusal {
            Refusal::WrongCredentials => None,
            other => Some(other),
        };
        match refusal {
            Some(other) => other.respond(|m| login_page(&headers, email, Some(m), StatusCode::OK)),
            None => {
                let message = "Wrong email, password or code.";
                login_page(&headers, email, Some(message), StatusCode::UNAUTHORIZED)
            }
        }
    };
    let found = async {
        let operator = state.store.operator_by_email(email).await?;
        Ok(operator.map(|operator| Found {
            password_hash: Some(operator.password_hash.clone()),
            user: operator,
        }))
    };
    let second = |operator| second_factor(&state, operator, &form.totp);
    let operator = match state
        .kit
        .sign_in_with(state.store.as_ref(), credentials, found, second)
        .await
    {
        Ok(operator) => operator,
        Err(refusal) => return Ok(refused(refusal)),
    };
    if operator.status != OperatorStatus::Active {
        let message = "This operator is disabled. Ask an owner.";
        return Ok(login_page(
            &headers,
            email,
            Some(message),
            StatusCode::FORBIDDEN,
        ));
    }
    let token = random_hex(32);
    let expires_at_ms = billpay_store::clock::now_ms() + SCOPE.lifetime.as_millis() as i64;
    let hash = session_token_hash(&token);
    state
        .store
        .create_operator_session(&hash, operator.id, expires_at_ms)
        .await?;
    Ok(SCOPE.signed_in(&headers, &token))
}

/// After a right password: the operator, unless TOTP is on and the code is
/// wrong or already used (`None`). A code's time step is taken in the store,
/// so it is accepted once whichever node it is sent to (RFC 6238 §5.2).
async fn second_factor(
    state: &ConsoleState,
    operator: Operator,
    code: &str,
) -> Result<Option<Operator>, PageError> {
    if !operator.totp_enabled() {
        return Ok(Some(operator));
    }
    let step = check_totp(&operator, code, &state.secrets).unwrap_or_else(|e| {
        tracing::error!(error = %e, operator = operator.id, "TOTP check failed");
        None
    });
    let fresh = match step {
        Some(step) => state.store.claim_totp_step(operator.id, step).await?,
        None => false,
    };
    Ok(fresh.then_some(operator))
}

pub async fn logout(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    signed_in: SignedIn,
    _: CsrfForm<NoFields>,
) -> PageResult {
    state
        .store
        .delete_operator_session(&signed_in.token_hash)
        .await?;
    Ok(SCOPE.signed_out(&headers))
}
