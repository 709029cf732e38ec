//! Hardening findings 1 and 3, over HTTP against the real binary: a
//! stranger cannot make billpay send mail or SMS (an unverified account is
//! sent nothing but its code; SMS only to a proven phone; every notice
//! bounded per hour, the excess counted in `/metrics`; no text the customer
//! typed quoted), and a session alone cannot quietly take the wallet (a key,
//! a webhook URL and security notices by SMS turned off ask for the password
//! again; security notices by email cannot be turned off; the shop's own
//! key is not announced).

use super::{emails, wait_emails};
use crate::dashboard::shop::http_shopper;
use crate::dashboard::sign_up::{OPEN, notices_to, text_rows};
use crate::dashboard::{
    PASSWORD, account_with_password, csrf_in, html_of, no_redirects, post_open_form, sign_in,
};
use crate::support::termii::FakeTermii;
use crate::support::*;
use std::time::Duration;

/// A signed-in session: (cookie, CSRF proof of `page`).
async fn session(server: &TestServer, email: &str, page: &str) -> (String, String) {
    let cookie = sign_in(server, email, PASSWORD).await.unwrap();
    let csrf = csrf_in(&html_of(server, &cookie, page).await);
    (cookie, csrf)
}

/// Posts `form` (with the session's CSRF proof) to `path`: (status, page).
async fn post(
    server: &TestServer,
    session: &(String, String),
    path: &str,
    form: &[(&str, &str)],
) -> (u16, String) {
    let mut form = form.to_vec();
    form.push(("csrf", session.1.as_str()));
    let answer = no_redirects()
        .post(server.url(path))
        .header("Cookie", &session.0)
        .form(&form)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.text().await.unwrap())
}

/// The kinds of the notices queued for `recipient`, oldest first.
async fn kinds_to(server: &TestServer, recipient: &str) -> Vec<String> {
    let notices = notices_to(server, recipient).await;
    notices.into_iter().map(|(kind, _)| kind).collect()
}

fn count(kinds: &[String], kind: &str) -> usize {
    kinds.iter().filter(|k| *k == kind).count()
}

/// The SMS-enabled server's environment, from the fake Termii.
fn with_sms(termii: &FakeTermii) -> Vec<(&'static str, String)> {
    termii.env()
}

