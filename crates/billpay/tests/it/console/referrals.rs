//! Referrals run from the console (issue 49), through the real binary with
//! the fake Monnify and the kit's SMTP sink: the owner sets a commission,
//! a first-funding bonus and the least move on the Prices page (support
//! sees them, without the forms, and is refused the POSTs); a referee's
//! first bank transfer pays the referrer the bonus once, their purchase
//! the commission, and each is emailed; the move to the wallet is emailed;
//! the Reports page shows the referrer and their cost; the owner voids the
//! referral from the customer's page with a reason, logged, and it earns
//! nothing more.

use super::*;
use crate::dashboard::csrf_in;
use crate::dashboard::pin_reset::mail_to;
use crate::dashboard::sign_up::OPEN;
use crate::funding::gateways::Setup;
use crate::referrals::{email, signed_up};
use crate::support::smtp_sink::SmtpSink;
use billpay_api_testkit::kind::kobo;
use money::{admin, page, post_form};
use serde_json::json;

/// Posts `fields` with the CSRF proof of `on` (a page `cookie` may see).
async fn submit(
    server: &TestServer,
    cookie: &str,
    on: &str,
    action: &str,
    fields: &[(&str, &str)],
) -> (u16, String) {
    let (_, _, html) = page(server, cookie, on).await;
    let proof = csrf_in(&html);
    let mut fields = fields.to_vec();
    fields.push(("csrf", &proof));
    post_form(server, cookie, action, &fields).await
}

