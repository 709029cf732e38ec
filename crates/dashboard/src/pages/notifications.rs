//! Notifications: which optional notices the customer gets, by email and by
//! SMS, the phone SMS goes to, and the low-balance mark. The mandatory ones
//! (verification, password and PIN resets) are not choices. SMS is offered
//! only when the server has an SMS channel; without one the page says so and
//! a save turns every SMS choice off (the phone is kept).

use super::{Chrome, PageResult, render};
use crate::DashboardState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect};
use billpay_domain::{Kobo, Phone};
use billpay_store::{NoticePreferences, NoticeTopic, TopicChoice};
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
#[template(path = "notifications.html")]
struct NotificationsPage {
    chrome: Chrome,
    email: String,
    topics: Vec<TopicRow>,
    phone: String,
    low_balance_below: String,
    saved: bool,
    error: Option<String>,
    /// The server sends SMS (else the page offers email only, saying why).
    sms: bool,
}

/// What a person reads about a topic.
fn describe(topic: NoticeTopic) -> (&'static str, &'static str) {
    match topic {
        NoticeTopic::Funding => ("Money received", "A bank transfer credited to your wallet."),
        NoticeTopic::Refund => (
            "Failed purchases",
            "A purchase that failed, and its refund.",
        ),
        NoticeTopic::Receipt => (
            "Tokens and pins",
            "The electricity token, e-pins or exam pins of a purchase.",
        ),
        NoticeTopic::LowBalance => ("Low balance", "Your balance went under the amount below."),
        NoticeTopic::Security => ("Security", "A new API key, or a webhook URL changed."),
    }
}

fn page_of(
    sms: bool,
    signed_in: &SignedIn,
    choices: &NoticePreferences,
    form: Option<&HashMap<String, String>>,
    saved: bool,
    error: Option<String>,
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
                email: choice.email,
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
    Ok(render(&NotificationsPage {
        chrome: Chrome::new(signed_in, "notifications"),
        email: signed_in.user.email.clone(),
        topics,
        phone: field("phone").unwrap_or(phone),
        low_balance_below: field("low_balance_below").unwrap_or(below),
        saved,
        error,
        sms,
    }))
}

#[derive(Deserialize, Default)]
pub struct Saved {
    #[serde(default)]
    saved: Option<String>,
}

pub async fn page(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(saved): Query<Saved>,
) -> PageResult {
    let choices = state.store.notice_preferences(signed_in.user.id).await?;
    let saved = saved.saved.is_some();
    page_of(state.sms, &signed_in, &choices, None, saved, None)
}

/// Saves every choice at once; a bad phone or amount changes nothing and
/// shows the form again as it was typed, saying what is wrong.
pub async fn save(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<HashMap<String, String>>,
) -> PageResult {
    let account = signed_in.user.id;
    // no SMS on this server: email choices only, the phone kept
    let chosen = if state.sms {
        choices_from(&form)
    } else {
        choices_from(&email_only(&form))
    };
    match chosen {
        Ok(mut choices) => {
            if !state.sms {
                let current = state.store.notice_preferences(account).await?;
                choices.phone = current.phone;
            }
            state.store.set_notice_preferences(account, choices).await?;
            Ok(Redirect::to("/dashboard/notifications?saved=1").into_response())
        }
        Err(error) => {
            let current = state.store.notice_preferences(account).await?;
            page_of(
                state.sms,
                &signed_in,
                &current,
                Some(&form),
                false,
                Some(error),
            )
        }
    }
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

fn choices_from(form: &HashMap<String, String>) -> Result<NoticePreferences, String> {
    let mut choices = NoticePreferences::default();
    for topic in NoticeTopic::ALL {
        choices.set_topic(topic, ticked(form, topic));
    }
    let typed = |name: &str| form.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    choices.phone = typed("phone")
        .map(|text| {
            Phone::parse(text)
                .map(|p| international(p.as_str()))
                .map_err(|_| {
                    "That phone number does not look Nigerian: type it as 0803 123 4567.".to_owned()
                })
        })
        .transpose()?;
    choices.low_balance_below = typed("low_balance_below")
        .map(|text| match Kobo::parse_typed_naira(text) {
            Ok(amount) if amount > Kobo::ZERO => Ok(amount),
            _ => Err("Type the low-balance amount in naira, such as 5,000.".to_owned()),
        })
        .transpose()?;
    let wants_sms = choices.topics.iter().any(|c| c.sms);
    if wants_sms && choices.phone.is_none() {
        return Err("Give a phone number to get notices by SMS.".into());
    }
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
        assert_eq!(choices.phone.as_deref(), Some("2348031234567"));
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
        assert!(!choices.topic(NoticeTopic::Security).email, "unticked");
        let err = choices_from(&form(&[("refund_sms", "on")])).unwrap_err();
        assert!(err.contains("phone"), "{err}");
        let err = choices_from(&form(&[("phone", "12")])).unwrap_err();
        assert!(err.contains("0803 123 4567"), "{err}");
        let err = choices_from(&form(&[("low_balance_below", "lots")])).unwrap_err();
        assert!(err.contains("naira"), "{err}");
        assert_eq!(local_phone("2348031234567"), "08031234567");
    }
}
