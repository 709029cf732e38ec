//! `/dashboard/account`: the signed-in customer's own account — name and
//! phone; the email address and whether it is verified (with the code form,
//! and a new code on request); a new password (the current one required;
//! every other session ends); a new email address (the current password
//! required; it takes effect only once the code sent to it is entered);
//! developer access (the API keys and webhooks pages: on with the password
//! asked again, off at a click); links to the PIN, notification choices and
//! the identity check, which live under Account in the menu.

use super::{email_field, name_field, new_password, phone_field};
use crate::DashboardState;
use crate::page::Chrome;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use billpay_domain::EmailAddress;
use billpay_store::issue::{EMAIL_CODE_TRIES, email_code_hash, issue_email_code};
use billpay_store::{CodeCheck, DeveloperAccess, secret_right, secret_try};
use billpay_webkit::{CsrfForm, NoFields, PageError, PageResult, Who, render};
use serde::Deserialize;

#[derive(Template)]
#[template(path = "care/account.html")]
struct AccountPage {
    chrome: Chrome,
    name: String,
    phone: String,
    email: String,
    signed_up: &'static str,
    verified: bool,
    pending_email: Option<String>,
    notice: Option<&'static str>,
    error: Option<String>,
    /// Developer access: off (`None`), or who turned it on, in words.
    developer: Option<&'static str>,
    /// It comes with the price tier: the customer's switch cannot end it.
    developer_by_tier: bool,
    /// The identity check is offered (its link is shown).
    identity: bool,
}

/// What a change just did, named in the redirect after it (`?done=…`) and
/// looked up here: any other text shows nothing.
#[derive(Deserialize, Default)]
pub struct Done {
    #[serde(default)]
    done: String,
}

impl Done {
    fn notice(&self) -> Option<&'static str> {
        Some(match self.done.as_str() {
            "profile" => "Your profile is saved.",
            "password" => "Your password is changed. Your other sessions are signed out.",
            "code-sent" => "We emailed you a new 6-digit code. It works for 30 minutes.",
            "email-sent" => {
                "We emailed a 6-digit code to the new address. Enter it below to switch."
            }
            "verified" => "Your email address is verified.",
            "developer-on" => "Developer access is on: API keys and Webhooks are in your menu.",
            "developer-off" => "Developer access is off. Any API keys you made still work.",
            _ => return None,
        })
    }
}

fn done(what: &str) -> Response {
    Redirect::to(&format!("/dashboard/account?done={what}")).into_response()
}

pub async fn page(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    show(&state, &signed_in, done.notice(), None, StatusCode::OK).await
}

async fn show(
    state: &DashboardState,
    signed_in: &SignedIn,
    notice: Option<&'static str>,
    error: Option<String>,
    status: StatusCode,
) -> PageResult {
    let account = &signed_in.user;
    let mut response = render(&AccountPage {
        chrome: Chrome::new(signed_in, "account"),
        name: account.name.clone(),
        phone: account.phone.clone().unwrap_or_default(),
        email: account.email.clone(),
        signed_up: match account.signed_up {
            billpay_store::SignedUp::Myself => "You signed up yourself",
            billpay_store::SignedUp::Operator => "Opened for you by the operator",
        },
        verified: account.email_verified_at.is_some(),
        pending_email: state.store.pending_email(account.id).await?,
        notice,
        error,
        developer: account.developer_access.map(|by| match by {
            DeveloperAccess::Myself => "you turned it on",
            DeveloperAccess::Operator => "turned on for you by us",
            DeveloperAccess::Tier => "it comes with your price tier",
        }),
        developer_by_tier: account.developer_access == Some(DeveloperAccess::Tier),
        identity: crate::care::identity::offered(state),
    });
    *response.status_mut() = status;
    Ok(response)
}

pub(super) async fn refuse(
    state: &DashboardState,
    signed_in: &SignedIn,
    message: impl Into<String>,
) -> PageResult {
    let status = StatusCode::UNPROCESSABLE_ENTITY;
    show(state, signed_in, None, Some(message.into()), status).await
}

#[derive(Deserialize)]
pub struct ProfileFields {
    #[serde(default)]
    name: String,
    #[serde(default)]
    phone: String,
}

pub async fn save_profile(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(typed): CsrfForm<ProfileFields>,
) -> PageResult {
    let checked = name_field(&typed.name).and_then(|name| {
        let phone = match typed.phone.trim() {
            "" => None,
            phone => Some(phone_field(phone)?),
        };
        Ok((name, phone))
    });
    let (name, phone) = match checked {
        Ok(fields) => fields,
        Err(message) => return refuse(&state, &signed_in, message).await,
    };
    state
        .store
        .update_profile(signed_in.user.id, name, phone)
        .await?;
    Ok(done("profile"))
}