async fn bonus_balance(server: &TestServer, who: &Customer) -> i64 {
    let mine = server.get(&who.api_key, "/v1/referrals").await;
    kobo(&mine.assert_ok()["bonus_balance"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_runs_referrals_from_the_console_and_every_bonus_is_paid_once_and_told() {
    let sink = SmtpSink::start().await;
    let sink_env = sink.env();
    let mut env: Vec<(&str, &str)> = sink_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.extend_from_slice(&OPEN);
    let setup = Setup::start(&env).await;
    let server = &setup.server;
    add_operators(server);
    let owner = admin(server, OWNER).await;
    let support = admin(server, SUPPORT).await;

    // support sees the settings but has no forms, and is refused the POSTs
    let (status, _, html) = page(server, &support, "/admin/prices").await;
    assert_eq!(status, 200);
    assert!(html.contains("id=\"no-referral-rates\""), "off by default");
    assert!(html.contains("id=\"referral-settings-shown\""), "{html}");
    assert!(
        !html.contains("id=\"referral-rate\""),
        "no form for support"
    );
    let rate = [("product", "airtime"), ("percent", "2"), ("days", "")];
    let (status, _) = submit(
        server,
        &support,
        "/admin/prices",
        "/admin/prices/referrals",
        &rate,
    )
    .await;
    assert_eq!(status, 403);

    // the owner: a bad percent is refused beside its field, then set
    let bad = [("product", "airtime"), ("percent", "2.5.1"), ("days", "")];
    let (status, refusal) = submit(
        server,
        &owner,
        "/admin/prices",
        "/admin/prices/referrals",
        &bad,
    )
    .await;
    assert_eq!(status, 400, "{refusal}");
    assert!(refusal.contains("value=\"2.5.1\""), "drawn again as typed");
    let (status, _) = submit(
        server,
        &owner,
        "/admin/prices",
        "/admin/prices/referrals",
        &rate,
    )
    .await;
    assert_eq!(status, 303);
    let settings = [("first_funding_bonus", "100"), ("min_withdrawal", "50")];
    let (status, _) = submit(
        server,
        &owner,
        "/admin/prices",
        "/admin/prices/referral-settings",
        &settings,
    )
    .await;
    assert_eq!(status, 303);
    let (_, _, html) = page(server, &owner, "/admin/prices").await;
    assert!(html.contains("data-referral-rate=\"airtime\""), "{html}");
    assert!(html.contains("value=\"100.00\"") && html.contains("value=\"50.00\""));
    let shown = server.cli(&["referrals", "show"]);
    assert_eq!(shown["rates"][0]["percent"], 2.0, "{shown}");
    let log = server.cli(&["operator", "log", "--subject", "referrals"]);
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries[0]["action"], "referrals.settings", "{log}");
    assert_eq!(entries[0]["operator_email"], OWNER);

    // A refers B; B's first bank transfer pays A ₦100 once, the second nothing
    let a_email = email();
    let (a, _) = signed_up(server, "/dashboard/signup", &a_email, "08031120001", "0").await;
    let code = server.get(&a.api_key, "/v1/referrals").await.assert_ok()["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let link = format!("/dashboard/signup?ref={code}");
    let (b, _) = signed_up(server, &link, &email(), "08031120002", "0").await;
    let fake = &setup.fakes[0];
    let reserved = setup.reserve(fake, &b.account_id);
    let number = reserved["accounts"][0]["account_number"]
        .as_str()
        .unwrap()
        .to_owned();
    for naira in [5_000.0, 2_000.0] {
        let transfer = fake.transfer(Some(&b.account_id), Some(&number), naira);
        let (status, answer) = setup.post_webhook(fake, fake.webhook(&transfer)).await;
        assert_eq!(status, 200, "{answer}");
    }
    assert_eq!(server.balance(&b.api_key).await, 7_000.0);
    assert_eq!(bonus_balance(server, &a).await, 10_000, "₦100 once");
    let mail = mail_to(&sink, &a_email, "referral bonus on", 1).await;
    assert!(mail[0].text.as_deref().unwrap().contains("₦100.00"));

    // B buys ₦1,000 of airtime: 2 % is ₦20.00, emailed
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 1000, "reference": reference()});
    let bought = server.place(&b.api_key, "/v1/airtime/purchase", body).await;
    assert_eq!(
        server.wait_final(&b.api_key, &bought).await["status"],
        "successful"
    );
    assert_eq!(bonus_balance(server, &a).await, 12_000);
    let mail = mail_to(&sink, &a_email, "referral bonus on", 2).await;
    assert_eq!(mail.len(), 2, "one email for each bonus");
    assert!(mail[1].text.as_deref().unwrap().contains("₦20.00"));

    // A moves ₦120 to the wallet: emailed once, the wallet credited once
    let move_body = json!({"amount": 120, "reference": reference()});
    let moved = server
        .post(&a.api_key, "/v1/referrals/withdraw", move_body.clone())
        .await;
    assert_eq!(moved.assert_ok()["repeated"], false);
    let again = server
        .post(&a.api_key, "/v1/referrals/withdraw", move_body)
        .await;
    assert_eq!(again.assert_ok()["repeated"], true);
    assert_eq!(server.balance(&a.api_key).await, 120.0);
    let mail = mail_to(&sink, &a_email, "referral bonus moved", 1).await;
    assert!(mail[0].text.as_deref().unwrap().contains("₦120.00"));

    // the report: A, one referee, ₦120.00 of cost
    let (status, _, html) = page(server, &owner, "/admin/reports").await;
    assert_eq!(status, 200);
    let referrers = html.split("id=\"referrers\"").nth(1).unwrap();
    assert!(referrers.contains(&a_email), "{referrers}");
    assert!(referrers.contains("₦120.00"), "{referrers}");

    // the owner voids B's referral from B's page, with a reason; support cannot
    let b_page = format!("/admin/customers/{}", b.account_id);
    let (_, _, html) = page(server, &owner, &b_page).await;
    assert!(html.contains("id=\"void-referral\""), "{html}");
    let void = format!("{b_page}/referral/void");
    let reason = [("reason", "same household")];
    let (status, _) = submit(server, &support, &b_page, &void, &reason).await;
    assert_eq!(status, 403);
    let (status, refusal) = submit(server, &owner, &b_page, &void, &[("reason", "")]).await;
    assert_eq!(status, 400, "a reason is required: {refusal}");
    let (status, _) = submit(server, &owner, &b_page, &void, &reason).await;
    assert_eq!(status, 303);
    let (_, _, html) = page(server, &owner, &b_page).await;
    assert!(!html.contains("id=\"void-referral\""), "voided once");
    let log = server.cli(&["operator", "log", "--subject", &b.account_id]);
    let voided = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "referrals.void")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(voided["reason"], "same household");
    let body = json!({"provider_id": "mtn", "phone": "08031234568", "amount": 1000, "reference": reference()});
    let bought = server.place(&b.api_key, "/v1/airtime/purchase", body).await;
    server.wait_final(&b.api_key, &bought).await;
    assert_eq!(bonus_balance(server, &a).await, 0, "nothing more earned");
    let (passed, audit) = server.audit();
    assert!(passed, "{audit}");
}
