//! Webhooks of one key: URL, signature verification (secret shown once), opt-in
//! retries, a signed test event, and the delivery log with resend.

use super::Developer;
use super::keys::{KeyRow, own_key};
use crate::DashboardState;
use crate::care::account::current_password;
use crate::format::short_time;
use crate::page::{Chrome, PageError, PageResult, VERIFY_FIRST, bad_request, not_found, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect};
use billpay_domain::KeyId;
use billpay_store::issue::issue_webhook_secret;
use billpay_store::{ApiKey, EventFilter, EventSubject, KeyChange};
use billpay_webhooks::{DeliveryRequest, WebhookPayload, validate_url};
use billpay_webkit::filters::url_encode;
use billpay_webkit::{CsrfForm, NoFields};
use serde::Deserialize;

pub struct AttemptRow {
    pub at: String,
    pub event: String,
    /// What it is about (a purchase's reference code or a batch's
    /// reference) and that page's link.
    pub subject: String,
    pub link: String,
    pub event_id: String,
    pub event_status: &'static str,
    pub outcome: String,
    pub ok: bool,
    pub latency_ms: u64,
}

/// The answer of the receiver to a test event, shown on the page.
pub struct TestResult {
    pub ok: bool,
    pub summary: String,
    pub excerpt: String,
}

#[derive(Template)]
#[template(path = "developer/webhooks.html")]
struct WebhooksPage {
    chrome: Chrome,
    key: KeyRow,
    signing: bool,
    retries: bool,
    new_secret: Option<String>,
    test_result: Option<TestResult>,
    error: Option<String>,
    notice: Option<&'static str>,
    attempts: Vec<AttemptRow>,
}

#[derive(Default)]
struct Extras {
    new_secret: Option<String>,
    test_result: Option<TestResult>,
    error: Option<String>,
    notice: Option<&'static str>,
}

/// What a change just did, named in the redirect after it (`?done=…`) and
/// said on the page it lands on.
#[derive(Deserialize, Default)]
pub struct Done {
    #[serde(default)]
    done: String,
}

impl Done {
    fn notice(&self) -> Option<&'static str> {
        Some(match self.done.as_str() {
            "url-saved" => "Webhook URL saved. Send a test event to check it.",
            "url-removed" => "Webhook URL removed: no webhooks are sent for this key.",
            "retries-on" => "Retries turned on.",
            "retries-off" => "Retries turned off.",
            "signing-off" => "Signature verification turned off.",
            "resent" => "The webhook is queued to be sent again.",
            _ => return None,
        })
    }
}

/// Back to the key's webhooks page, saying what was `done`.
fn done(key: KeyId, done: &str) -> axum::response::Response {
    Redirect::to(&format!("/dashboard/keys/{key}/webhooks?done={done}")).into_response()
}

async fn webhooks_page(
    state: &DashboardState,
    signed_in: &SignedIn,
    key: &ApiKey,
    extras: Extras,
) -> PageResult {
    let events = state
        .store
        .events(EventFilter {
            account_id: Some(signed_in.user.id),
            key_id: Some(key.id),
            limit: 50,
            ..EventFilter::default()
        })
        .await?;
    // newest first, by the stored time (the shown one does not sort)
    let mut attempts = Vec::new();
    for event in &events {
        for a in state.store.attempts(&event.id).await? {
            attempts.push((event, a));
        }
    }
    attempts.sort_by(|(_, a), (_, b)| b.created_at.cmp(&a.created_at));
    let attempts = attempts
        .into_iter()
        .map(|(event, a)| {
            let ok = a.http_status.is_some_and(|s| (200..300).contains(&s));
            let (subject, link) = match event.subject() {
                EventSubject::Purchase(code) => {
                    let link = format!("/dashboard/transactions/{code}");
                    (code, link)
                }
                EventSubject::Batch { reference, .. } => {
                    let link = format!("/dashboard/bulk/{}", url_encode(&reference));
                    (reference, link)
                }
            };
            let outcome = match (&a.error, a.http_status) {
                (Some(e), _) => e.clone(),
                (None, Some(s)) => format!("HTTP {s}"),
                (None, None) => "—".into(),
            };
            AttemptRow {
                at: short_time(&a.created_at),
                event: event.event.clone(),
                subject,
                link,
                event_id: event.id.clone(),
                event_status: event.status.as_str(),
                outcome,
                ok,
                latency_ms: a.latency_ms,
            }
        })
        .collect();
    Ok(render(&WebhooksPage {
        chrome: Chrome::new(signed_in, "webhooks"),
        key: KeyRow::from(key),
        signing: key.webhook_secret_sealed.is_some(),
        retries: key.webhook_retries,
        new_secret: extras.new_secret,
        test_result: extras.test_result,
        error: extras.error,
        notice: extras.notice,
        attempts,
    }))
}

#[derive(Template)]
#[template(path = "developer/webhooks_index.html")]
struct IndexPage {
    chrome: Chrome,
    keys: Vec<KeyRow>,
}

/// `/dashboard/webhooks`: each key and where its webhooks go, a link to
/// each key's own webhooks page (a webhook belongs to the key whose
/// purchases it reports).
pub async fn index(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
) -> PageResult {
    let keys = state.store.api_keys(signed_in.user.id).await?;
    Ok(render(&IndexPage {
        chrome: Chrome::new(&signed_in, "webhooks"),
        keys: keys
            .iter()
            .filter(|k| k.status != billpay_store::KeyStatus::Revoked)
            .map(KeyRow::from)
            .collect(),
    }))
}

