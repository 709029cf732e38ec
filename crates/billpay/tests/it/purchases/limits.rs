//! Limits, KYC levels and the blocklist (issue 32, docs/limits.md) through
//! the operator CLI and the API of a spawned server: refusals live and in
//! `/test` alike, nothing debited, counted in `/metrics`; a BVN never kept.

use super::checks::*;
use super::kind::*;
use crate::support::*;

#[tokio::test]
async fn a_blocked_recipient_and_a_limit_are_refused_live_and_in_test_mode() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let key = c.api_key.as_str();
    let start = balance_kobo(&server, key).await;
    let body = Airtime.body(&reference(), "1234");
    let phone = Airtime.recipient("1234").unwrap();

    // Typed in another form, blocked in the stored one.
    let intl = format!("+234{}", &phone[1..]);
    let added = server.cli(&[
        "blocklist",
        "add",
        "--recipient",
        &intl,
        "--reason",
        "stolen card",
    ]);
    assert_eq!(added["value"], phone.as_str());
    for path in [Airtime.live(), Airtime.test()] {
        let r = server.post(key, &path, body.clone()).await;
        r.assert_error(403, "blocked");
    }
    let listed = server.cli(&["blocklist", "list"]);
    assert_eq!(listed["entries"][0]["reason"], "stolen card");
    server.cli(&["blocklist", "remove", "--recipient", &phone]);

    server.cli(&[
        "limits",
        "set",
        "--account",
        &c.account_id,
        "--max-purchase",
        "100",
    ]);
    for path in [Airtime.live(), Airtime.test()] {
        let r = server.post(key, &path, body.clone()).await;
        r.assert_refusal("limit_exceeded", "", &path);
        assert_eq!(
            r.body["message"],
            "This purchase is over the largest single purchase of 100.00 Naira"
        );
    }
    assert_eq!(balance_kobo(&server, key).await, start);
    assert!(transactions(&server, &c.account_id, None).is_empty());

    let account = server.get(key, "/v1/account").await;
    let account = account.assert_ok();
    assert_eq!(account["kyc_level"], 2);
    assert_eq!(account["limits"]["max_purchase"], 100.0);
    assert_eq!(account["usage"]["daily_count"], 0);

    // The owner lowers the level: the account's own limit cleared, level 0's
    // ₦10,000 applies to the next purchase.
    server.cli(&[
        "kyc",
        "set-level",
        &c.account_id,
        "0",
        "--reason",
        "new owner",
    ]);
    server.cli(&[
        "limits",
        "set",
        "--account",
        &c.account_id,
        "--max-purchase",
        "none",
    ]);
    server.place(key, &Airtime.live(), body).await;
    let dear = Airtime.body(&reference(), "1234");
    let dear = with(&dear, "amount", serde_json::json!(10_001));
    let r = server.post(key, &Airtime.live(), dear).await;
    r.assert_refusal("limit_exceeded", "", "₦10,001 at level 0");
    let account = server.get(key, "/v1/account").await;
    let account = account.assert_ok();
    assert_eq!(account["kyc_level"], 0);
    assert_eq!(account["usage"]["daily_value"], 500.0);
    assert_eq!(account["left_today"], 49_500.0);

    let scrape = reqwest::get(server.url("/metrics")).await.unwrap();
    let text = scrape.text().await.unwrap();
    for reason in ["blocked", "max_purchase"] {
        let line = format!("billpay_purchases_refused_total{{reason=\"{reason}\"}}");
        assert!(text.contains(&line), "{line} in /metrics");
    }
    server.assert_ledger_consistent(&c.account_id);
}

#[tokio::test]
async fn a_verified_bvn_keeps_only_its_last_four_digits() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let bvn = "22298765432";
    let set = server.cli(&[
        "kyc",
        "set-level",
        &c.account_id,
        "1",
        "--method",
        "bvn",
        "--number",
        bvn,
        "--reason",
        "BVN matched at Monnify",
    ]);
    assert_eq!(set["kyc"]["level"], 1);
    assert_eq!(set["kyc"]["last4"], "5432");
    assert!(!set.to_string().contains(bvn));
    let shown = server.cli(&["kyc", "show", &c.account_id]);
    assert_eq!(shown["kyc"]["method"], "bvn");
    assert_eq!(shown["limits"]["max_purchase"], 50_000.0);
    assert!(!shown.to_string().contains(bvn));
    let log = server.cli(&["operator", "log"]);
    assert!(log.to_string().contains("account.kyc_level"));

    let contents = server.database_contents().await;
    let found = contents.windows(bvn.len()).any(|w| w == bvn.as_bytes());
    assert!(!found, "the BVN is in the database");
    let logs = server.logs();
    assert!(!logs.windows(bvn.len()).any(|w| w == bvn.as_bytes()));
}

