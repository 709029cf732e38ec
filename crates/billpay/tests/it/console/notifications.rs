//! Operators' alerts and the console's Notifications page through the real
//! binary: the fake VTpass's float under the low-balance level puts one
//! alert per operator in the outbox however often the check runs (every
//! second here), the daily summary goes to owners only; in Chromium a
//! support operator finds a queued notice, resends it (logged), and turns
//! an alert off on "My account", where the owners-only summary is not offered.

use super::money::{admin, page};
use super::*;
use crate::dashboard::browser::Browser;
use serde_json::json;
use std::time::{Duration, Instant};

/// The rows of the Notifications page (as `cookie`) at `query`.
async fn rows(server: &TestServer, cookie: &str, query: &str) -> Vec<String> {
    let (status, _, html) = page(server, cookie, &format!("/admin/notifications{query}")).await;
    assert_eq!(status, 200, "{html}");
    html.split("<tr data-id=")
        .skip(1)
        .map(str::to_owned)
        .collect()
}

/// The page's rows once at least `count` match `query`.
async fn wait_rows(server: &TestServer, cookie: &str, query: &str, count: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = rows(server, cookie, query).await;
        if found.len() >= count || Instant::now() > deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_float_alerts_each_operator_once_and_the_summary_goes_to_owners() {
    let fake = crate::support::vtpass::FakeVtpass::start().await;
    let env = [
        ("BILLPAY_SUPPLIER_LOW_BALANCE", "300000"), // the fake holds ₦250,000
        ("BILLPAY_ALERT_INTERVAL_SECS", "1"),
        ("BILLPAY_DAILY_SUMMARY_HOUR", "0"),
    ];
    let server = crate::vtpass::server_with(&fake, &env).await;
    add_operators(&server);
    let owner = admin(&server, OWNER).await;

    let floats = wait_rows(&server, &owner, "?channel=email", 3).await;
    // Several checks later, still one per operator.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let all = rows(&server, &owner, "").await;
    let of = |kind: &str| -> Vec<&String> { all.iter().filter(|r| r.contains(kind)).collect() };
    let low = of("data-kind=\"operator_float_low\"");
    assert_eq!(low.len(), 2, "one per operator: {floats:?}");
    assert!(low.iter().any(|r| r.contains(OWNER)) && low.iter().any(|r| r.contains(SUPPORT)));
    let summary = of("data-kind=\"operator_daily_summary\"");
    assert_eq!(summary.len(), 1, "{all:?}");
    assert!(summary[0].contains(OWNER), "owners only");
    assert!(rows(&server, &owner, "?channel=sms").await.is_empty());
    assert!(rows(&server, &owner, "?status=failed").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn support_resends_a_notice_and_chooses_their_alerts_in_a_browser() {
    let env = [
        ("BILLPAY_SANDBOX_UNREACHABLE", "true"),
        ("BILLPAY_NEEDS_REVIEW_AFTER_SECS", "0"),
        ("BILLPAY_ALERT_REVIEW_COUNT", "0"),
        ("BILLPAY_ALERT_INTERVAL_SECS", "1"),
        ("BILLPAY_DAILY_SUMMARY_HOUR", "23"),
    ];
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    add_operators(&server);
    let customer = server.customer("5000");
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 100, "reference": reference()});
    server
        .place(&customer.api_key, "/v1/airtime/purchase", body)
        .await;
    let cookie = admin(&server, SUPPORT).await;
    // queued or already sent by the notice worker: any status; the two
    // operators' notices are added one after the other (and the customer's
    // new-key notice is listed too), so wait for both
    let deadline = Instant::now() + Duration::from_secs(20);
    let queued = loop {
        let queued = rows(&server, &cookie, "").await;
        let of_backlog = queued
            .iter()
            .filter(|r| r.contains("data-kind=\"operator_backlog\""))
            .count();
        if of_backlog >= 2 || Instant::now() > deadline {
            break queued;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let backlog: Vec<&String> = queued
        .iter()
        .filter(|r| r.contains("data-kind=\"operator_backlog\""))
        .collect();
    assert_eq!(backlog.len(), 2, "one per operator: {queued:?}");
    // `"NT…" data-status=…`: the row's id.
    let id = backlog[0].split('"').nth(1).unwrap().to_owned();

    let browser = Browser::start().await;
    let b = &browser;
    super::journey::sign_in(b, &server, SUPPORT).await;
    b.click("a[href='/admin/notifications']").await;
    assert_eq!(b.path().await, "/admin/notifications");
    b.screenshot("console-notifications").await;
    super::journey::accept_confirms(b).await;
    b.click(&format!("#notices tr[data-id='{id}'] .resend button"))
        .await;
    assert!(b.text("#done").await.contains("notice queued again"));
    let log = server.cli(&["operator", "log", "--subject", &id]);
    let entry = &log["entries"][0];
    assert_eq!(entry["action"], "notice.resend");
    assert_eq!(entry["operator_email"], SUPPORT);

    // My account: the alerts of support's role, one turned off and kept off.
    b.client.goto(&server.url("/admin/account")).await.unwrap();
    let alerts = b.text("#alerts").await;
    assert!(alerts.contains("float is below"), "{alerts}");
    assert!(!alerts.contains("daily summary"), "owners only: {alerts}");
    // A checkbox loads no page: clicked as an element, not with `b.click`.
    let untick = b.css("#alert-choices input[name='operator_backlog']").await;
    untick.click().await.unwrap();
    b.click("#alert-choices button").await;
    assert!(b.text("#done").await.contains("your alerts are saved"));
    let backlog = b.css("#alert-choices input[name='operator_backlog']").await;
    assert_eq!(
        backlog.prop("checked").await.unwrap().as_deref(),
        Some("false")
    );
    let float = b
        .css("#alert-choices input[name='operator_float_low']")
        .await;
    assert_eq!(
        float.prop("checked").await.unwrap().as_deref(),
        Some("true")
    );
    browser.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_who_gives_a_phone_gets_alerts_by_sms_too() {
    use super::money::post_form;
    use crate::dashboard::csrf_in;
    use crate::support::termii::FakeTermii;
    let termii = FakeTermii::start().await;
    let termii_env = termii.env();
    let mut env: Vec<(&str, &str)> = termii_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.extend([
        ("BILLPAY_SANDBOX_UNREACHABLE", "true"),
        ("BILLPAY_NEEDS_REVIEW_AFTER_SECS", "0"),
        ("BILLPAY_ALERT_REVIEW_COUNT", "0"),
        ("BILLPAY_ALERT_INTERVAL_SECS", "1"),
        ("BILLPAY_DAILY_SUMMARY_HOUR", "23"),
        ("BILLPAY_BUSINESS_NAME", "Ada Data"),
    ]);
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    add_operators(&server);
    let owner = admin(&server, OWNER).await;
    let (_, _, html) = page(&server, &owner, "/admin/account").await;
    let csrf = csrf_in(&html);
    assert!(
        html.contains("id=\"by-email\" checked"),
        "email is on by default"
    );

    // SMS without a phone is refused beside the field, and nothing is kept
    let no_phone = [
        ("csrf", csrf.as_str()),
        ("by_email", "on"),
        ("by_sms", "on"),
    ];
    let (status, html) =
        post_form(&server, &owner, "/admin/account/alert-channels", &no_phone).await;
    assert_eq!(status, 400, "{html}");
    assert!(html.contains("id=\"alert-phone-error\""), "{html}");
    let bad = [
        ("csrf", csrf.as_str()),
        ("by_sms", "on"),
        ("phone", "12345"),
    ];
    let (status, html) = post_form(&server, &owner, "/admin/account/alert-channels", &bad).await;
    assert_eq!(status, 400);
    assert!(
        html.contains("value=\"12345\""),
        "what was typed is kept: {html}"
    );
    let sms = [
        ("csrf", csrf.as_str()),
        ("by_email", "on"),
        ("by_sms", "on"),
        ("phone", "0803 123 4567"),
    ];
    let (status, _) = post_form(&server, &owner, "/admin/account/alert-channels", &sms).await;
    assert_eq!(status, 303);
    let (_, _, html) = page(&server, &owner, "/admin/account").await;
    assert!(html.contains("value=\"08031234567\""), "{html}");
    assert!(html.contains("id=\"by-sms\" checked"), "{html}");

    // a purchase stuck in processing: the backlog alert, by SMS to the owner only
    let customer = server.customer("5000");
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 100, "reference": reference()});
    server
        .place(&customer.api_key, "/v1/airtime/purchase", body)
        .await;
    termii.wait_for(1, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_secs(3)).await; // later checks add nothing
    let sent: Vec<_> = termii
        .requests()
        .into_iter()
        .filter(|r| r["sms"].as_str().is_some_and(|t| t.contains("piling up")))
        .collect();
    assert_eq!(sent.len(), 1, "one SMS this hour: {sent:?}");
    assert_eq!(sent[0]["to"], "2348031234567");
    let text = sent[0]["sms"].as_str().unwrap();
    assert!(
        text.starts_with("Ada Data: Purchases are piling up"),
        "{text}"
    );
    // and still by email, to both operators
    let all = rows(&server, &owner, "").await;
    let backlog: Vec<&String> = all
        .iter()
        .filter(|r| r.contains("data-kind=\"operator_backlog\""))
        .collect();
    assert_eq!(backlog.len(), 3, "two emails and one SMS: {backlog:?}");
}

/// "My account" offers alerts by SMS only when the server has an SMS
/// channel, as the customer dashboard does: with Termii configured an owner
/// chooses SMS and gives a phone; the same database served without one
/// says SMS is not available and has no SMS box or phone, and a save there
/// (an SMS box sent by hand too) turns SMS off and keeps the phone; served
/// with Termii again, the phone is there and SMS is off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sms_alerts_are_offered_only_when_the_server_has_an_sms_channel() {
    use super::money::post_form;
    use crate::dashboard::csrf_in;
    use crate::support::termii::FakeTermii;
    let termii = FakeTermii::start().await;
    let termii_env = termii.env();
    let with_sms: Vec<(&str, &str)> = termii_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut server = TestServer::spawn_with_env(Options::default(), &with_sms).await;
    add_operators(&server);
    let owner = admin(&server, OWNER).await;
    let (_, _, html) = page(&server, &owner, "/admin/account").await;
    assert!(html.contains("id=\"by-sms\"") && html.contains("id=\"alert-phone\""));
    assert!(!html.contains("id=\"no-sms\""), "{html}");
    let csrf = csrf_in(&html);
    let sms = [
        ("csrf", csrf.as_str()),
        ("by_email", "on"),
        ("by_sms", "on"),
        ("phone", "0803 123 4567"),
    ];
    let (status, _) = post_form(&server, &owner, "/admin/account/alert-channels", &sms).await;
    assert_eq!(status, 303);

    // the same database, no SMS channel
    server.kill();
    server.set_env(&[]);
    server.start();
    let owner = admin(&server, OWNER).await;
    let (_, _, html) = page(&server, &owner, "/admin/account").await;
    assert!(html.contains("id=\"no-sms\""), "the page says why: {html}");
    assert!(!html.contains("id=\"by-sms\""), "no SMS box");
    assert!(!html.contains("id=\"alert-phone\""), "no phone to give");
    assert!(html.contains("id=\"by-email\" checked"));
    let csrf = csrf_in(&html);
    let by_hand = [
        ("csrf", csrf.as_str()),
        ("by_email", "on"),
        ("by_sms", "on"),
        ("phone", "0809 999 9999"),
    ];
    let (status, html) =
        post_form(&server, &owner, "/admin/account/alert-channels", &by_hand).await;
    assert_eq!(status, 303, "{html}");

    // Termii again: the phone kept as it was, SMS off
    server.kill();
    server.set_env(&with_sms);
    server.start();
    let owner = admin(&server, OWNER).await;
    let (_, _, html) = page(&server, &owner, "/admin/account").await;
    assert!(
        html.contains("value=\"08031234567\""),
        "the phone kept: {html}"
    );
    assert!(html.contains("id=\"by-sms\""), "SMS offered again");
    assert!(
        !html.contains("id=\"by-sms\" checked"),
        "SMS is off: {html}"
    );
    assert!(html.contains("id=\"by-email\" checked"));
}
