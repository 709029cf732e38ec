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
    let low = of("<td>operator_float_low</td>");
    assert_eq!(low.len(), 2, "one per operator: {floats:?}");
    assert!(low.iter().any(|r| r.contains(OWNER)) && low.iter().any(|r| r.contains(SUPPORT)));
    let summary = of("<td>operator_daily_summary</td>");
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
    // queued or already sent by the notice worker: any status
    let queued = wait_rows(&server, &cookie, "", 2).await;
    let backlog: Vec<&String> = queued
        .iter()
        .filter(|r| r.contains("<td>operator_backlog</td>"))
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