#[tokio::test]
async fn limits_are_shown_and_set_per_level_and_bad_input_changes_nothing() {
    let server = TestServer::spawn().await;
    let all = server.cli(&["limits", "show"]);
    assert_eq!(all["levels"].as_array().unwrap().len(), 3);
    assert_eq!(all["levels"][0]["limits"]["daily_value"], 50_000.0);
    let set = server.cli(&[
        "limits",
        "set",
        "1",
        "--daily-value",
        "150000.50",
        "--daily-count",
        "none",
    ]);
    assert_eq!(set["level"]["limits"]["daily_value"], 150_000.5);
    assert!(set["level"]["limits"]["daily_count"].is_null());
    let one = server.cli(&["limits", "show", "1"]);
    assert_eq!(one["levels"].as_array().unwrap().len(), 1);
    assert_eq!(one["levels"][0]["limits"]["daily_value"], 150_000.5);

    let (code, refused) = server.cli_exit(&["limits", "set", "1", "--daily-value", "-5"]);
    assert_eq!(code, Some(2), "{refused}");
    let (code, _) = server.cli_exit(&["limits", "set", "3", "--daily-value", "5"]);
    assert_eq!(code, Some(2));
    let (code, _) = server.cli_exit(&["kyc", "set-level", "not-an-id", "1", "--reason", "x"]);
    assert_ne!(code, Some(0));
    let again = server.cli(&["limits", "show", "1"]);
    assert_eq!(again["levels"][0]["limits"]["daily_value"], 150_000.5);
}

/// `billpay limits rename`: the new name in `limits show` and the operator
/// log (the old name before it); a blank or over-long name and an unknown
/// level are refused (exit 2) and change nothing.
#[tokio::test]
async fn a_level_is_renamed_from_the_cli_and_a_bad_name_changes_nothing() {
    let server = TestServer::spawn().await;
    let was = server.cli(&["limits", "show", "1"])["levels"][0]["name"].clone();
    let renamed = server.cli(&["limits", "rename", "1", "  Verified by BVN or NIN "]);
    assert_eq!(renamed["level"]["level"], 1);
    assert_eq!(
        renamed["level"]["name"], "Verified by BVN or NIN",
        "trimmed"
    );
    assert_eq!(
        renamed["level"]["limits"]["daily_value"], 200_000.0,
        "the limits are kept"
    );
    let shown = server.cli(&["limits", "show", "1"]);
    assert_eq!(shown["levels"][0]["name"], "Verified by BVN or NIN");
    let log = server.cli(&["operator", "log", "--subject", "level 1"]);
    let line = &log["entries"][0];
    assert_eq!(line["action"], "limits.level_name", "{log}");
    assert_eq!(line["before"], was);
    assert_eq!(line["after"], "Verified by BVN or NIN");

    let too_long = "x".repeat(41);
    for args in [
        ["limits", "rename", "1", " "],
        ["limits", "rename", "1", too_long.as_str()],
        ["limits", "rename", "3", "Level three"],
    ] {
        let (code, refused) = server.cli_exit(&args);
        assert_eq!(code, Some(2), "{args:?}: {refused}");
        assert!(!refused["error"].is_null(), "{refused}");
    }
    let again = server.cli(&["limits", "show"]);
    let names: Vec<&str> = again["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[1], "Verified by BVN or NIN");
    let log = server.cli(&["operator", "log", "--subject", "level 1"]);
    assert_eq!(log["entries"].as_array().unwrap().len(), 1, "{log}");

    // the human output says it in a sentence
    let text = std::process::Command::new(BIN)
        .args(["limits", "rename", "0", "Email and phone"])
        .args(["--database-url", &server.database_url])
        .env("BILLPAY_MASTER_KEY", MASTER_KEY)
        .output()
        .unwrap();
    assert!(text.status.success());
    let said = String::from_utf8(text.stdout).unwrap();
    assert_eq!(said.trim(), "Level 0 is now named Email and phone");
}

/// The forms of one betting id a customer may send: padded at either end, a
/// no-break or zero-width space, lower case, full-width letters.
const BETTING_ID_FORMS: [&str; 7] = [
    " BK556677",
    "BK556677 ",
    "BK556677\u{a0}",
    "\u{200b}BK556677",
    "bk556677",
    "ＢＫ556677",
    "BK556677",
];

fn bet(customer_id: &str, naira: i64) -> serde_json::Value {
    let body = Bet.body(&reference(), "1234");
    let body = with(&body, "customer_id", serde_json::json!(customer_id));
    with(&body, "amount", serde_json::json!(naira))
}

/// Finding 4: `blocklist add --recipient BK556677` refuses the id in every
/// form it is sent in, live and in `/test`; the entry is kept canonical, so
/// adding it again in another form adds nothing.
#[tokio::test]
async fn a_blocked_betting_id_is_refused_in_every_form_it_is_sent_in() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let key = c.api_key.as_str();
    let start = balance_kobo(&server, key).await;
    let added = server.cli(&[
        "blocklist",
        "add",
        "--recipient",
        "BK556677",
        "--reason",
        "betting fraud",
    ]);
    assert_eq!(added["value"], "BK556677");
    for form in BETTING_ID_FORMS {
        for path in [Bet.live(), Bet.test()] {
            let r = server.post(key, &path, bet(form, 500)).await;
            assert_eq!(r.status, 403, "{form:?} on {path}: {}", r.body);
            r.assert_error(403, "blocked");
        }
    }
    assert_eq!(balance_kobo(&server, key).await, start);
    assert!(transactions(&server, &c.account_id, None).is_empty());

    let again = server.cli(&[
        "blocklist",
        "add",
        "--recipient",
        " ｂｋ556677\u{a0}",
        "--reason",
        "same id",
    ]);
    assert_eq!(again["value"], "BK556677");
    assert_eq!(again["added"], false, "{again}");
    let listed = server.cli(&["blocklist", "list"]);
    assert_eq!(listed["entries"].as_array().unwrap().len(), 1, "{listed}");
}

