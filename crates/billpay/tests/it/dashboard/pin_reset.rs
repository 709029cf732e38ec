//! A forgotten transaction PIN (issue 31: "reset by email link plus
//! password"), through the real server and the test kit's SMTP sink: the
//! PIN page emails a single-use link; the link's page refuses a wrong
//! password, then sets the new PIN with the right one, which ends the lock
//! five wrong PINs set; the link works once; the throttle bounds the emails.

use super::shop::{PIN, http_shopper, post_airtime, shopper};
use super::*;
use crate::support::smtp_sink::{SmtpSink, SunkMessage};
use std::time::Duration;

const NEW_PIN: &str = "1357";

/// A server whose email goes to `sink`.
pub(crate) async fn server_mailing(sink: &SmtpSink, more: &[(&str, &str)]) -> TestServer {
    let sink_env = sink.env();
    let mut env: Vec<(&str, &str)> = sink_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.extend_from_slice(more);
    TestServer::spawn_with_env(Options::default(), &env).await
}

/// The messages to `to` whose subject has `subject`, once `count` came.
pub(crate) async fn mail_to(
    sink: &SmtpSink,
    to: &str,
    subject: &str,
    count: usize,
) -> Vec<SunkMessage> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found: Vec<SunkMessage> = sink
            .messages()
            .into_iter()
            .filter(|m| m.to.iter().any(|t| t.eq_ignore_ascii_case(to)))
            .filter(|m| subject_has(m, subject))
            .collect();
        if found.len() >= count {
            return found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{count} emails {subject:?} to {to} never came: {:?}",
            sink.messages()
                .iter()
                .map(|m| m.header("Subject"))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether the (possibly RFC 2047-encoded) subject has `words`.
fn subject_has(message: &SunkMessage, words: &str) -> bool {
    let subject = message.header("Subject").unwrap_or("");
    subject.contains(words) || decoded_subject(subject).contains(words)
}

/// `=?utf-8?b?…?=` words decoded (lettre encodes a non-ASCII subject).
fn decoded_subject(subject: &str) -> String {
    use base64::Engine;
    subject
        .split_whitespace()
        .map(|word| {
            let inner = word
                .strip_prefix("=?utf-8?b?")
                .or_else(|| word.strip_prefix("=?UTF-8?B?"))
                .and_then(|w| w.strip_suffix("?="));
            match inner {
                Some(b64) => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .unwrap_or_default();
                    String::from_utf8_lossy(&bytes).into_owned()
                }
                None => word.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("")
}

/// The path of the first link in the email's text that contains `path`.
pub(crate) fn link_in(message: &SunkMessage, path: &str) -> String {
    let text = message.text.as_deref().unwrap();
    let link = text
        .split_whitespace()
        .find(|w| w.starts_with("http") && w.contains(path))
        .unwrap_or_else(|| panic!("no {path} link in {text}"));
    let at = link.find("/dashboard/").unwrap();
    link[at..].to_owned()
}

/// Posts an open form back to the page at `path` it is on.
pub(crate) async fn open_form(
    server: &TestServer,
    path: &str,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    post_open_form(server, path, path, fields).await
}

/// Asks for a PIN link on the PIN page (signed in as `session`).
async fn forgot_pin(server: &TestServer, (cookie, csrf): &(String, String)) -> reqwest::Response {
    no_redirects()
        .post(server.url("/dashboard/pin/forgot"))
        .header("Cookie", cookie)
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_pin_is_reset_by_the_emailed_link_and_the_password() {
    let sink = SmtpSink::start().await;
    let business = [
        ("BILLPAY_BUSINESS_NAME", "Ada Data"),
        ("BILLPAY_SUPPORT_CONTACT", "help@ada.example"),
    ];
    let server = server_mailing(&sink, &business).await;
    let (account, api_key, email) = shopper(&server, "2000");
    let session = http_shopper(&server, &email).await;
    // five wrong PINs lock purchases
    for n in 0..5 {
        let answer = post_airtime(&server, &session, &format!("web-wrong-{n}"), "9999").await;
        assert_eq!(answer.status(), 422);
    }
    let locked = post_airtime(&server, &session, "web-locked", PIN).await;
    assert!(
        locked
            .text()
            .await
            .unwrap()
            .contains("purchases are locked until")
    );

    // "Forgot your PIN?" on the PIN page
    let page = no_redirects()
        .get(server.url("/dashboard/pin"))
        .header("Cookie", &session.0)
        .send()
        .await
        .unwrap();
    assert!(page.text().await.unwrap().contains("id=\"email-pin-link\""));
    let asked = forgot_pin(&server, &session).await;
    assert_eq!(asked.status(), 200);
    let said = asked.text().await.unwrap();
    assert!(said.contains("We emailed a link to"), "{said}");
    let mail = mail_to(&sink, &email, "transaction PIN", 1).await;
    assert_eq!(mail.len(), 1);
    let text = mail[0].text.clone().unwrap();
    assert!(
        text.contains("Ada Data") && text.contains("help@ada.example"),
        "{text}"
    );
    assert!(!text.contains(PIN) && !text.contains(PASSWORD), "{text}");
    assert!(mail[0].html.is_some(), "an HTML part too");
    let link = link_in(&mail[0], "/dashboard/pin/reset/");
    // a PIN link is no password link
    let token = link.rsplit('/').next().unwrap();
    let as_password = no_redirects()
        .get(server.url(&format!("/dashboard/reset/{token}")))
        .send()
        .await
        .unwrap();
    assert_eq!(as_password.status(), 410);

    // the link's page: a wrong password changes nothing
    let shown = no_redirects().get(server.url(&link)).send().await.unwrap();
    assert_eq!(shown.status(), 200);
    assert_eq!(shown.headers()["referrer-policy"], "no-referrer");
    let wrong = [
        ("password", "not my password"),
        ("pin", NEW_PIN),
        ("confirm", NEW_PIN),
    ];
    let refused = open_form(&server, &link, &wrong).await;
    assert_eq!(refused.status(), 422);
    assert!(refused.text().await.unwrap().contains("Wrong password."));
    let still = post_airtime(&server, &session, "web-still-locked", PIN).await;
    assert!(
        still
            .text()
            .await
            .unwrap()
            .contains("purchases are locked until")
    );

    // the right password sets the new PIN and ends the lock
    let right = [
        ("password", PASSWORD),
        ("pin", NEW_PIN),
        ("confirm", NEW_PIN),
    ];
    let done = open_form(&server, &link, &right).await;
    assert_eq!(done.status(), 200);
    assert!(done.text().await.unwrap().contains("Your new PIN is set"));
    let old_pin = post_airtime(&server, &session, "web-old-pin", PIN).await;
    assert!(old_pin.text().await.unwrap().contains("Wrong PIN"));
    let bought = post_airtime(&server, &session, "web-new-pin", NEW_PIN).await;
    assert_eq!(bought.status(), 303, "bought with the new PIN");
    let code = bought.headers()["location"]
        .to_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    server.wait_final(&api_key, &code).await;

    // once only
    let again = no_redirects().get(server.url(&link)).send().await.unwrap();
    assert_eq!(again.status(), 410, "the link works once");
    server.assert_ledger_consistent(&account);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pin_links_asked_for_too_often_are_refused() {
    let sink = SmtpSink::start().await;
    let server = server_mailing(&sink, &[]).await;
    let (_, _, email) = shopper(&server, "10");
    let session = http_shopper(&server, &email).await;
    let mut statuses = Vec::new();
    for _ in 0..8 {
        statuses.push(forgot_pin(&server, &session).await.status().as_u16());
    }
    let sent = statuses.iter().filter(|s| **s == 200).count();
    // five per address in 15 minutes (the open forms' bound)
    assert_eq!(sent, 5, "{statuses:?}");
    assert!(statuses[5..].iter().all(|s| *s == 429), "{statuses:?}");
    // only those answered 200 were emailed
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mail = mail_to(&sink, &email, "transaction PIN", sent).await;
    assert_eq!(mail.len(), sent, "{statuses:?}");
}
