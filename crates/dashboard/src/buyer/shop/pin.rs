//! The transaction PIN: set or changed with the account's password (a
//! stolen session alone cannot change it; the password is checked within
//! the sign-in's throttle), or changed with the current PIN ([`change`]: the
//! current PIN is one try of the purchases' own five, taken by [`check`]),
//! asked for on every purchase. Each check takes a turn in the store first
//! and only a wrong PIN counts toward the lock (`areas/pins.rs`). Neither the PIN nor the password is logged or echoed back.

use super::{Chrome, PageResult, Refused, render};
use crate::DashboardState;
use crate::care::{public_url, too_often};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use billpay_domain::transaction_pin::{LOCK, MAX_FAILURES, TransactionPin};
use billpay_domain::{AccountId, KeyId};
use billpay_store::clock::rfc3339;
use billpay_store::issue::{issue_pin_reset, shop_key};
use billpay_store::{PinTry, secret_right, secret_try};
use billpay_webkit::format::lagos_time;
use billpay_webkit::{CsrfForm, NoFields, Who};
use serde::Deserialize;
use std::time::Duration;

#[derive(Template)]
#[template(path = "buyer/shop_pin.html")]
struct PinPage {
    chrome: Chrome,
    has_pin: bool,
    error: Option<String>,
    saved: bool,
    /// A reset link was just emailed to this address.
    link_sent_to: Option<String>,
}

async fn pin_page(
    state: &DashboardState,
    signed_in: &SignedIn,
    error: Option<String>,
    saved: bool,
) -> PageResult {
    let status = match error {
        Some(_) => StatusCode::UNPROCESSABLE_ENTITY,
        None => StatusCode::OK,
    };
    pin_page_with(state, signed_in, status, error, saved, None).await
}

async fn pin_page_with(
    state: &DashboardState,
    signed_in: &SignedIn,
    status: StatusCode,
    error: Option<String>,
    saved: bool,
    link_sent_to: Option<String>,
) -> PageResult {
    let has_pin = state.store.transaction_pin(signed_in.user.id).await?;
    let page = render(&PinPage {
        chrome: Chrome::new(signed_in, "pin"),
        has_pin: has_pin.is_some(),
        error,
        saved,
        link_sent_to,
    });
    Ok((status, page).into_response())
}

pub async fn form(State(state): State<DashboardState>, signed_in: SignedIn) -> PageResult {
    pin_page(&state, &signed_in, None, false).await
}

/// "Forgot your PIN?": a single-use link (30 minutes) emailed to the
/// account's address, counted per address like a password reset.
pub async fn forgot(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    _: CsrfForm<NoFields>,
) -> PageResult {
    let account = &signed_in.user;
    // signed in: the request is the account's own, counted by its address
    if let Err(locked) = state
        .care
        .forms
        .admit(state.store.as_ref(), None, &account.email)
        .await?
    {
        let status = StatusCode::TOO_MANY_REQUESTS;
        let error = Some(too_often(locked));
        return pin_page_with(&state, &signed_in, status, error, false, None).await;
    }
    if state.store.transaction_pin(account.id).await?.is_none() {
        let error = Some("You have no PIN yet: set one below.".to_owned());
        return pin_page(&state, &signed_in, error, false).await;
    }
    issue_pin_reset(state.store.as_ref(), account, public_url(&state)).await?;
    let sent = Some(account.email.clone());
    pin_page_with(&state, &signed_in, StatusCode::OK, None, false, sent).await
}

#[derive(Deserialize)]
pub struct PinForm {
    password: String,
    pin: String,
    confirm: String,
}

/// Sets or changes the PIN: the password first (bounded and throttled as a
/// sign-in), then the new PIN twice.
pub async fn set(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<PinForm>,
) -> PageResult {
    let say = |message: &str| Some(message.to_owned());
    let Ok(pin) = TransactionPin::parse(&form.pin) else {
        return pin_page(
            &state,
            &signed_in,
            say("Your PIN must be exactly 4 digits."),
            false,
        )
        .await;
    };
    if form.pin.trim() != form.confirm.trim() {
        return pin_page(&state, &signed_in, say("The two PINs differ."), false).await;
    }
    // the password is checked within the account's one budget of secret
    // checks, the sign-in's (five wrong in 15 minutes lock both)
    let email = signed_in.user.email.clone();
    let who = Who::account(&email);
    let Ok(permit) = state.kit.passwords.permit().await else {
        let busy = say("Too busy just now: try again in a moment.");
        return pin_page(&state, &signed_in, busy, false).await;
    };
    if let Err(locked) = secret_try(state.store.as_ref(), who).await? {
        let message = format!(
            "Too many wrong passwords: try again in {} minutes.",
            locked.minutes()
        );
        return pin_page(&state, &signed_in, Some(message), false).await;
    }
    let stored = signed_in.user.password_hash.clone();
    if !permit.verify(stored, form.password).await {
        return pin_page(&state, &signed_in, say("Wrong password."), false).await;
    }
    secret_right(state.store.as_ref(), who).await?;
    let hash = tokio::task::spawn_blocking(move || pin.hash())
        .await
        .map_err(|e| crate::page::PageError::internal(&e))?
        .map_err(|e| crate::page::PageError::internal(&e))?;
    let account = signed_in.user.id;
    state
        .store
        .set_transaction_pin(account, hash, shop_key(account))
        .await?;
    pin_page(&state, &signed_in, None, true).await
}