/// Finding 4: padding or re-casing a betting id does not reset the
/// per-recipient daily limit (nor the hourly count per recipient); what is
/// sent to the supplier and echoed is the canonical id.
#[tokio::test]
async fn a_per_recipient_limit_is_not_reset_by_padding_the_recipient() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let key = c.api_key.as_str();
    server.cli(&[
        "limits",
        "set",
        "--account",
        &c.account_id,
        "--per-recipient-daily",
        "300",
    ]);
    let placed = server
        .post(key, &Bet.live(), bet("bk556677\u{a0}", 200))
        .await;
    let placed = placed.assert_ok();
    assert_eq!(placed["recipient"], "BK556677", "{placed}");
    assert_eq!(placed["customer_id"], "BK556677", "{placed}");
    for form in BETTING_ID_FORMS {
        for path in [Bet.live(), Bet.test()] {
            let r = server.post(key, &path, bet(form, 200)).await;
            r.assert_refusal("limit_exceeded", "", &format!("{form:?} on {path}"));
        }
    }
    // ₦100 more is exactly the limit, in any form; then nothing.
    server.place(key, &Bet.live(), bet("ＢＫ556677", 100)).await;
    let r = server.post(key, &Bet.live(), bet(" BK556677", 100)).await;
    r.assert_refusal("limit_exceeded", "", "over ₦300");
    assert_eq!(transactions(&server, &c.account_id, None).len(), 2);

    // The hourly count per recipient is keyed the same way.
    let other = server.customer("100000");
    server.cli(&[
        "limits",
        "set",
        "--account",
        &other.account_id,
        "--recipient-hourly-count",
        "1",
        "--recipient-hourly-action",
        "refuse",
    ]);
    let key = other.api_key.as_str();
    server.place(key, &Bet.live(), bet("BK556677", 100)).await;
    for form in BETTING_ID_FORMS {
        let r = server.post(key, &Bet.live(), bet(form, 100)).await;
        r.assert_refusal("limit_exceeded", "", &format!("{form:?} this hour"));
    }
    server.assert_ledger_consistent(&c.account_id);
}
