//! The rest of an operator's day over HTTP, without the CLI: an owner
//! reserves a customer's virtual accounts at the fake Monnify, reconciles a
//! payment whose webhook was lost (credited once), and any operator runs
//! the money audit. Support is refused the owner's forms.

use super::money::{admin, page, post_form};
use super::*;
use crate::dashboard::csrf_in;
use crate::funding::gateways::Setup;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_reserves_a_customers_accounts_once_from_their_page() {
    let setup = Setup::start(&[]).await;
    let server = &setup.server;
    add_operators(server);
    let monnify = &setup.fakes[0];
    let customer = server.customer("0");
    let path = format!("/admin/customers/{}", customer.account_id);
    let reserve = format!("{path}/reserve");

    let support = admin(server, SUPPORT).await;
    let (_, _, html) = page(server, &support, &path).await;
    assert!(!html.contains(&reserve), "support sees no reserve form");
    let fields = [
        ("gateway", "monnify"),
        ("bvn", "22212345678"),
        ("csrf", &csrf_in(&html)),
    ];
    assert_eq!(post_form(server, &support, &reserve, &fields).await.0, 403);

    let owner = admin(server, OWNER).await;
    let (_, _, html) = page(server, &owner, &path).await;
    assert!(
        html.contains(&reserve) && html.contains("<option value=\"paystack\">"),
        "{html}"
    );
    let proof = csrf_in(&html);
    let bad = [("gateway", "monnify"), ("bvn", "123"), ("csrf", &proof)];
    let (status, refusal) = post_form(server, &owner, &reserve, &bad).await;
    assert_eq!(status, 400, "{refusal}");
    assert!(refusal.contains("bvn must be 11 digits"), "{refusal}");
    let unknown = [("gateway", "opay"), ("csrf", &proof)];
    let (status, refusal) = post_form(server, &owner, &reserve, &unknown).await;
    assert_eq!(status, 409, "{refusal}");
    assert!(refusal.contains("opay is not configured"), "{refusal}");
    assert_eq!(monnify.reserve_calls(), 0, "a refusal asks no gateway");

    let fields = [
        ("gateway", "monnify"),
        ("bvn", "22212345678"),
        ("csrf", &proof),
    ];
    assert_eq!(post_form(server, &owner, &reserve, &fields).await.0, 303);
    assert_eq!(post_form(server, &owner, &reserve, &fields).await.0, 303);
    assert_eq!(
        monnify.reserve_calls(),
        1,
        "held accounts are not asked again"
    );
    let held = setup.cli(&[
        "funding",
        "reserve",
        "--account",
        &customer.account_id,
        "--gateway",
        "monnify",
    ]);
    let number = held["accounts"][0]["account_number"]
        .as_str()
        .expect("reserved")
        .to_owned();
    let (_, _, html) = page(server, &owner, &path).await;
    assert!(
        html.contains(&format!("<code>{number}</code>")),
        "shown on the page"
    );
    let log = server.cli(&["operator", "log", "--subject", &customer.account_id]);
    let line = &log["entries"][0];
    assert_eq!(
        (&line["action"], &line["operator_email"]),
        (&"funding.reserve".into(), &OWNER.into()),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_now_credits_a_lost_webhook_once_and_shows_it() {
    let setup = Setup::start(&[]).await;
    let server = &setup.server;
    add_operators(server);
    let (customer, number) = setup.customer_with_account(&setup.fakes[0]).await;
    let lost = setup.fakes[0].transfer(Some(&customer.account_id), Some(&number), 750.25);

    let support = admin(server, SUPPORT).await;
    let (_, _, html) = page(server, &support, "/admin/funding").await;
    assert!(
        !html.contains("/admin/funding/reconcile"),
        "support has no button"
    );
    let fields = [("since_hours", "48"), ("csrf", &csrf_in(&html))];
    assert_eq!(
        post_form(server, &support, "/admin/funding/reconcile", &fields)
            .await
            .0,
        403
    );
    assert_eq!(server.balance(&customer.api_key).await, 0.0);

    let owner = admin(server, OWNER).await;
    let (_, _, html) = page(server, &owner, "/admin/funding").await;
    assert!(
        html.contains("/admin/funding/reconcile"),
        "the owner has the button"
    );
    let proof = csrf_in(&html);
    let bad = [("since_hours", "0"), ("csrf", &proof)];
    assert_eq!(
        post_form(server, &owner, "/admin/funding/reconcile", &bad)
            .await
            .0,
        400
    );
    let fields = [("since_hours", "48"), ("csrf", &proof)];
    let (status, html) = post_form(server, &owner, "/admin/funding/reconcile", &fields).await;
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains("<strong class=\"credited-count\">1</strong>"),
        "{html}"
    );
    assert!(
        html.contains(&format!("data-reference=\"{lost}\"")) && html.contains("₦750.25"),
        "{html}"
    );
    assert_eq!(server.balance(&customer.api_key).await, 750.25);

    let (status, html) = post_form(server, &owner, "/admin/funding/reconcile", &fields).await;
    assert_eq!(status, 200);
    assert!(
        !html.contains("<strong class=\"credited-count\">1</strong>"),
        "{html}"
    );
    assert_eq!(
        server.balance(&customer.api_key).await,
        750.25,
        "credited once"
    );
    let log = server.cli(&["operator", "log"]);
    let runs: Vec<&serde_json::Value> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "funding.reconcile")
        .collect();
    assert_eq!(runs.len(), 2, "each run is logged: {log}");
    assert_eq!(runs[1]["after"], "1 credited (last 48 h)", "{log}");
    assert_eq!(runs[0]["after"], "0 credited (last 48 h)", "{log}");
    assert_eq!(runs[0]["operator_email"], OWNER);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_operator_runs_the_money_audit_and_sees_each_check() {
    let mut server = server_with_operators().await;
    let customer = server.customer("100");
    let support = admin(&server, SUPPORT).await;
    let (_, _, overview) = page(&server, &support, "/admin").await;
    assert!(
        overview.contains("href=\"/admin/audit\""),
        "linked from the overview"
    );
    let (status, _, html) = page(&server, &support, "/admin/audit").await;
    assert_eq!(status, 200);
    let checks: Vec<&str> = billpay_store::audit::check_names().collect();
    assert!(
        html.contains(&format!("Passed: {} checks, no violations.", checks.len())),
        "{html}"
    );
    for check in &checks {
        assert!(html.contains(&format!("data-check=\"{check}\"")), "{check}");
    }
    assert_eq!(html.matches(">passed</span>").count(), checks.len());

    // A balance changed behind the ledger's back fails its check, named.
    server.kill();
    let sql = format!(
        "UPDATE accounts SET balance = balance + 100 WHERE id = '{}'",
        customer.account_id
    );
    server.raw_sql(&sql, &sql).await;
    server.skip_final_audit();
    server.start();
    let (status, _, html) = page(&server, &support, "/admin/audit").await;
    assert_eq!(status, 200);
    assert!(
        html.contains(&format!("FAILED: 1 of {} checks violated.", checks.len())),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "account_id={} balance=10100 ledger_sum=10000",
            customer.account_id
        )),
        "{html}"
    );
}

