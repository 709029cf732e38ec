//! KYC levels, limits and the blocklist from the console (issue 32) against
//! the real binary, on the test backend (SQLite, or PostgreSQL with
//! `BILLPAY_TEST_BACKEND=postgres`): an owner's forms take effect on the
//! next API purchase (`422 limit_exceeded`, `403 blocked`, then through);
//! a wrong value or a missing reason comes back on its form, nothing
//! changed; the customer's page shows the level, the limits in force and
//! the usage; support reads everything and gets no form, its POSTs
//! refused. In Chromium: the pages at 390 px and 1280 px.

use super::journey::{accept_confirms, sign_in};
use super::money::{admin, page, post_form};
use super::*;
use crate::dashboard::browser::Browser;
use crate::dashboard::csrf_in;
use serde_json::{Value, json};

fn airtime(phone: &str, naira: u32) -> Value {
    json!({"provider_id": "mtn", "phone": phone, "amount": naira, "reference": reference()})
}

/// A level's form: the limits given, every other field blank (no limit).
fn level_fields<'a>(csrf: &'a str, set: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut fields = vec![("csrf", csrf)];
    fields.extend_from_slice(set);
    fields
}

/// The operator log's lines about `subject`, newest first: (action, operator, reason).
fn log_about(server: &TestServer, subject: &str) -> Vec<(String, String, String)> {
    let log = server.cli(&["operator", "log", "--subject", subject]);
    let text = |e: &Value, k: &str| e[k].as_str().unwrap_or_default().to_owned();
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                text(e, "action"),
                text(e, "operator_email"),
                text(e, "reason"),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owners_daily_limit_and_blocklist_entry_hold_for_the_next_api_purchase() {
    let server = &TestServer::spawn().await;
    add_operators(server);
    // an operator-created account: level 2, no limit at all
    let customer = server.customer("20000");
    let key = customer.api_key.as_str();
    let owner = admin(server, OWNER).await;
    let (status, _, html) = page(server, &owner, "/admin/limits").await;
    assert_eq!(status, 200);
    let csrf = csrf_in(&html);

    // a wrong amount: the form again with the message, nothing changed
    let wrong = level_fields(&csrf, &[("daily_value", "lots")]);
    let (status, refused) = post_form(server, &owner, "/admin/limits/2", &wrong).await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused.contains("id=\"level-2-daily_value-error\""));
    assert!(refused.contains("value=\"lots\""), "what was typed is kept");
    let shown = server.cli(&["limits", "show", "2"]);
    let daily_value = &shown["levels"][0]["limits"]["daily_value"];
    assert!(daily_value.is_null(), "nothing set: {shown}");

    // ₦1,000 a day for level 2, as a person types it
    let daily = level_fields(&csrf, &[("daily_value", "₦1,000")]);
    let (status, _) = post_form(server, &owner, "/admin/limits/2", &daily).await;
    assert_eq!(status, 303);
    let (_, _, html) = page(server, &owner, "/admin/limits?done=level-limits-set").await;
    assert!(html.contains("limits are saved"), "the notice");
    assert!(
        html.contains("value=\"1000.00\""),
        "level 2's form holds it"
    );
    server
        .place(key, "/v1/airtime/purchase", airtime("08031234567", 600))
        .await;
    let over = server
        .post(key, "/v1/airtime/purchase", airtime("08031234567", 600))
        .await;
    over.assert_error(422, "limit_exceeded");
    let message = over.body["message"].as_str().unwrap();
    assert!(
        message.contains("daily spending limit of 1000.00 Naira: 400.00 Naira left"),
        "{message}"
    );
    assert_eq!(
        server.balance(key).await,
        20_000.0 - 600.0,
        "nothing debited"
    );

    // every field blank: no limit again
    let none = level_fields(&csrf, &[]);
    let (status, _) = post_form(server, &owner, "/admin/limits/2", &none).await;
    assert_eq!(status, 303);
    let lines = log_about(server, "level 2");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|(a, who, _)| a == "limits.level" && who == OWNER)
    );

    // the blocklist: a reason is required; then a purchase to it is refused
    let (_, _, html) = page(server, &owner, "/admin/blocklist").await;
    assert!(html.contains("Nothing is blocked"));
    let block = "/admin/blocklist";
    let no_reason = [
        ("kind", "recipient"),
        ("value", "+234 803 111 2222"),
        ("reason", " "),
        ("csrf", csrf.as_str()),
    ];
    let (status, refused) = post_form(server, &owner, block, &no_reason).await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused.contains("id=\"block-reason-error\""), "{refused}");
    assert!(refused.contains("value=\"+234 803 111 2222\""), "kept");
    let listed = server.cli(&["blocklist", "list"]);
    assert_eq!(listed["entries"].as_array().unwrap().len(), 0, "{listed}");
    let fields = [
        ("kind", "recipient"),
        ("value", "+234 803 111 2222"),
        ("reason", "reported stolen card"),
        ("csrf", csrf.as_str()),
    ];
    let (status, _) = post_form(server, &owner, block, &fields).await;
    assert_eq!(status, 303);
    let (_, _, html) = page(server, &owner, "/admin/blocklist").await;
    let row = &html[html.find("data-value=\"08031112222\"").expect("the entry")..];
    let row = &row[..row.find("</tr>").unwrap()];
    for seen in ["recipient", "reported stolen card", OWNER, "WAT"] {
        assert!(row.contains(seen), "{seen} in {row}");
    }
    let refused = server
        .post(key, "/v1/airtime/purchase", airtime("08031112222", 100))
        .await;
    refused.assert_error(403, "blocked");
    assert_eq!(server.balance(key).await, 19_400.0, "nothing debited");

    // removed: the same purchase goes through
    let remove = [
        ("kind", "recipient"),
        ("value", "08031112222"),
        ("reason", "card owner confirmed"),
        ("csrf", csrf.as_str()),
    ];
    let (status, _) = post_form(server, &owner, "/admin/blocklist/remove", &remove).await;
    assert_eq!(status, 303);
    server
        .place(key, "/v1/airtime/purchase", airtime("08031112222", 100))
        .await;
    let lines = log_about(server, "recipient 08031112222");
    let actions: Vec<&str> = lines.iter().map(|(a, _, _)| a.as_str()).collect();
    assert_eq!(actions, ["blocklist.remove", "blocklist.add"], "{lines:?}");
    assert_eq!(lines[0].2, "card owner confirmed");
    assert_eq!(lines[1].2, "reported stolen card");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_customer_page_shows_level_limits_and_usage_and_support_gets_no_forms() {
    let server = &TestServer::spawn().await;
    add_operators(server);
    let customer = server.customer("5000");
    let key = customer.api_key.as_str();
    let account = customer.account_id.as_str();
    server
        .place(key, "/v1/airtime/purchase", airtime("08031234567", 500))
        .await;
    let path = format!("/admin/customers/{account}");
    let owner = admin(server, OWNER).await;
    let (_, _, html) = page(server, &owner, &path).await;
    let csrf = csrf_in(&html);
    assert!(html.contains("id=\"kyc-form\"") && html.contains("id=\"account-limits\""));

    // the level needs a reason; then level 1, approved by the owner
    let kyc = format!("{path}/kyc");
    let no_reason = [("level", "1"), ("reason", ""), ("csrf", csrf.as_str())];
    let (status, refused) = post_form(server, &owner, &kyc, &no_reason).await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused.contains("id=\"kyc-reason-error\""), "{refused}");
    let shown = server.cli(&["kyc", "show", account]);
    assert_eq!(shown["kyc"]["level"], 2, "nothing changed: {shown}");
    let fields = [
        ("level", "1"),
        ("reason", "BVN letter seen at the office"),
        ("csrf", csrf.as_str()),
    ];
    let (status, _) = post_form(server, &owner, &kyc, &fields).await;
    assert_eq!(status, 303);

    // its own largest purchase, ₦2,000; a wrong count is refused
    let own = format!("{path}/limits");
    let wrong = [
        ("max_purchase", "2,000"),
        ("daily_count", "2.5"),
        ("csrf", csrf.as_str()),
    ];
    let (status, refused) = post_form(server, &owner, &own, &wrong).await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused.contains("id=\"account-limits-daily_count-error\""));
    assert!(refused.contains("value=\"2.5\""), "kept");
    let fields = [("max_purchase", "2,000"), ("csrf", csrf.as_str())];
    let (status, _) = post_form(server, &owner, &own, &fields).await;
    assert_eq!(status, 303);
    let over = server
        .post(key, "/v1/airtime/purchase", airtime("08031234567", 2_500))
        .await;
    over.assert_error(422, "limit_exceeded");

    let (_, _, html) = page(server, &owner, &path).await;
    let section = &html[html.find("id=\"kyc-limits\"").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(
        section.contains("<strong id=\"kyc-level\">1</strong>"),
        "{section}"
    );
    for seen in [
        "approved by an operator",
        "BVN letter seen at the office",
        OWNER,
        "WAT",
    ] {
        assert!(section.contains(seen), "{seen} in {section}");
    }
    let row = |field: &str| {
        let at = section
            .find(&format!("data-limit=\"{field}\""))
            .unwrap_or_else(|| panic!("{field}'s row"));
        section[at..at + section[at..].find("</tr>").unwrap()].to_owned()
    };
    // level 1's ₦200,000 a day, ₦500 spent, the rest left; the own limit marked
    let daily = row("daily_value");
    for seen in ["₦200,000.00", "₦500.00", "₦199,500.00"] {
        assert!(daily.contains(seen), "{seen} in {daily}");
    }
    assert!(!daily.contains(">own<"), "{daily}");
    let max = row("max_purchase");
    assert!(max.contains("₦2,000.00") && max.contains(">own<"), "{max}");
    assert!(row("daily_count").contains("1 purchase"));
    assert!(section.contains("₦199,500.00 more"), "left today");
    let lines = log_about(server, account);
    let actions: Vec<&str> = lines.iter().map(|(a, _, _)| a.as_str()).collect();
    assert_eq!(&actions[..2], ["limits.account", "account.kyc_level"]);
    assert_eq!(lines[1].2, "BVN letter seen at the office");

    // support reads it all, gets no form, and its POSTs are refused
    let support = admin(server, SUPPORT).await;
    let (status, _, html) = page(server, &support, &path).await;
    assert_eq!(status, 200);
    assert!(html.contains("<strong id=\"kyc-level\">1</strong>"));
    assert!(!html.contains("id=\"kyc-form\"") && !html.contains("id=\"account-limits\""));
    let support_csrf = csrf_in(&html);
    let (_, _, limits) = page(server, &support, "/admin/limits").await;
    assert!(limits.contains("₦200,000.00") && !limits.contains("id=\"level-0\""));
    let (_, _, blocklist) = page(server, &support, "/admin/blocklist").await;
    assert!(!blocklist.contains("id=\"block\""));
    let csrf = support_csrf.as_str();
    let posts: [(String, Vec<(&str, &str)>); 5] = [
        (kyc.clone(), vec![("level", "2"), ("reason", "mine")]),
        (own.clone(), vec![("max_purchase", "")]),
        ("/admin/limits/1".into(), vec![("daily_value", "1")]),
        (
            "/admin/blocklist".into(),
            vec![("kind", "account"), ("value", account), ("reason", "x")],
        ),
        (
            "/admin/blocklist/remove".into(),
            vec![("kind", "account"), ("value", account)],
        ),
    ];
    for (to, mut fields) in posts {
        fields.push(("csrf", csrf));
        let (status, _) = post_form(server, &support, &to, &fields).await;
        assert_eq!(status, 403, "support may not POST {to}");
    }
    assert_eq!(
        log_about(server, account).len(),
        lines.len(),
        "nothing logged"
    );
    let shown = server.cli(&["kyc", "show", account]);
    assert_eq!(shown["kyc"]["level"], 1, "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limits_pages_fit_a_phone_and_a_laptop_in_a_browser() {
    let server = &TestServer::spawn().await;
    add_operators(server);
    let customer = server.customer("5000");
    server
        .place(
            &customer.api_key,
            "/v1/airtime/purchase",
            airtime("08031234567", 500),
        )
        .await;
    let browser = Browser::start().await;
    let b = &browser;
    sign_in(b, server, OWNER).await;
    accept_confirms(b).await;

    // an owner blocks an account from the browser, with a reason
    b.client
        .goto(&server.url("/admin/blocklist"))
        .await
        .unwrap();
    b.client
        .execute(
            "document.querySelector('#block-kind').value = 'account'",
            vec![],
        )
        .await
        .unwrap();
    b.fill("#block-value", &customer.account_id).await;
    b.fill("#block-reason", "chargebacks from three cards")
        .await;
    b.click("#block-button").await;
    assert!(b.text("#done").await.contains("added to the blocklist"));
    assert!(
        b.text("#blocklist")
            .await
            .contains("chargebacks from three cards")
    );
    let refused = server
        .post(
            &customer.api_key,
            "/v1/airtime/purchase",
            airtime("08031234567", 100),
        )
        .await;
    refused.assert_error(403, "blocked");

    // level 0's daily count from the browser
    b.client.goto(&server.url("/admin/limits")).await.unwrap();
    b.fill("#level-0 input[name=daily_count]", "15").await;
    b.click("#level-0 button").await;
    assert!(b.text("#done").await.contains("limits are saved"));
    assert!(b.text("#levels").await.contains("15 purchases"));

    // level 0's recipient-hourly rule from hold to refuse, and level 1 renamed
    b.client
        .execute(
            "document.querySelector('#level-0-recipient_hourly_action').value = 'refuse'",
            vec![],
        )
        .await
        .unwrap();
    b.click("#level-0 button").await;
    let table = b.text("#levels").await;
    assert!(table.contains("10 purchases, then refuse"), "{table}");
    assert!(table.contains("15 purchases"), "the other fields kept");
    b.fill("#level-1-name-input", "BVN or NIN matched").await;
    b.click("#level-1-name button").await;
    assert!(b.text("#done").await.contains("name is saved"));
    assert!(b.text("#levels").await.contains("1 · BVN or NIN matched"));

    let account = format!("/admin/customers/{}", customer.account_id);
    let mut wide = Vec::new();
    for (width, height, suffix) in [(390, 844, "-phone"), (1280, 900, "")] {
        b.client.set_window_size(width, height).await.unwrap();
        for (path, name) in [
            ("/admin/limits", "console-limits"),
            ("/admin/blocklist", "console-blocklist"),
            (account.as_str(), "console-customer-limits"),
        ] {
            b.client.goto(&server.url(path)).await.unwrap();
            if path == account {
                b.client
                    .execute(
                        "document.getElementById('kyc-limits').scrollIntoView()",
                        vec![],
                    )
                    .await
                    .unwrap();
                assert!(b.text("#account-blocked").await.contains("chargebacks"));
            }
            b.screenshot(&format!("{name}{suffix}")).await;
            if let Some(why) = b.overflow().await {
                wide.push(format!("{path} at {width} px: {why}"));
            }
            if path == "/admin/limits" {
                // an owner's forms: a level's name, its limits and the rules' actions
                b.client
                    .execute(
                        "document.querySelector('#level-0 input[name=max_balance]').scrollIntoView()",
                        vec![],
                    )
                    .await
                    .unwrap();
                b.screenshot(&format!("console-limits-form{suffix}")).await;
            }
        }
    }
    assert!(
        wide.is_empty(),
        "pages that scroll sideways:\n{}",
        wide.join("\n")
    );
    let nav = b.css(".top nav a[href='/admin/limits']").await;
    assert!(nav.is_displayed().await.unwrap(), "Limits in the nav");
    browser.stop().await;
}

/// Level 0's limits as shipped, every field of its form (a form is saved
/// whole: a blank field is no limit), with `actions` for the rules.
fn level_0_form<'a>(csrf: &'a str, actions: [&'a str; 4]) -> Vec<(&'a str, &'a str)> {
    let [recipient, account, first_day, over_balance] = actions;
    vec![
        ("csrf", csrf),
        ("max_purchase", "10,000.00"),
        ("daily_value", "50000"),
        ("daily_count", "20"),
        ("monthly_value", "300000"),
        ("monthly_count", "300"),
        ("max_balance", "300000"),
        ("per_recipient_daily", "20000"),
        ("recipient_hourly_count", "10"),
        ("account_hourly_count", "30"),
        ("first_day_value", "20000"),
        ("recipient_hourly_action", recipient),
        ("account_hourly_action", account),
        ("first_day_action", first_day),
        ("over_balance_action", over_balance),
    ]
}

/// A rule's action from the console: level 0's recipient-hourly rule holds
/// the 6th purchase to one number as shipped; an owner sets it to refuse
/// and the next is refused (`422 limit_exceeded`), nothing debited; the
/// account's own action (hold) wins over it, and blank gives the level's
/// back. A wrong action comes back on its field; support's POSTs are
/// refused, nothing changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_turns_a_velocity_rule_from_hold_to_refuse_for_the_next_api_purchase() {
    let server = &TestServer::spawn().await;
    add_operators(server);
    let created = server.cli(&[
        "account",
        "create",
        "--name",
        "Shop Customer",
        "--email",
        &format!("l0-{}@example.com", rand_suffix()),
        "--kyc-level",
        "0",
    ]);
    let account = created["account_id"].as_str().unwrap().to_owned();
    server.cli(&[
        "wallet",
        "credit",
        "--account",
        &account,
        "--amount",
        "5000",
        "--reference",
        &reference(),
    ]);
    let key = server.cli(&["key", "create", "--account", &account])["api_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let key = key.as_str();
    let owner = admin(server, OWNER).await;
    let (_, _, html) = page(server, &owner, "/admin/limits").await;
    let csrf = csrf_in(&html);
    let select = &html[html
        .find("id=\"level-0-recipient_hourly_action\"")
        .expect("the select")..];
    let select = &select[..select.find("</select>").unwrap()];
    assert!(
        select.contains("<option value=\"hold\" selected>"),
        "{select}"
    );
    assert!(
        html.contains("10 purchases, then hold"),
        "the table says it"
    );

    // as shipped: 10 an hour to one number, the 11th held (accepted, processing)
    for _ in 0..10 {
        server
            .place(key, "/v1/airtime/purchase", airtime("08031234567", 100))
            .await;
    }
    let held = server
        .place(key, "/v1/airtime/purchase", airtime("08031234567", 100))
        .await;
    let shown = server.cli(&["transaction", "show", &held]);
    assert_eq!(shown["transaction"]["held_for"], "recipient_hourly_count");

    // a wrong action: on its field, what was typed kept, nothing changed
    let mut wrong = level_0_form(&csrf, ["refuse", "hold", "hold", "hold"]);
    wrong[11].1 = "maybe";
    let (status, refused) = post_form(server, &owner, "/admin/limits/0", &wrong).await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused.contains("id=\"level-0-recipient_hourly_action-error\""),
        "{refused}"
    );
    let level0 = |server: &TestServer| server.cli(&["limits", "show", "0"])["levels"][0].clone();
    assert_eq!(level0(server)["limits"]["recipient_hourly_action"], "hold");

    // support may not change it
    let support = admin(server, SUPPORT).await;
    let (_, _, support_html) = page(server, &support, "/admin/limits").await;
    assert!(!support_html.contains("id=\"level-0-recipient_hourly_action\""));
    let support_csrf = csrf_in(&support_html);
    let theirs = level_0_form(&support_csrf, ["refuse", "hold", "hold", "hold"]);
    let (status, _) = post_form(server, &support, "/admin/limits/0", &theirs).await;
    assert_eq!(status, 403, "support may not set a rule's action");
    assert_eq!(level0(server)["limits"]["recipient_hourly_action"], "hold");

    // the owner: refuse; every number kept as typed, exact to the kobo
    let before = level0(server);
    let refuse = level_0_form(&csrf, ["refuse", "hold", "hold", "hold"]);
    let (status, _) = post_form(server, &owner, "/admin/limits/0", &refuse).await;
    assert_eq!(status, 303);
    let after = level0(server);
    let mut expected = before["limits"].clone();
    expected["recipient_hourly_action"] = "refuse".into();
    assert_eq!(after["limits"], expected);
    let (_, _, html) = page(server, &owner, "/admin/limits").await;
    assert!(
        html.contains("10 purchases, then refuse"),
        "the table says it"
    );
    let lines = log_about(server, "level 0");
    assert_eq!(lines.len(), 1, "one change, one line: {lines:?}");
    assert_eq!(
        (lines[0].0.as_str(), lines[0].1.as_str()),
        ("limits.level", OWNER)
    );

    let refused = server
        .post(key, "/v1/airtime/purchase", airtime("08031234567", 100))
        .await;
    refused.assert_error(422, "limit_exceeded");
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.contains("hourly limit on purchases to one recipient of 10 purchases: 0 left"),
        "{message}"
    );
    assert_eq!(
        server.balance(key).await,
        5_000.0 - 1_100.0,
        "nothing debited"
    );

    // the account's own action wins (hold); blank is the level's again (refuse)
    let own = format!("/admin/customers/{account}/limits");
    let (_, _, html) = page(server, &owner, &format!("/admin/customers/{account}")).await;
    let select = &html[html
        .find("id=\"account-limits-recipient_hourly_action\"")
        .unwrap()..];
    let select = &select[..select.find("</select>").unwrap()];
    assert!(
        select.contains("<option value=\"\" selected>the level&#39;s (refused)</option>"),
        "{select}"
    );
    let hold = [("recipient_hourly_action", "hold"), ("csrf", csrf.as_str())];
    let (status, _) = post_form(server, &owner, &own, &hold).await;
    assert_eq!(status, 303);
    let shown = server.cli(&["kyc", "show", &account]);
    assert_eq!(shown["overrides"]["recipient_hourly_action"], "hold");
    assert!(
        shown["overrides"]["recipient_hourly_count"].is_null(),
        "{shown}"
    );
    let held = server
        .place(key, "/v1/airtime/purchase", airtime("08031234567", 100))
        .await;
    let shown = server.cli(&["transaction", "show", &held]);
    assert_eq!(shown["transaction"]["held_for"], "recipient_hourly_count");
    let (status, _) = post_form(
        server,
        &support,
        &own,
        &[
            ("recipient_hourly_action", ""),
            ("csrf", support_csrf.as_str()),
        ],
    )
    .await;
    assert_eq!(status, 403, "support may not change the account's either");
    let level_again = [("recipient_hourly_action", ""), ("csrf", csrf.as_str())];
    let (status, _) = post_form(server, &owner, &own, &level_again).await;
    assert_eq!(status, 303);
    let shown = server.cli(&["kyc", "show", &account]);
    assert!(
        shown["overrides"]["recipient_hourly_action"].is_null(),
        "{shown}"
    );
    let refused = server
        .post(key, "/v1/airtime/purchase", airtime("08031234567", 100))
        .await;
    refused.assert_error(422, "limit_exceeded");
    assert_eq!(server.balance(key).await, 5_000.0 - 1_200.0);
}

