//! Notifications: which optional notices the customer gets, by email and by
//! SMS, the phone SMS goes to, and the low-balance mark. The mandatory ones
//! (verification, password and PIN resets) are not choices, nor are
//! security notices by email (a new API key, a webhook URL changed: a
//! borrowed session must not silence them); turning security notices by SMS
//! off asks for the password again. SMS goes only to a phone proven by a
//! code sent to it (`send_phone_code`, `enter_phone_code`; how often a code
//! may be sent is the notices' hourly bound, per number and per account, in
//! the database). SMS is offered only when the server has an SMS channel;
//! without one the page says so and a save turns every SMS choice off (the
//! phone is kept).

use super::account::current_password;
use crate::DashboardState;
use crate::page::{Chrome, PageResult, VERIFY_FIRST, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect};
use billpay_domain::{Kobo, Phone};
use billpay_store::issue::{EMAIL_CODE_TRIES, email_code_hash, new_phone_code};
use billpay_store::{NoticePreferences, NoticeTopic, PhoneCheck, TopicChoice};
use billpay_webkit::CsrfForm;
use billpay_webkit::format::naira;
use serde::Deserialize;
use std::collections::HashMap;

/// One row of the choices table.
pub struct TopicRow {
    pub name: &'static str,
    pub title: &'static str,
    pub about: &'static str,
    pub email: bool,
    pub sms: bool,
}

#[derive(Template)]
#[template(path = "care/notifications.html")]
struct NotificationsPage {
    chrome: Chrome,
    email: String,
    topics: Vec<TopicRow>,
    /// The proven phone SMS goes to (`0803…`), or empty.
    phone: String,
    /// A phone a code was sent to, waiting for it (`0803…`).
    pending_phone: Option<String>,
    low_balance_below: String,
    saved: bool,
    /// What was just done with a phone, said on the page.
    phone_notice: Option<&'static str>,
    error: Option<String>,
    /// The server sends SMS (else the page offers email only, saying why).
    sms: bool,
}

/// What a person reads about a topic.
fn describe(topic: NoticeTopic) -> (&'static str, &'static str) {
    match topic {
        NoticeTopic::Funding => ("Money received", "A bank transfer credited to your wallet."),
        NoticeTopic::Refund => (
            "Held or failed purchases",
            "A purchase held for review (and when it goes on), or one that failed, and its refund.",
        ),
        NoticeTopic::Receipt => (
            "Tokens and pins",
            "The electricity token, e-pins or exam pins of a purchase.",
        ),
        NoticeTopic::LowBalance => ("Low balance", "Your balance went under the amount below."),
        NoticeTopic::Security => ("Security", "A new API key, or a webhook URL changed."),
    }
}

/// What the page shows besides the choices.
#[derive(Default)]
struct Said {
    saved: bool,
    phone_notice: Option<&'static str>,
    error: Option<String>,
    pending_phone: Option<String>,
}

