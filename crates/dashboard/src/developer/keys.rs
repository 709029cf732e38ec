//! API keys: list, create (shown once; only for a verified account, with
//! the password asked again), suspend, reactivate, revoke. The
//! shop's key (the one the account's browser purchases are placed under) is
//! listed for its webhooks but cannot be suspended or revoked here: the shop
//! would stop buying, and nobody can sign a request with it anyway (its
//! secret was never kept).

use super::Developer;
use crate::DashboardState;
use crate::care::account::current_password;
use crate::format::short_time;
use crate::page::{Chrome, PageResult, VERIFY_FIRST, bad_request, not_found, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use billpay_domain::KeyId;
use billpay_store::issue::issue_api_key;
use billpay_store::{ApiKey, KeyChange, KeyStatus};
use billpay_webkit::CsrfForm;
use serde::Deserialize;

pub struct KeyRow {
    pub id: String,
    pub name: String,
    pub prefix: String,
    pub status: &'static str,
    pub created: String,
    pub last_used: String,
    pub webhook: String,
    /// The shop's key: no suspend or revoke.
    pub shop: bool,
}

impl From<&ApiKey> for KeyRow {
    fn from(k: &ApiKey) -> Self {
        KeyRow {
            id: k.id.to_string(),
            name: k.name.clone().unwrap_or_else(|| "(unnamed)".into()),
            prefix: format!("{}…", k.display_prefix),
            status: k.status.as_str(),
            created: short_time(&k.created_at),
            last_used: k
                .last_used_at
                .as_deref()
                .map(short_time)
                .unwrap_or_else(|| "never".into()),
            webhook: k.webhook_url.clone().unwrap_or_default(),
            shop: false,
        }
    }
}

#[derive(Template)]
#[template(path = "developer/keys.html")]
struct KeysPage {
    chrome: Chrome,
    keys: Vec<KeyRow>,
    /// A key created just now: shown this once.
    new_key: Option<String>,
    /// Why a key was not created.
    error: Option<String>,
}

#[derive(Deserialize)]
pub struct CreateForm {
    #[serde(default)]
    name: String,
    /// The account's password, asked again: a session alone makes no key.
    #[serde(default)]
    current: String,
}

#[derive(Deserialize)]
pub struct StatusForm {
    action: String,
}

async fn keys_page(
    state: &DashboardState,
    signed_in: &SignedIn,
    new_key: Option<String>,
    error: Option<String>,
) -> PageResult {
    let keys = state.store.api_keys(signed_in.user.id).await?;
    let shop_key = shop_key(state, signed_in).await?;
    let row = |k: &ApiKey| KeyRow {
        shop: Some(k.id) == shop_key,
        ..KeyRow::from(k)
    };
    let refused = error.is_some();
    let mut page = render(&KeysPage {
        chrome: Chrome::new(signed_in, "keys"),
        keys: keys.iter().map(row).collect(),
        new_key,
        error,
    });
    if refused {
        *page.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(page)
}

/// The key the account's shop purchases are placed under, once it has a PIN.
async fn shop_key(
    state: &DashboardState,
    signed_in: &SignedIn,
) -> Result<Option<KeyId>, crate::page::PageError> {
    let pin = state.store.transaction_pin(signed_in.user.id).await?;
    Ok(pin.map(|p| p.shop_key))
}

/// Said when the shop's key is asked to change status.
pub const SHOP_KEY_KEPT: &str = "This is the shop's key: your purchases in the browser are placed under it, so it cannot be suspended or revoked. Nobody can call the API with it.";

pub async fn list(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
) -> PageResult {
    keys_page(&state, &signed_in, None, None).await
}

pub async fn create(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
    CsrfForm(form): CsrfForm<CreateForm>,
) -> PageResult {
    let refuse = |message: String| keys_page(&state, &signed_in, None, Some(message));
    if !signed_in.user.verified() {
        return refuse(VERIFY_FIRST.into()).await;
    }
    let name = form.name.trim();
    if name.chars().count() > 60 {
        return refuse("Key names are at most 60 characters.".into()).await;
    }
    if let Err(message) = current_password(&state, &signed_in, &form.current).await? {
        return refuse(message).await;
    }
    let name = (!name.is_empty()).then(|| name.to_owned());
    let issued = issue_api_key(state.store.as_ref(), signed_in.user.id, name).await?;
    keys_page(&state, &signed_in, Some(issued.secret), None).await
}

/// The key, if it belongs to the signed-in account.
pub async fn own_key(
    state: &DashboardState,
    signed_in: &SignedIn,
    key_id: &str,
) -> Result<ApiKey, crate::page::PageError> {
    let Ok(id) = key_id.parse::<KeyId>() else {
        return Err(not_found());
    };
    match state.store.api_key(id).await? {
        Some(key) if key.account_id == signed_in.user.id => Ok(key),
        _ => Err(not_found()),
    }
}

pub async fn set_status(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
    Path(key_id): Path<String>,
    CsrfForm(form): CsrfForm<StatusForm>,
) -> PageResult {
    let key = own_key(&state, &signed_in, &key_id).await?;
    let status = match form.action.as_str() {
        "suspend" => KeyStatus::Suspended,
        "reactivate" => KeyStatus::Active,
        "revoke" => KeyStatus::Revoked,
        _ => return Err(bad_request("Unknown action.")),
    };
    if key.status == KeyStatus::Revoked {
        return Err(bad_request("A revoked key cannot be changed."));
    }
    if shop_key(&state, &signed_in).await? == Some(key.id) {
        return Err(bad_request(SHOP_KEY_KEPT));
    }
    state
        .store
        .update_api_key(key.id, KeyChange::Status(status))
        .await?;
    Ok(Redirect::to("/dashboard/keys").into_response())
}
