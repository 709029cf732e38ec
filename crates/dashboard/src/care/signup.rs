//! `/dashboard/signup`: name, email, phone, password (and the invite code
//! when the operator requires one). Whether or not the address has an
//! account, the answer is the code page ("we sent a code"): a new address
//! gets its account and a code; a taken one gets a notice to its owner and
//! the same password hashing, so neither the page nor its timing tells.

use super::verify::code_page;
use super::{Client, email_field, name_field, new_password, open_page, phone_field, too_often};
use crate::DashboardState;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use billpay_store::issue::new_email_code;
use billpay_store::{Account, NewAccount, NewNotice, NewSignUp, StoreError};
use billpay_webkit::{PageError, PageResult, SignInForm, render};
use serde::Deserialize;

/// The notice to an address's owner when someone signs up with it.
pub const ACCOUNT_EXISTS: &str = "account_exists";

#[derive(Template)]
#[template(path = "care/signup.html")]
struct SignUpPage {
    csrf: String,
    open: bool,
    invite_required: bool,
    typed: SignUpFields,
    error: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct SignUpFields {
    #[serde(default)]
    name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    phone: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    password_again: String,
    #[serde(default)]
    invite: String,
    /// The referral code: from the link (`?ref=CODE`) or typed.
    #[serde(default)]
    referral: String,
}

/// The sign-up link's query: `?ref=CODE` from a referrer's link.
#[derive(Deserialize, Default)]
pub struct SignUpQuery {
    #[serde(default, rename = "ref")]
    referral: String,
}

pub async fn form(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Query(query): Query<SignUpQuery>,
) -> Response {
    let status = match state.care.policy.open {
        true => StatusCode::OK,
        false => StatusCode::FORBIDDEN,
    };
    let typed = SignUpFields {
        referral: referral_typed(&query.referral),
        ..SignUpFields::default()
    };
    page(&state, &headers, typed, None, status)
}

/// A referral code as the form shows it again: what a code may be, else nothing.
fn referral_typed(typed: &str) -> String {
    billpay_store::normal_referral_code(typed).unwrap_or_default()
}

fn page(
    state: &DashboardState,
    headers: &HeaderMap,
    mut typed: SignUpFields,
    error: Option<String>,
    status: StatusCode,
) -> Response {
    typed.password.clear();
    typed.password_again.clear();
    typed.invite.clear();
    let policy = &state.care.policy;
    open_page(headers, status, |csrf| {
        render(&SignUpPage {
            csrf,
            open: policy.open,
            invite_required: policy.invite_code.is_some(),
            typed,
            error,
        })
    })
}

/// What a referral code no one has says.
const UNKNOWN_REFERRAL: &str = "That referral code is not right: it is 7 letters and digits, like K7QM2XD. Check it with whoever shared it, or leave it empty.";

/// The checked fields of a sign-up.
struct Applicant {
    name: String,
    email: String,
    phone: String,
    password: String,
    /// A referral code of the right shape (whose it is, the store finds).
    referral: Option<String>,
}

fn check(state: &DashboardState, typed: &SignUpFields) -> Result<Applicant, String> {
    let applicant = Applicant {
        name: name_field(&typed.name)?,
        email: email_field(&typed.email)?,
        phone: phone_field(&typed.phone)?,
        password: new_password(&typed.password, &typed.password_again)?,
        referral: match typed.referral.trim() {
            "" => None,
            code => Some(
                billpay_store::normal_referral_code(code)
                    .ok_or_else(|| UNKNOWN_REFERRAL.to_owned())?,
            ),
        },
    };
    if !state.care.policy.invited(&typed.invite) {
        return Err("That invite code is not right. Ask whoever invited you for it.".into());
    }
    Ok(applicant)
}

pub async fn submit(
    State(state): State<DashboardState>,
    headers: HeaderMap,
    Client(client): Client,
    SignInForm(typed): SignInForm<SignUpFields>,
) -> PageResult {
    if !state.care.policy.open {
        return Ok(page(&state, &headers, typed, None, StatusCode::FORBIDDEN));
    }
    let applicant = match check(&state, &typed) {
        Ok(applicant) => applicant,
        Err(message) => {
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            return Ok(page(&state, &headers, typed, Some(message), status));
        }
    };
    if let Some(code) = &applicant.referral
        && state.store.referrer_by_code(code).await?.is_none()
    {
        let (message, status) = (
            UNKNOWN_REFERRAL.to_owned(),
            StatusCode::UNPROCESSABLE_ENTITY,
        );
        return Ok(page(&state, &headers, typed, Some(message), status));
    }
    if let Err(locked) = state
        .care
        .forms
        .admit(state.store.as_ref(), client, &applicant.email)
        .await?
    {
        let status = StatusCode::TOO_MANY_REQUESTS;
        return Ok(page(
            &state,
            &headers,
            typed,
            Some(too_often(locked)),
            status,
        ));
    }
    let Ok(permit) = state.kit.passwords.permit().await else {
        let message = "Too many sign-ups at once. Try again in a moment.".to_owned();
        let status = StatusCode::SERVICE_UNAVAILABLE;
        return Ok(page(&state, &headers, typed, Some(message), status));
    };
    let password_hash = permit
        .hash(applicant.password.clone())
        .await
        .map_err(|e| PageError::internal(&e))?;
    let existing = state.store.account_by_email(&applicant.email).await?;
    match existing {
        Some(owner) => tell_owner(&state, &owner).await?,
        None => open_account(&state, &applicant, password_hash).await?,
    }
    Ok(code_page(&headers, &applicant.email, None, StatusCode::OK))
}

async fn open_account(
    state: &DashboardState,
    applicant: &Applicant,
    password_hash: String,
) -> Result<(), PageError> {
    let (_, code) = new_email_code(&applicant.name);
    let new = NewSignUp {
        account: NewAccount {
            name: applicant.name.clone(),
            email: applicant.email.clone(),
            password_hash: Some(password_hash),
            // A stranger signing up: level 0 until verified (docs/limits.md).
            kyc_level: 0,
        },
        phone: Some(applicant.phone.clone()),
        tier: state.care.policy.tier.clone(),
        code,
        referral: applicant.referral.clone(),
    };
    match state.store.sign_up(new).await {
        Ok(account) => {
            tracing::info!(account = %account.id, "self sign-up");
            Ok(())
        }
        // Taken between the look-up and the insert: its owner is told.
        Err(StoreError::EmailTaken(_)) => {
            match state.store.account_by_email(&applicant.email).await? {
                Some(owner) => tell_owner(state, &owner).await,
                None => Ok(()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// Emails the owner of a taken address that someone tried to sign up with
/// it — at most once an hour (the notice's cause is the hour).
async fn tell_owner(state: &DashboardState, owner: &Account) -> Result<(), PageError> {
    let hour = billpay_store::clock::now_ms() / 3_600_000;
    let base = super::public_url(state);
    let notice = NewNotice {
        cause: format!("signup-taken:{}:{hour}", owner.id),
        kind: ACCOUNT_EXISTS.into(),
        channel: "email".into(),
        recipient: owner.email.clone(),
        account_id: Some(owner.id),
        operator_id: None,
        data: serde_json::json!({
            "name": owner.name,
            "sign_in": format!("{base}/dashboard/login"),
            "forgot": format!("{base}/dashboard/forgot"),
        }),
    };
    state.store.enqueue_notice(notice).await?;
    Ok(())
}