/// Whether `password` is the account's, under the account's throttle and
/// the bound on password checks; the inner `Err` is what the person reads.
/// Every change a borrowed session must not make alone asks it again
/// through this (a new email or password, "Download my data", a new API
/// key, a webhook URL, security notices by SMS turned off).
pub(crate) async fn current_password(
    state: &DashboardState,
    signed_in: &SignedIn,
    password: &str,
) -> Result<Result<(), String>, PageError> {
    let account = &signed_in.user;
    let who = Who::account(&account.email);
    let Ok(permit) = state.kit.passwords.permit().await else {
        return Ok(Err(
            "Too many requests at once. Try again in a moment.".to_owned()
        ));
    };
    if let Err(locked) = secret_try(state.store.as_ref(), who).await? {
        return Ok(Err(super::too_often(locked)));
    }
    let stored = account.password_hash.clone();
    if permit.verify(stored, password.to_owned()).await {
        secret_right(state.store.as_ref(), who).await?;
        Ok(Ok(()))
    } else {
        Ok(Err("Your current password is not right.".into()))
    }
}

#[derive(Deserialize)]
pub struct PasswordFields {
    #[serde(default)]
    current: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    password_again: String,
}

pub async fn change_password(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(typed): CsrfForm<PasswordFields>,
) -> PageResult {
    let password = match new_password(&typed.password, &typed.password_again) {
        Ok(password) => password,
        Err(message) => return refuse(&state, &signed_in, message).await,
    };
    if let Err(message) = current_password(&state, &signed_in, &typed.current).await? {
        return refuse(&state, &signed_in, message).await;
    }
    let Ok(permit) = state.kit.passwords.permit().await else {
        return refuse(
            &state,
            &signed_in,
            "Too many requests at once. Try again in a moment.",
        )
        .await;
    };
    let hash = permit
        .hash(password)
        .await
        .map_err(|e| PageError::internal(&e))?;
    let account = signed_in.user.id;
    state
        .store
        .change_password(account, hash, &signed_in.token_hash)
        .await?;
    Ok(done("password"))
}

#[derive(Deserialize)]
pub struct DeveloperFields {
    /// `on` or `off`.
    #[serde(default)]
    access: String,
    /// Asked to turn it on: a borrowed session alone does not open the
    /// key pages.
    #[serde(default)]
    current: String,
}

/// Turns developer access on (the current password asked again) or off.
pub async fn set_developer_access(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(typed): CsrfForm<DeveloperFields>,
) -> PageResult {
    let on = typed.access == "on";
    if on && let Err(message) = current_password(&state, &signed_in, &typed.current).await? {
        return refuse(&state, &signed_in, message).await;
    }
    state
        .store
        .set_own_developer_access(signed_in.user.id, on)
        .await?;
    Ok(done(if on { "developer-on" } else { "developer-off" }))
}

#[derive(Deserialize)]
pub struct EmailFields {
    #[serde(default)]
    email: String,
    #[serde(default)]
    current: String,
}

pub async fn change_email(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(typed): CsrfForm<EmailFields>,
) -> PageResult {
    let email = match email_field(&typed.email) {
        Ok(email) => email,
        Err(message) => return refuse(&state, &signed_in, message).await,
    };
    if EmailAddress::mailbox_of(&signed_in.user.email).is_some_and(|own| own.as_str() == email) {
        return refuse(&state, &signed_in, "That is already your address.").await;
    }
    if let Err(message) = current_password(&state, &signed_in, &typed.current).await? {
        return refuse(&state, &signed_in, message).await;
    }
    if state.store.account_by_email(&email).await?.is_some() {
        return refuse(
            &state,
            &signed_in,
            "That address belongs to another account.",
        )
        .await;
    }
    issue_email_code(state.store.as_ref(), &signed_in.user, &email).await?;
    Ok(done("email-sent"))
}

#[derive(Deserialize)]
pub struct CodeFields {
    #[serde(default)]
    code: String,
}

/// The code for the account's own address or for the new one it asked for.
pub async fn enter_code(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(typed): CsrfForm<CodeFields>,
) -> PageResult {
    let code = typed.code.trim();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return refuse(&state, &signed_in, "Enter the 6-digit code from the email.").await;
    }
    let account = &signed_in.user;
    let who = Who::account(&account.email);
    if let Err(locked) = secret_try(state.store.as_ref(), who).await? {
        return refuse(&state, &signed_in, super::too_often(locked)).await;
    }
    let checked = state
        .store
        .check_email_code(account.id, email_code_hash(code), EMAIL_CODE_TRIES)
        .await?;
    match checked {
        CodeCheck::Verified { .. } => {
            secret_right(state.store.as_ref(), who).await?;
            Ok(done("verified"))
        }
        CodeCheck::EmailTaken => {
            refuse(
                &state,
                &signed_in,
                "That address now belongs to another account.",
            )
            .await
        }
        CodeCheck::Wrong { left: 1.. } => {
            refuse(
                &state,
                &signed_in,
                "That code is not right. Check the email and try again.",
            )
            .await
        }
        _ => {
            let message = "That code is not right or has expired. Ask for a new one.";
            refuse(&state, &signed_in, message).await
        }
    }
}

/// A new code for the account's own address, while it is not verified.
pub async fn resend_code(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    _: CsrfForm<NoFields>,
) -> PageResult {
    let account = &signed_in.user;
    if account.email_verified_at.is_some() {
        return Ok(done("verified"));
    }
    if let Err(locked) = state
        .care
        .forms
        .admit(state.store.as_ref(), None, &account.email)
        .await?
    {
        return refuse(&state, &signed_in, super::too_often(locked)).await;
    }
    issue_email_code(state.store.as_ref(), account, &account.email).await?;
    Ok(done("code-sent"))
}