#[derive(Deserialize)]
pub struct ChangeForm {
    current: String,
    pin: String,
    confirm: String,
}

/// Changes the PIN with the current one: the new PIN is checked first (so a
/// typo in it spends no try), then the current PIN is checked as a purchase's
/// is ([`check`]: a wrong one is one of the same five that lock purchases).
/// The shop's key is left as it is: a revoked one needs the password.
pub async fn change(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ChangeForm>,
) -> PageResult {
    let say = |message: &str| Some(message.to_owned());
    let Ok(pin) = TransactionPin::parse(&form.pin) else {
        let error = say("Your new PIN must be exactly 4 digits.");
        return pin_page(&state, &signed_in, error, false).await;
    };
    if form.pin.trim() != form.confirm.trim() {
        return pin_page(&state, &signed_in, say("The two new PINs differ."), false).await;
    }
    let account = signed_in.user.id;
    match check(&state, account, &form.current).await {
        Ok(_) => {}
        Err(Refused::Say(message) | Refused::Short(message)) => {
            return pin_page(&state, &signed_in, Some(message), false).await;
        }
        Err(Refused::Page(e)) => return Err(e),
    }
    let hash = tokio::task::spawn_blocking(move || pin.hash())
        .await
        .map_err(|e| crate::page::PageError::internal(&e))?
        .map_err(|e| crate::page::PageError::internal(&e))?;
    // the current PIN proves less than the password: the shop's key stays
    // as it is (a revoked one comes back only with a PIN set with the password)
    state.store.change_transaction_pin(account, hash).await?;
    pin_page(&state, &signed_in, None, true).await
}

/// Takes a turn for `given` for `account` and checks it; the account's shop
/// key when it is right. Right PINs sent at once wait a moment for a turn
/// ([`PinTry::Busy`]); they are never counted as wrong.
pub async fn check(
    state: &DashboardState,
    account: AccountId,
    given: &str,
) -> Result<KeyId, Refused> {
    let say = |message: String| Err(Refused::Say(message));
    let Ok(pin) = TransactionPin::parse(given) else {
        return say("Enter your 4-digit transaction PIN.".into());
    };
    let mut waited = Duration::ZERO;
    let (permit, pin_hash, shop_key) = loop {
        // a turn at the hash check first: a turn is taken only when it will be checked
        let Ok(permit) = state.kit.passwords.permit().await else {
            return say(TOO_BUSY.into());
        };
        match state.store.take_pin_try(account).await? {
            PinTry::NotSet => {
                return say("Set your transaction PIN first (Buy → Transaction PIN).".into());
            }
            PinTry::Locked { until_ms } => return say(locked(until_ms)),
            PinTry::Check { pin_hash, shop_key } => break (permit, pin_hash, shop_key),
            PinTry::Busy if waited < TURN_WAIT => {
                drop(permit);
                tokio::time::sleep(TURN_POLL).await;
                waited += TURN_POLL;
            }
            PinTry::Busy => return say(TOO_BUSY.into()),
        }
    };
    if permit.verify(Some(pin_hash), pin.expose().to_owned()).await {
        state.store.pin_matched(account).await?;
        return Ok(shop_key);
    }
    let failure = state.store.pin_failed(account).await?;
    let left = MAX_FAILURES.saturating_sub(failure.failures);
    let minutes = LOCK.as_secs() / 60;
    say(match left {
        0 => format!(
            "Wrong PIN. That was {MAX_FAILURES} wrong PINs in a row: purchases are locked for {minutes} minutes."
        ),
        1 => format!("Wrong PIN. One more wrong PIN locks purchases for {minutes} minutes."),
        n => {
            format!("Wrong PIN. {n} tries left before purchases are locked for {minutes} minutes.")
        }
    })
}

const TOO_BUSY: &str = "Too busy just now: try again in a moment.";
/// How long a PIN waits for a turn while other checks of the account are
/// under way, and how often it asks.
const TURN_WAIT: Duration = Duration::from_secs(10);
const TURN_POLL: Duration = Duration::from_millis(50);

fn locked(until_ms: i64) -> String {
    format!(
        "Too many wrong PINs: purchases are locked until {}. You can set a new PIN with your password, or reset a forgotten one by email.",
        lagos_time(&rfc3339(until_ms))
    )
}