#[tokio::test]
async fn an_owner_sets_a_customers_dashboard_password_and_their_sessions_end() {
    let server = &server_with_operators().await;
    let email = "shop@example.com";
    let account = crate::dashboard::account_with_password(server, email, "10");
    let old = crate::dashboard::sign_in(server, email, PASSWORD)
        .await
        .unwrap();
    let path = format!("/admin/customers/{account}");
    let set = format!("{path}/password");

    let support = admin(server, SUPPORT).await;
    let (_, _, html) = page(server, &support, &path).await;
    assert!(!html.contains(&set), "support sees no password form");
    let fields = [("password", "a new long one"), ("csrf", &csrf_in(&html))];
    assert_eq!(post_form(server, &support, &set, &fields).await.0, 403);

    let owner = admin(server, OWNER).await;
    let (_, _, html) = page(server, &owner, &path).await;
    let proof = csrf_in(&html);
    let short = [("password", "short"), ("csrf", &proof)];
    assert_eq!(post_form(server, &owner, &set, &short).await.0, 400);
    assert!(
        crate::dashboard::sign_in(server, email, PASSWORD)
            .await
            .is_ok(),
        "unchanged"
    );

    let fields = [
        ("password", "a new long one"),
        ("reason", "forgot it, called support"),
        ("csrf", &proof),
    ];
    assert_eq!(post_form(server, &owner, &set, &fields).await.0, 303);
    let (status, _, _) = page(server, &old, "/dashboard").await;
    assert_eq!(status, 303, "the customer's earlier session ended");
    assert_eq!(
        crate::dashboard::sign_in(server, email, PASSWORD).await,
        Err(401)
    );
    assert!(
        crate::dashboard::sign_in(server, email, "a new long one")
            .await
            .is_ok()
    );
    let log = server.cli(&["operator", "log", "--subject", &account]);
    let line = &log["entries"][0];
    assert_eq!(line["action"], "account.password", "{log}");
    assert_eq!(line["reason"], "forgot it, called support");
    assert_eq!(line["operator_email"], OWNER);
    let logged = log.to_string();
    assert!(!logged.contains("a new long one"), "no password in the log");
}

#[tokio::test]
async fn an_owner_sets_a_keys_rate_limit_and_the_api_applies_it() {
    let server = &server_with_operators().await;
    let customer = server.customer("10");
    let path = format!("/admin/customers/{}", customer.account_id);
    let owner = admin(server, OWNER).await;
    let (_, _, html) = page(server, &owner, &path).await;
    let at = html.find("/rate-limit\"").expect("a rate-limit form");
    let action = &html[html[..at].rfind("action=\"").unwrap() + 8..at + 11];
    let proof = csrf_in(&html);
    let zero = [("per_second", "0"), ("burst", "1"), ("csrf", &proof)];
    assert_eq!(post_form(server, &owner, action, &zero).await.0, 400);
    let one = [("per_second", "1"), ("burst", "1"), ("csrf", &proof)];
    assert_eq!(post_form(server, &owner, action, &one).await.0, 303);
    let (_, _, html) = page(server, &owner, &path).await;
    assert!(html.contains("1/s, burst 1"), "{html}");

    // The API now allows one request at once for this key.
    let statuses: Vec<u16> = balance_statuses(server, &customer.api_key).await;
    assert!(statuses.contains(&429), "{statuses:?}");
    let log = server.cli(&[
        "operator",
        "log",
        "--subject",
        action.split('/').nth(5).unwrap(),
    ]);
    assert_eq!(log["entries"][0]["action"], "key.update", "{log}");
}

/// Five balance reads in a row, as fast as they go.
async fn balance_statuses(server: &TestServer, key: &str) -> Vec<u16> {
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(server.get(key, "/v1/wallet/balance").await.status);
    }
    statuses
}