/// An owner renames a level on the Limits page: the name is shown in the
/// table and on the customer's page, logged with the old one; a blank or
/// over-long name comes back on its field, nothing changed; support's
/// POST is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_renames_a_level_and_a_bad_name_changes_nothing() {
    let server = &TestServer::spawn().await;
    add_operators(server);
    let customer = server.customer("100");
    let owner = admin(server, OWNER).await;
    let (_, _, html) = page(server, &owner, "/admin/limits").await;
    let csrf = csrf_in(&html);
    let was = server.cli(&["limits", "show", "2"])["levels"][0]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(html.contains(&format!("value=\"{was}\"")), "the name field");

    let too_long = "n".repeat(41);
    for bad in ["   ", too_long.as_str()] {
        let fields = [("name", bad), ("csrf", csrf.as_str())];
        let (status, refused) = post_form(server, &owner, "/admin/limits/2/name", &fields).await;
        assert_eq!(status, 400, "{refused}");
        assert!(refused.contains("id=\"level-2-name-error\""), "{refused}");
        assert!(refused.contains(&format!("value=\"{bad}\"")), "kept");
    }
    let support = admin(server, SUPPORT).await;
    let (_, _, support_html) = page(server, &support, "/admin/limits").await;
    assert!(
        !support_html.contains("id=\"level-2-name\""),
        "no form for support"
    );
    let support_csrf = csrf_in(&support_html);
    let theirs = [("name", "Mine"), ("csrf", support_csrf.as_str())];
    let (status, _) = post_form(server, &support, "/admin/limits/2/name", &theirs).await;
    assert_eq!(status, 403);
    assert_eq!(
        server.cli(&["limits", "show", "2"])["levels"][0]["name"],
        was.as_str()
    );

    let fields = [("name", " Resellers (onboarded) "), ("csrf", csrf.as_str())];
    let (status, _) = post_form(server, &owner, "/admin/limits/2/name", &fields).await;
    assert_eq!(status, 303);
    let (_, _, html) = page(server, &owner, "/admin/limits?done=level-renamed").await;
    assert!(html.contains("name is saved"), "the notice");
    assert!(
        html.contains("Level 2 · Resellers (onboarded)"),
        "the table's heading"
    );
    let customer_page = format!("/admin/customers/{}", customer.account_id);
    let (_, _, html) = page(server, &owner, &customer_page).await;
    assert!(
        html.contains("Resellers (onboarded)"),
        "the account's level named"
    );
    let lines = log_about(server, "level 2");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        (lines[0].0.as_str(), lines[0].1.as_str()),
        ("limits.level_name", OWNER)
    );
    let log = server.cli(&["operator", "log", "--subject", "level 2"]);
    assert_eq!(log["entries"][0]["before"], was.as_str());
    assert_eq!(log["entries"][0]["after"], "Resellers (onboarded)");
}