async fn spawn_with(env: &[(&'static str, String)], more: &[(&str, &str)]) -> TestServer {
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend_from_slice(more);
    TestServer::spawn_with_env(Options::default(), &all).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unverified_sign_up_makes_no_key_and_is_sent_nothing_but_its_code() {
    let termii = FakeTermii::start().await;
    let server = spawn_with(&with_sms(&termii), &OPEN).await;
    let email = format!("stranger-{}@example.com", rand_suffix());
    let fields = [
        ("name", "Win N1,000,000: call 0700-1234"),
        ("email", email.as_str()),
        ("phone", "0803 123 4567"),
        ("password", PASSWORD),
        ("password_again", PASSWORD),
    ];
    let signed_up = post_open_form(&server, "/dashboard/login", "/dashboard/signup", &fields).await;
    assert!(signed_up.status().is_success() || signed_up.status().is_redirection());
    // never verified, it signs in with the password it chose
    let session = session(&server, &email, "/dashboard/keys").await;
    // a buyer turns developer access on (the password asked again) to reach the keys
    let developer = [("access", "on"), ("current", PASSWORD)];
    let (status, page) = post(
        &server,
        &session,
        "/dashboard/account/developer",
        &developer,
    )
    .await;
    assert_eq!(status, 303, "{page}");

    let (status, page) = post(
        &server,
        &session,
        "/dashboard/keys",
        &[("name", "Win N1,000,000"), ("current", PASSWORD)],
    )
    .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("Verify your email address first"), "{page}");
    assert!(page.contains("No keys yet"), "no key was made: {page}");

    let (status, page) = post(
        &server,
        &session,
        "/dashboard/notifications/phone",
        &[("phone", "0803 123 4567")],
    )
    .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("Verify your email address first"), "{page}");

    // a key made for it anyway (the operator's CLI) is not announced to it
    let sql = "SELECT id FROM accounts WHERE email = $1";
    let account = text_rows(&server, sql, &email).await[0][0].clone().unwrap();
    server.cli(&["key", "create", "--account", &account]);

    assert_eq!(kinds_to(&server, &email).await, ["email_verification"]);
    assert!(kinds_to(&server, "2348031234567").await.is_empty());
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(termii.requests().is_empty(), "{:?}", termii.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_and_a_webhook_url_ask_for_the_password_again_and_the_notice_quotes_no_name() {
    let server = TestServer::spawn().await;
    let mail = server.mail_dir();
    let email = format!("keys-{}@example.com", rand_suffix());
    account_with_password(&server, &email, "1000");
    let session = session(&server, &email, "/dashboard/keys").await;
    let name = "Win N1,000,000: call 0700-1234";
    for typed in [None, Some("not the password")] {
        let mut form = vec![("name", name)];
        form.extend(typed.map(|p| ("current", p)));
        let (status, page) = post(&server, &session, "/dashboard/keys", &form).await;
        assert_eq!(status, 422, "{page}");
        assert!(page.contains("password is not right"), "{page}");
        assert!(page.contains("No keys yet"), "no key: {page}");
    }
    assert!(kinds_to(&server, &email).await.is_empty());

    let form = [("name", name), ("current", PASSWORD)];
    let (status, page) = post(&server, &session, "/dashboard/keys", &form).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("id=\"new-key\""), "{page}");
    let at = page.find("data-key=\"").unwrap() + 10;
    let key_id = &page[at..at + page[at..].find('"').unwrap()];
    let told = wait_emails(&mail, "API key", 1, Duration::from_secs(20)).await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(!told[0].text.contains("Win N1"), "{}", told[0].text);
    assert!(!told[0].text.contains("0700-1234"), "{}", told[0].text);
    assert!(
        told[0].text.contains("bp_live_"),
        "the prefix: {}",
        told[0].text
    );

    // a webhook URL: the password again too, and the notice quotes no URL
    let hook = format!("/dashboard/keys/{key_id}/webhook-url");
    let url = "https://win-a-million.example/call-0700";
    for typed in [None, Some("not the password")] {
        let mut form = vec![("url", url)];
        form.extend(typed.map(|p| ("current", p)));
        let (status, page) = post(&server, &session, &hook, &form).await;
        assert_eq!(status, 422, "{page}");
        assert!(page.contains("password is not right"), "{page}");
    }
    let sql = "SELECT COALESCE(webhook_url, '') FROM api_keys WHERE id = $1";
    let stored = text_rows(&server, sql, key_id).await;
    assert_eq!(stored[0][0].as_deref(), Some(""), "the URL did not change");
    assert_eq!(
        count(&kinds_to(&server, &email).await, "webhook_url_changed"),
        0
    );
    let (status, page) = post(
        &server,
        &session,
        &hook,
        &[("url", url), ("current", PASSWORD)],
    )
    .await;
    assert_eq!(status, 303, "{page}");
    let told = wait_emails(&mail, "webhook URL", 1, Duration::from_secs(20)).await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(!told[0].text.contains("win-a-million"), "{}", told[0].text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn security_notices_by_email_cannot_be_turned_off() {
    let server = TestServer::spawn().await;
    let email = format!("quiet-{}@example.com", rand_suffix());
    let account = account_with_password(&server, &email, "1000");
    let session = session(&server, &email, "/dashboard/notifications").await;
    // every box unticked: the security email stays on
    let (status, page) = post(&server, &session, "/dashboard/notifications", &[]).await;
    assert_eq!(status, 303, "{page}");
    let page = html_of(&server, &session.0, "/dashboard/notifications").await;
    assert!(page.contains("id=\"security_email\""), "{page}");
    server.cli(&["key", "create", "--account", &account]);
    assert_eq!(kinds_to(&server, &email).await, ["api_key_created"]);
    // the others were turned off
    server.cli(&[
        "wallet",
        "credit",
        "--account",
        &account,
        "--amount",
        "5",
        "--reference",
        &format!("more-{}", rand_suffix()),
    ]);
    assert_eq!(kinds_to(&server, &email).await, ["api_key_created"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sms_goes_only_to_a_phone_proven_by_its_code_and_codes_are_bounded() {
    let termii = FakeTermii::start().await;
    let server = spawn_with(&with_sms(&termii), &[]).await;
    let email = format!("phone-{}@example.com", rand_suffix());
    let account = account_with_password(&server, &email, "1000");
    let phone = "2348031234567";
    let session = session(&server, &email, "/dashboard/notifications").await;

    // SMS chosen with a phone typed into the choices: refused, nothing sent
    let choices = [
        ("security_sms", "on"),
        ("refund_sms", "on"),
        ("phone", "0803 123 4567"),
    ];
    let (status, page) = post(&server, &session, "/dashboard/notifications", &choices).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("Prove a phone first"), "{page}");
    server.cli(&["key", "create", "--account", &account]);
    assert!(kinds_to(&server, phone).await.is_empty());

    // a code to the phone; a wrong one is refused; the right one proves it
    let send = [("phone", "0803 123 4567")];
    let (status, page) = post(&server, &session, "/dashboard/notifications/phone", &send).await;
    assert_eq!(status, 303, "{page}");
    let sent = termii.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(sent[0]["to"], phone, "{sent:?}");
    let notices = notices_to(&server, phone).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].0, "phone_verification");
    let code = notices[0].1["code"].as_str().unwrap().to_owned();
    let wrong = if code == "123456" { "654321" } else { "123456" };
    let at = "/dashboard/notifications/phone/code";
    let (status, page) = post(&server, &session, at, &[("code", wrong)]).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("not right"), "{page}");
    let (status, page) = post(&server, &session, at, &[("code", &code)]).await;
    assert_eq!(status, 303, "{page}");
    let page = html_of(&server, &session.0, "/dashboard/notifications").await;
    assert!(page.contains("08031234567"), "the proven phone: {page}");

    // now SMS can be chosen, and a new key is told by SMS too
    let (status, page) = post(&server, &session, "/dashboard/notifications", &choices).await;
    assert_eq!(status, 303, "{page}");
    server.cli(&["key", "create", "--account", &account]);
    let sent = termii.wait_for(2, Duration::from_secs(20)).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(
        sent[1]["sms"].as_str().unwrap().contains("API key"),
        "{sent:?}"
    );

    // security by SMS turned off: only with the password again
    let off = [("refund_sms", "on")];
    let (status, page) = post(&server, &session, "/dashboard/notifications", &off).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("password"), "{page}");
    let off = [("refund_sms", "on"), ("current", PASSWORD)];
    let (status, page) = post(&server, &session, "/dashboard/notifications", &off).await;
    assert_eq!(status, 303, "{page}");

    // codes to one number are bounded per hour (3), counted in the database
    for _ in 0..2 {
        let (status, page) = post(&server, &session, "/dashboard/notifications/phone", &send).await;
        assert_eq!(status, 303, "{page}");
    }
    let (status, page) = post(&server, &session, "/dashboard/notifications/phone", &send).await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("Too many codes"), "{page}");
    let kinds = kinds_to(&server, phone).await;
    assert_eq!(count(&kinds, "phone_verification"), 3, "{kinds:?}");
    // … whichever account asks: another account, the same number
    let other = format!("phone2-{}@example.com", rand_suffix());
    account_with_password(&server, &other, "1000");
    let second = self::session(&server, &other, "/dashboard/notifications").await;
    let (status, page) = post(&server, &second, "/dashboard/notifications/phone", &send).await;
    assert_eq!(status, 422, "{page}");
    let kinds = kinds_to(&server, phone).await;
    assert_eq!(count(&kinds, "phone_verification"), 3, "{kinds:?}");
}

/// `billpay_notices_dropped_total` for `kind`, summed over channels.
async fn dropped(server: &TestServer, kind: &str) -> f64 {
    server
        .metric_sum("billpay_notices_dropped_total", "kind", kind)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_keys_in_an_hour_are_told_five_times_and_the_rest_counted_dropped() {
    let server = TestServer::spawn().await;
    let email = format!("loop-{}@example.com", rand_suffix());
    account_with_password(&server, &email, "1000");
    let session = session(&server, &email, "/dashboard/keys").await;
    for i in 0..20 {
        let name = format!("key {i}");
        let form = [("name", name.as_str()), ("current", PASSWORD)];
        let (status, page) = post(&server, &session, "/dashboard/keys", &form).await;
        assert_eq!(status, 200, "{page}");
    }
    let kinds = kinds_to(&server, &email).await;
    assert_eq!(count(&kinds, "api_key_created"), 5, "{kinds:?}");
    assert_eq!(dropped(&server, "api_key_created").await, 15.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_pin_does_not_announce_the_shops_own_key() {
    let server = TestServer::spawn().await;
    let mail = server.mail_dir();
    let email = format!("pin-{}@example.com", rand_suffix());
    let account = account_with_password(&server, &email, "1000");
    http_shopper(&server, &email).await;
    let sql = "SELECT name FROM api_keys WHERE account_id = $1";
    let keys = text_rows(&server, sql, &account).await;
    assert_eq!(keys.len(), 1, "the shop's key: {keys:?}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        count(&kinds_to(&server, &email).await, "api_key_created"),
        0
    );
    assert!(emails(&mail, "API key").is_empty());
}
