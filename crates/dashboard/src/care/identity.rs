//! "Verify your identity" (issue 32's level 1): a customer at level 0 has
//! their BVN or NIN matched through the payment gateway (Monnify's checks,
//! `billpay_funding::identity`) and, on a pass, moves to level 1 at once
//! (method `bvn`/`nin`, set by `self`, the last 4 digits). At most
//! [`IDENTITY_CHECKS_PER_DAY`] checks per account per Lagos day, counted in
//! the store before the gateway is asked (each costs the operator a fee).
//! The flow is `billpay_operations::identity::verify`, which the API's
//! `POST /v1/account/identity` runs too; this page reads the form and says
//! the outcome.
//!
//! The number is an [`IdNumber`] from the moment it is read: it is never
//! stored, logged, echoed on the page or put in an error — the operator log
//! and the account's KYC keep the last 4 digits.

use crate::DashboardState;
use crate::page::{Chrome, PageResult, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use billpay_domain::Phone;
use billpay_funding::identity::{Claim, IdKind, IdNumber, IdentityCheck};
use billpay_operations::identity::{
    self, Outcome, Request, birth_date, fields_in_words, full_name, left_in_words,
};
use billpay_store::limits::{IDENTITY_CHECKS_PER_DAY, Kyc};
use billpay_webkit::CsrfForm;
use billpay_webkit::format::{lagos_time, naira};
use serde::Deserialize;

/// Said to a customer whose email address is not confirmed yet.
const UNCONFIRMED: &str =
    "Confirm your email address first: enter the code we emailed you on your Account page.";

#[derive(Template)]
#[template(path = "care/identity.html")]
struct IdentityPage {
    chrome: Chrome,
    /// The level reached and how, for a level ≥ 1 account (no form then).
    reached: Option<String>,
    /// No gateway offers the check: ask the business.
    unavailable: bool,
    /// What level 1 allows a day, in words.
    level1_daily: Option<String>,
    checks_per_day: u32,
    form: FormValues,
    error: Option<String>,
    /// Just verified (the redirect after a pass).
    verified: bool,
}

/// The form as typed, the number left out (never echoed).
#[derive(Default)]
struct FormValues {
    nin: bool,
    name: String,
    date_of_birth: String,
    phone: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct CheckForm {
    kind: String,
    number: String,
    name: String,
    date_of_birth: String,
    phone: String,
}

#[derive(Deserialize, Default)]
pub struct Shown {
    #[serde(default)]
    verified: Option<String>,
}

/// The gateway that checks identities, if one is configured.
fn checker(state: &DashboardState) -> Option<&dyn IdentityCheck> {
    state.funding.gateways().iter().find_map(|g| g.identity())
}

/// Whether the shop can offer the check (the wallet links it then).
pub fn offered(state: &DashboardState) -> bool {
    checker(state).is_some()
}

/// How the level was reached, in words.
fn reached(kyc: &Kyc) -> String {
    let how = match (kyc.method.as_deref(), kyc.last4.as_deref()) {
        (Some("bvn"), Some(last4)) => format!(" by your BVN ending {last4}"),
        (Some("nin"), Some(last4)) => format!(" by your NIN ending {last4}"),
        (Some("operator" | "created"), _) => " by the business".to_owned(),
        _ => String::new(),
    };
    let when = kyc
        .set_at
        .as_deref()
        .map(|at| format!(" on {}", lagos_time(at)))
        .unwrap_or_default();
    format!(
        "Your account is at level {}, verified{how}{when}.",
        kyc.level
    )
}

async fn page_of(
    state: &DashboardState,
    signed_in: &SignedIn,
    form: FormValues,
    error: Option<String>,
    verified: bool,
) -> PageResult {
    let limits = state.store.account_limits(signed_in.user.id).await?;
    let levels = state.store.level_limits().await?;
    let level1_daily = levels
        .iter()
        .find(|l| l.level == 1)
        .map(|l| match l.limits.daily_value {
            Some(daily) => format!("up to {} a day", naira(daily)),
            None => "with no daily limit".to_owned(),
        });
    Ok(render(&IdentityPage {
        chrome: Chrome::new(signed_in, "wallet"),
        reached: (limits.kyc.level >= 1).then(|| reached(&limits.kyc)),
        unavailable: checker(state).is_none(),
        level1_daily,
        checks_per_day: IDENTITY_CHECKS_PER_DAY,
        form,
        error,
        verified,
    }))
}

pub async fn page(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(shown): Query<Shown>,
) -> PageResult {
    let verified = shown.verified.is_some();
    page_of(&state, &signed_in, FormValues::default(), None, verified).await
}

/// A claim as typed, checked: the kind, the number, and what is compared.
fn read(form: &CheckForm) -> Result<Request, String> {
    let kind = match form.kind.as_str() {
        "bvn" => IdKind::Bvn,
        "nin" => IdKind::Nin,
        _ => return Err("Choose BVN or NIN.".into()),
    };
    let title = kind.title();
    let number = IdNumber::parse(&form.number)
        .map_err(|_| format!("Your {title} is 11 digits: check it and enter it again."))?;
    let name = full_name(&form.name).ok_or_else(|| {
        format!("Enter your name as it is on your {title}: at least your first name and surname.")
    })?;
    let date_of_birth =
        birth_date(&form.date_of_birth).ok_or("Enter your date of birth, such as 1993-04-27.")?;
    let phone = match kind {
        IdKind::Bvn => Some(
            Phone::parse(&form.phone)
                .map_err(|_| {
                    "Enter the phone number your BVN is registered with, such as 0803 123 4567."
                })?
                .as_str()
                .to_owned(),
        ),
        IdKind::Nin => None,
    };
    Ok(Request {
        kind,
        number,
        claim: Claim {
            name,
            date_of_birth,
            phone,
        },
    })
}

/// Runs one check through `billpay_operations::identity::verify` (counted
/// first, then asked; a pass sets level 1) and says its outcome.
pub async fn check(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<CheckForm>,
) -> Result<Response, billpay_webkit::PageError> {
    let account = signed_in.user.id;
    let values = FormValues {
        nin: form.kind == "nin",
        name: form.name.clone(),
        date_of_birth: form.date_of_birth.clone(),
        phone: form.phone.clone(),
    };
    let Some(checker) = checker(&state) else {
        return Ok(page_of(&state, &signed_in, values, None, false)
            .await?
            .into_response());
    };
    let kyc = state.store.account_limits(account).await?.kyc;
    if kyc.level >= 1 {
        return Ok(Redirect::to("/dashboard/identity").into_response());
    }
    if !signed_in.user.verified() {
        return refuse(
            &state,
            &signed_in,
            StatusCode::FORBIDDEN,
            values,
            UNCONFIRMED.into(),
        )
        .await;
    }
    let request = match read(&form) {
        Ok(read) => read,
        Err(message) => {
            return refuse(
                &state,
                &signed_in,
                StatusCode::UNPROCESSABLE_ENTITY,
                values,
                message,
            )
            .await;
        }
    };
    let title = request.kind.title();
    let outcome = identity::verify(state.store.as_ref(), Some(checker), account, request).await?;
    let (status, message) = match outcome {
        Outcome::Passed(_) => {
            return Ok(Redirect::to("/dashboard/identity?verified=1").into_response());
        }
        Outcome::AlreadyVerified(_) | Outcome::Unavailable => {
            return Ok(Redirect::to("/dashboard/identity").into_response());
        }
        Outcome::Unconfirmed => (StatusCode::FORBIDDEN, UNCONFIRMED.to_owned()),
        Outcome::TooMany { .. } => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "You have used today's {IDENTITY_CHECKS_PER_DAY} checks. Try again tomorrow, or ask the business to verify you."
            ),
        ),
        Outcome::Failed { mismatched, left } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "Your {title} was found, but {} did not match what it holds. Nothing has changed. Check what you typed, as it is on your {title}. {}",
                fields_in_words(&mismatched),
                left_in_words(left)
            ),
        ),
        Outcome::Unknown { left } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "There is no {title} with those 11 digits. Nothing has changed. Check the number and try again. {}",
                left_in_words(left)
            ),
        ),
        Outcome::NoAnswer { left } => (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "The check could not be made just now: the verification service did not answer. Nothing has changed; try again later. {}",
                left_in_words(left)
            ),
        ),
    };
    refuse(&state, &signed_in, status, values, message).await
}

/// The form again with why it was refused (the number never in it).
async fn refuse(
    state: &DashboardState,
    signed_in: &SignedIn,
    status: StatusCode,
    values: FormValues,
    message: String,
) -> Result<Response, billpay_webkit::PageError> {
    let page = page_of(state, signed_in, values, Some(message), false).await?;
    Ok((status, page).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_checked_before_anything_is_asked() {
        let form = CheckForm {
            kind: "bvn".into(),
            number: "2222222222".into(),
            name: "Olatunde Ogunboyejo".into(),
            date_of_birth: "1993-04-27".into(),
            phone: "08142223149".into(),
        };
        let refused = read(&form).unwrap_err();
        assert!(refused.contains("11 digits") && !refused.contains("2222222222"));
        let form = CheckForm {
            number: "22222222226".into(),
            ..form
        };
        let request = read(&form).unwrap();
        assert_eq!(
            (request.kind, request.number.last4()),
            (IdKind::Bvn, "2226")
        );
        assert_eq!(request.claim.phone.as_deref(), Some("08142223149"));
    }
}