fn page_of(
    sms: bool,
    signed_in: &SignedIn,
    choices: &NoticePreferences,
    form: Option<&HashMap<String, String>>,
    said: Said,
) -> PageResult {
    let topics = NoticeTopic::ALL
        .into_iter()
        .map(|topic| {
            let (title, about) = describe(topic);
            let choice = match form {
                Some(form) => ticked(form, topic),
                None => choices.topic(topic),
            };
            TopicRow {
                name: topic.as_str(),
                title,
                about,
                email: choice.email || topic == NoticeTopic::Security,
                sms: sms && choice.sms,
            }
        })
        .collect();
    let field = |name: &str| form.and_then(|f| f.get(name)).cloned();
    let phone = choices
        .phone
        .as_deref()
        .map(local_phone)
        .unwrap_or_default();
    let below = choices.low_balance_below.map(naira).unwrap_or_default();
    let refused = said.error.is_some();
    let mut page = render(&NotificationsPage {
        chrome: Chrome::new(signed_in, "notifications"),
        email: signed_in.user.email.clone(),
        topics,
        phone,
        pending_phone: said.pending_phone.as_deref().map(local_phone),
        low_balance_below: field("low_balance_below").unwrap_or(below),
        saved: said.saved,
        phone_notice: said.phone_notice,
        error: said.error,
        sms,
    });
    if refused {
        *page.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(page)
}

/// The page as stored now, saying `said` (the pending phone read here).
async fn show(
    state: &DashboardState,
    signed_in: &SignedIn,
    form: Option<&HashMap<String, String>>,
    said: Said,
) -> PageResult {
    let account = signed_in.user.id;
    let choices = state.store.notice_preferences(account).await?;
    let pending_phone = state.store.pending_phone(account).await?;
    let said = Said {
        pending_phone,
        ..said
    };
    page_of(state.sms, signed_in, &choices, form, said)
}

fn refused(error: impl Into<String>) -> Said {
    Said {
        error: Some(error.into()),
        ..Said::default()
    }
}

#[derive(Deserialize, Default)]
pub struct Saved {
    #[serde(default)]
    saved: Option<String>,
    /// `sent`: a code went to the phone; `proven`: the phone is proven.
    #[serde(default)]
    phone: Option<String>,
}

pub async fn page(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(saved): Query<Saved>,
) -> PageResult {
    let phone_notice = match saved.phone.as_deref() {
        Some("sent") => Some("We sent a 6-digit code to that phone by SMS. Enter it below."),
        Some("proven") => Some("Your phone is proven: SMS notices you choose go to it."),
        _ => None,
    };
    let said = Said {
        saved: saved.saved.is_some(),
        phone_notice,
        ..Said::default()
    };
    show(&state, &signed_in, None, said).await
}

/// Saves every choice at once; a bad amount, SMS without a proven phone, or
/// security notices by SMS turned off without the password again changes
/// nothing and shows the form again as it was typed, saying what is wrong.
pub async fn save(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<HashMap<String, String>>,
) -> PageResult {
    let account = signed_in.user.id;
    // no SMS on this server: email choices only
    let chosen = if state.sms {
        choices_from(&form)
    } else {
        choices_from(&email_only(&form))
    };
    let current = state.store.notice_preferences(account).await?;
    let checked = chosen.and_then(|choices| {
        let wants_sms = choices.topics.iter().any(|c| c.sms);
        if wants_sms && current.phone.is_none() {
            return Err(
                "Prove a phone first to get notices by SMS: send a code to it below.".to_owned(),
            );
        }
        Ok(choices)
    });
    let choices = match checked {
        Ok(choices) => choices,
        Err(error) => return show(&state, &signed_in, Some(&form), refused(error)).await,
    };
    let security = NoticeTopic::Security;
    // (a server without SMS turns every SMS choice off: no SMS is sent there)
    if state.sms && current.topic(security).sms && !choices.topic(security).sms {
        let typed = form.get("current").map(String::as_str).unwrap_or_default();
        if let Err(message) = current_password(&state, &signed_in, typed).await? {
            let error =
                format!("To turn security notices by SMS off, type your password. {message}");
            return show(&state, &signed_in, Some(&form), refused(error)).await;
        }
    }
    state.store.set_notice_preferences(account, choices).await?;
    Ok(Redirect::to("/dashboard/notifications?saved=1").into_response())
}

#[derive(Deserialize)]
pub struct PhoneForm {
    #[serde(default)]
    phone: String,
}

/// Sends a code by SMS to the phone typed (the account verified, SMS
/// configured); the phone becomes the one SMS goes to only once its code is
/// entered. Codes are bounded per hour per number and per account
/// (`phone_verification`'s bound, counted in the database).
pub async fn send_phone_code(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<PhoneForm>,
) -> PageResult {
    if !signed_in.user.verified() {
        return show(&state, &signed_in, None, refused(VERIFY_FIRST)).await;
    }
    if !state.sms {
        let error = "Notices by SMS are not available here yet.";
        return show(&state, &signed_in, None, refused(error)).await;
    }
    let phone = match Phone::parse(form.phone.trim()) {
        Ok(phone) => international(phone.as_str()),
        Err(_) => {
            let error = "That phone number does not look Nigerian: type it as 0803 123 4567.";
            return show(&state, &signed_in, None, refused(error)).await;
        }
    };
    let (_, code) = new_phone_code();
    let sent = state
        .store
        .start_phone_proof(signed_in.user.id, &phone, code)
        .await?;
    if !sent {
        let error = "Too many codes were sent to that phone or for your account this hour. Try again later.";
        return show(&state, &signed_in, None, refused(error)).await;
    }
    Ok(Redirect::to("/dashboard/notifications?phone=sent").into_response())
}

#[derive(Deserialize)]
pub struct PhoneCodeForm {
    #[serde(default)]
    code: String,
}

/// One try of the code sent to the phone: right, and SMS goes to it.
pub async fn enter_phone_code(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<PhoneCodeForm>,
) -> PageResult {
    let hash = email_code_hash(&form.code);
    let checked = state
        .store
        .check_phone_code(signed_in.user.id, hash, EMAIL_CODE_TRIES)
        .await?;
    let error = match checked {
        PhoneCheck::Proven { .. } => {
            return Ok(Redirect::to("/dashboard/notifications?phone=proven").into_response());
        }
        PhoneCheck::Wrong { left } => {
            format!("That code is not right: {left} more tries, then ask for a new code.")
        }
        PhoneCheck::NoCode => "No code is waiting for this phone: send a new one.".to_owned(),
    };
    show(&state, &signed_in, None, refused(error)).await
}

/// The form without its SMS boxes and phone (a server without SMS).
fn email_only(form: &HashMap<String, String>) -> HashMap<String, String> {
    form.iter()
        .filter(|(name, _)| !name.ends_with("_sms") && name.as_str() != "phone")
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// A topic's boxes as ticked on the form (an unticked box is not sent).
fn ticked(form: &HashMap<String, String>, topic: NoticeTopic) -> TopicChoice {
    let on = |channel: &str| form.contains_key(&format!("{}_{channel}", topic.as_str()));
    TopicChoice {
        email: on("email"),
        sms: on("sms"),
    }
}

/// The choices as ticked (security notices by email always on); the phone
/// is not among them: it is set only by its proof.
fn choices_from(form: &HashMap<String, String>) -> Result<NoticePreferences, String> {
    let mut choices = NoticePreferences::default();
    for topic in NoticeTopic::ALL {
        choices.set_topic(topic, ticked(form, topic));
    }
    let security = choices.topic(NoticeTopic::Security);
    choices.set_topic(
        NoticeTopic::Security,
        TopicChoice {
            email: true,
            ..security
        },
    );
    let typed = |name: &str| form.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    choices.low_balance_below = typed("low_balance_below")
        .map(|text| match Kobo::parse_typed_naira(text) {
            Ok(amount) if amount > Kobo::ZERO => Ok(amount),
            _ => Err("Type the low-balance amount in naira, such as 5,000.".to_owned()),
        })
        .transpose()?;
    Ok(choices)
}

/// `08031234567` → `2348031234567`, the form SMS gateways take.
fn international(local: &str) -> String {
    format!("234{}", local.trim_start_matches('0'))
}

/// `2348031234567` → `08031234567`, as people type it.
fn local_phone(international: &str) -> String {
    international
        .strip_prefix("234")
        .map_or_else(|| international.to_owned(), |rest| format!("0{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_form_becomes_choices_or_says_what_is_wrong() {
        let choices = choices_from(&form(&[
            ("funding_email", "on"),
            ("refund_sms", "on"),
            ("phone", "0803 123 4567"),
            ("low_balance_below", "₦5,000"),
        ]))
        .unwrap();
        assert_eq!(choices.phone, None, "the phone is set only by its proof");
        assert_eq!(choices.low_balance_below, Some(Kobo(500_000)));
        assert_eq!(
            choices.topic(NoticeTopic::Funding),
            TopicChoice {
                email: true,
                sms: false
            }
        );
        assert_eq!(
            choices.topic(NoticeTopic::Refund),
            TopicChoice {
                email: false,
                sms: true
            }
        );
        assert!(
            choices.topic(NoticeTopic::Security).email,
            "security by email cannot be unticked"
        );
        let err = choices_from(&form(&[("low_balance_below", "lots")])).unwrap_err();
        assert!(err.contains("naira"), "{err}");
        assert_eq!(local_phone("2348031234567"), "08031234567");
    }
}