pub async fn page(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
    Path(key_id): Path<String>,
    Query(done): Query<Done>,
) -> PageResult {
    let key = own_key(&state, &signed_in, &key_id).await?;
    let extras = Extras {
        notice: done.notice(),
        ..Extras::default()
    };
    webhooks_page(&state, &signed_in, &key, extras).await
}

#[derive(Deserialize)]
pub struct UrlForm {
    #[serde(default)]
    url: String,
    /// The account's password, asked again: a session alone moves no webhook.
    #[serde(default)]
    current: String,
}

pub async fn set_url(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
    Path(key_id): Path<String>,
    CsrfForm(form): CsrfForm<UrlForm>,
) -> PageResult {
    let key = own_key(&state, &signed_in, &key_id).await?;
    let url = form.url.trim();
    let checked = if !signed_in.user.verified() {
        Err(VERIFY_FIRST.to_owned())
    } else if url.is_empty() {
        Ok(())
    } else {
        validate_url(url).map_err(|e| e.to_string())
    };
    let checked = match checked {
        Ok(()) => current_password(&state, &signed_in, &form.current).await?,
        refused => refused,
    };
    if let Err(error) = checked {
        let extras = Extras {
            error: Some(error),
            ..Extras::default()
        };
        let mut page = webhooks_page(&state, &signed_in, &key, extras).await?;
        *page.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
        return Ok(page);
    }
    let change = KeyChange::WebhookUrl((!url.is_empty()).then(|| url.to_owned()));
    state.store.update_api_key(key.id, change).await?;
    let saved = if url.is_empty() {
        "url-removed"
    } else {
        "url-saved"
    };
    Ok(done(key.id, saved))
}

#[derive(Deserialize)]
pub struct ToggleForm {
    action: String,
}

impl ToggleForm {
    fn enable(&self) -> Result<bool, crate::page::PageError> {
        match self.action.as_str() {
            "enable" => Ok(true),
            "disable" => Ok(false),
            _ => Err(bad_request("Unknown action.")),
        }
    }
}

/// Turning verification on makes a new secret, shown once on this response.
pub async fn set_security(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
    Path(key_id): Path<String>,
    CsrfForm(form): CsrfForm<ToggleForm>,
) -> PageResult {
    let key = own_key(&state, &signed_in, &key_id).await?;
    if !form.enable()? {
        state
            .store
            .update_api_key(key.id, KeyChange::WebhookSecretSealed(None))
            .await?;
        return Ok(done(key.id, "signing-off"));
    }
    let issued = issue_webhook_secret(state.store.as_ref(), key.id, &state.secrets).await?;
    let (key, secret) = (issued.record, issued.secret);
    webhooks_page(
        &state,
        &signed_in,
        &key,
        Extras {
            new_secret: Some(secret),
            ..Extras::default()
        },
    )
    .await
}

pub async fn set_retries(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
    Path(key_id): Path<String>,
    CsrfForm(form): CsrfForm<ToggleForm>,
) -> PageResult {
    let key = own_key(&state, &signed_in, &key_id).await?;
    let enable = form.enable()?;
    state
        .store
        .update_api_key(key.id, KeyChange::WebhookRetries(enable))
        .await?;
    Ok(done(
        key.id,
        if enable { "retries-on" } else { "retries-off" },
    ))
}

/// POSTs a signed sample payload (as a real event would be) and shows the answer.
pub async fn send_test(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
    Path(key_id): Path<String>,
    _: CsrfForm<NoFields>,
) -> PageResult {
    let key = own_key(&state, &signed_in, &key_id).await?;
    let Some(url) = key.webhook_url.clone() else {
        let error = Some("Set a webhook URL first.".to_owned());
        return webhooks_page(
            &state,
            &signed_in,
            &key,
            Extras {
                error,
                ..Extras::default()
            },
        )
        .await;
    };
    let secret = state
        .secrets
        .open_optional(key.webhook_secret_sealed.as_deref())
        .map_err(|e| PageError::internal(&e))?;
    let reference_code = format!("TEST{}", billpay_store::clock::now_ms());
    let body =
        WebhookPayload::test_event(reference_code, billpay_store::clock::now_rfc3339()).to_json();
    let outcome = state
        .webhooks
        .deliver(&DeliveryRequest {
            url: &url,
            body: body.as_bytes(),
            secret: secret.as_deref(),
        })
        .await;
    let summary = match (&outcome.error, outcome.http_status) {
        (Some(e), _) => format!("{e} ({} ms)", outcome.latency_ms),
        (None, Some(s)) => format!(
            "HTTP {s} in {} ms{}",
            outcome.latency_ms,
            if secret.is_some() {
                ", signed"
            } else {
                ", unsigned"
            }
        ),
        (None, None) => "no answer".into(),
    };
    let test_result = Some(TestResult {
        ok: outcome.delivered,
        summary,
        excerpt: outcome.response_excerpt,
    });
    webhooks_page(
        &state,
        &signed_in,
        &key,
        Extras {
            test_result,
            ..Extras::default()
        },
    )
    .await
}

pub async fn resend(
    State(state): State<DashboardState>,
    Developer(signed_in): Developer,
    Path(event_id): Path<String>,
    _: CsrfForm<NoFields>,
) -> PageResult {
    let event = state.store.event(&event_id).await?;
    let Some(event) = event.filter(|e| e.account_id == signed_in.user.id && e.id == event_id)
    else {
        return Err(not_found());
    };
    match state.store.requeue_event(&event.id).await {
        Ok(()) => {}
        Err(e @ billpay_store::StoreError::DeliveryInProgress) => {
            return Err(bad_request(&e.to_string()));
        }
        Err(e) => return Err(e.into()),
    }
    Ok(done(event.key_id, "resent"))
}
