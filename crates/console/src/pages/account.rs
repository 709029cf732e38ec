//! "My account": any signed-in operator changes their own password (the
//! current one required; their other sessions end, this browser gets a new
//! one) and turns TOTP on (the secret shown once, enabled only after a code
//! from it) or off (with a code), and chooses their alerts and how they come
//! (by SMS only when the server has an SMS channel: without one the page
//! says so and a save turns SMS off, the phone kept). The rules are
//! `billpay_operations::operators`' and `notices`'.

use super::{Chrome, Done, Notice, PageError, PageResult, actor, done, refused, render};
use crate::ConsoleState;
use crate::form::Refill;
use crate::session::{SCOPE, SignedIn};
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, header};
use axum::response::IntoResponse;
use billpay_domain::keys::random_hex;
use billpay_operations::notices;
use billpay_operations::operators::{self, TotpCodes, TotpOffer};
use billpay_store::AlertChannels;
use billpay_store::issue::session_token_hash;
use billpay_webkit::{CsrfForm, NoFields, is_https};
use billpay_worker::alerts::AlertKind;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Template)]
#[template(path = "account.html")]
struct AccountPage {
    chrome: Chrome,
    totp: bool,
    /// A TOTP secret just offered: shown on this answer only.
    offer: Option<TotpOffer>,
    /// The alerts of the operator's role, each on or off.
    alerts: Vec<(AlertKind, bool)>,
    /// How they go: email, SMS, the phone.
    channels: AlertChannels,
    /// The server sends SMS (else the page offers email only, saying why).
    sms: bool,
    /// The alert channels' form, refused: the message and what was typed.
    refill: Refill,
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    account_page(&state, &signed_in, &done, None).await
}

async fn account_page(
    state: &ConsoleState,
    signed_in: &SignedIn,
    done: &Done,
    offer: Option<TotpOffer>,
) -> PageResult {
    account_page_with(state, signed_in, done, offer, Refill::none()).await
}

async fn account_page_with(
    state: &ConsoleState,
    signed_in: &SignedIn,
    done: &Done,
    offer: Option<TotpOffer>,
    refill: Refill,
) -> PageResult {
    let me = state.store.operator(signed_in.user.id).await?;
    let (store, who) = (state.store.as_ref(), actor(signed_in));
    let alerts = notices::alert_choices(store, &who).await.map_err(refused)?;
    let channels = notices::alert_channels(store, &who)
        .await
        .map_err(refused)?;
    Ok(render(&AccountPage {
        chrome: Chrome::new(signed_in, "account", done),
        totp: me.is_some_and(|o| o.totp_enabled()),
        offer,
        alerts,
        channels,
        sms: state.sms,
        refill,
    }))
}

#[derive(Deserialize)]
pub struct PasswordForm {
    current_password: String,
    new_password: String,
    confirm_password: String,
}

/// Every session of the operator ends with the change; this browser is
/// signed in again with a fresh session, the others are out.
pub async fn set_password(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<PasswordForm>,
) -> PageResult {
    if form.new_password != form.confirm_password {
        return Err(PageError::bad_request(
            "the new password and its confirmation differ",
        ));
    }
    // argon2 twice: bounded like a sign-in's check.
    let _permit = state.kit.passwords.permit().await.map_err(|_| {
        PageError::status(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "too many password checks at once: try again",
        )
    })?;
    let me = actor(&signed_in);
    let store = state.store.as_ref();
    let (current, new) = (&form.current_password, &form.new_password);
    operators::change_own_password(store, &me, current, new)
        .await
        .map_err(refused)?;
    let token = random_hex(32);
    let expires_at_ms = billpay_store::clock::now_ms() + SCOPE.lifetime.as_millis() as i64;
    store
        .create_operator_session(
            &session_token_hash(&token),
            signed_in.user.id,
            expires_at_ms,
        )
        .await?;
    let mut response = done("/admin/account", Notice::PasswordChanged);
    let cookie = SCOPE.set_cookie(
        SCOPE.session_cookie,
        &token,
        SCOPE.lifetime,
        is_https(&headers),
    );
    response.headers_mut().append(header::SET_COOKIE, cookie);
    Ok(response)
}

/// A new secret, shown on this answer (never in a URL) with the form that
/// confirms it; nothing changes until then.
pub async fn offer_totp(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    _: CsrfForm<NoFields>,
) -> PageResult {
    let store = state.store.as_ref();
    let offer = operators::offer_totp(store, &actor(&signed_in), &state.secrets)
        .await
        .map_err(refused)?;
    account_page(&state, &signed_in, &Done::default(), Some(offer)).await
}

#[derive(Deserialize)]
pub struct ConfirmTotpForm {
    sealed: String,
    code: String,
    /// A code of the secret being replaced, when TOTP is on.
    #[serde(default)]
    current_code: Option<String>,
}

pub async fn confirm_totp(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ConfirmTotpForm>,
) -> PageResult {
    let store = state.store.as_ref();
    let me = actor(&signed_in);
    let codes = TotpCodes {
        new: &form.code,
        current: form.current_code.as_deref(),
    };
    operators::confirm_totp(store, &me, &form.sealed, codes, &state.secrets)
        .await
        .map_err(refused)?;
    Ok(done("/admin/account", Notice::TotpOn))
}

#[derive(Deserialize)]
pub struct CodeForm {
    code: String,
}

pub async fn disable_totp(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<CodeForm>,
) -> PageResult {
    let store = state.store.as_ref();
    let me = actor(&signed_in);
    operators::disable_own_totp(store, &me, &form.code, &state.secrets)
        .await
        .map_err(refused)?;
    Ok(done("/admin/account", Notice::TotpOff))
}

/// The alerts ticked stay on, the others go off (a checkbox left unticked
/// is not sent: the form's fields are read as a map).
pub async fn set_alerts(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<HashMap<String, String>>,
) -> PageResult {
    let on: Vec<&str> = form.keys().map(String::as_str).collect();
    notices::set_alert_choices(state.store.as_ref(), &actor(&signed_in), &on)
        .await
        .map_err(refused)?;
    Ok(done("/admin/account", Notice::AlertsSaved))
}

#[derive(Deserialize)]
pub struct ChannelsForm {
    #[serde(default)]
    phone: String,
    /// A ticked box is sent (`on`), an unticked one is not.
    #[serde(default)]
    by_email: Option<String>,
    #[serde(default)]
    by_sms: Option<String>,
}

/// By email, by SMS (to the phone given here), or both.
pub async fn set_alert_channels(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ChannelsForm>,
) -> PageResult {
    let (store, who) = (state.store.as_ref(), actor(&signed_in));
    let by_email = form.by_email.is_some();
    // no SMS on this server: by email only, the phone kept as it was
    let (by_sms, phone) = match state.sms {
        true => (form.by_sms.is_some(), form.phone.clone()),
        false => {
            let current = notices::alert_channels(store, &who)
                .await
                .map_err(refused)?;
            (false, current.phone.unwrap_or_default())
        }
    };
    let saved = notices::set_alert_channels(store, &who, &phone, by_email, by_sms);
    let Err(error) = saved.await else {
        return Ok(done("/admin/account", Notice::AlertChannelsSaved));
    };
    let values = vec![("phone", form.phone)];
    let (status, refill) = Refill::refused("alert-channels", error, values)?;
    let done = Done::default();
    let page = account_page_with(&state, &signed_in, &done, None, refill).await?;
    Ok((status, page).into_response())
}
