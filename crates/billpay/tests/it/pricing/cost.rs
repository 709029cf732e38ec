//! Every purchase records what its supplier charged: the sandbox the face
//! value less `BILLPAY_SANDBOX_COMMISSION_PERCENT`, VTpass its answer's
//! `total_amount`; `transaction show` prints face value, charged, cost and
//! profit.

use super::*;
use crate::support::vtpass::{FakeVtpass, total_amount};
use crate::support::{Options, TestServer};
use billpay_api_testkit::kind::kobo;

#[tokio::test]
async fn the_sandbox_charges_the_face_value_less_its_commission() {
    let env = [("BILLPAY_SANDBOX_COMMISSION_PERCENT", "2.5")];
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    let who = server.customer("5000");
    tier(
        &server,
        "t",
        &[&["--product", "airtime", "--discount-percent", "1"]],
    );
    set_tier(&server, &who, "t").await;
    let d = buy(&server, &who, "airtime", airtime(1000.0)).await;
    let code = d["reference_code"].as_str().unwrap();
    server.wait_final(&who.api_key, code).await;
    let shown = server.cli(&["transaction", "show", code]);
    let tx = &shown["transaction"];
    assert_eq!(
        (kobo(&tx["face_value"]), kobo(&tx["amount"])),
        (100_000, 99_000)
    );
    assert_eq!(kobo(&tx["cost"]), 97_500, "{shown}");
    assert_eq!(kobo(&shown["profit"]), 1_500);
    assert_eq!(tx["tier"], "t");
    // A failed purchase costs nothing and has no profit.
    let mut failing = airtime(1000.0);
    failing["phone"] = json!("08030000000");
    let d = buy(&server, &who, "airtime", failing).await;
    let code = d["reference_code"].as_str().unwrap();
    assert_eq!(
        server.wait_final(&who.api_key, code).await["status"],
        "failed"
    );
    let shown = server.cli(&["transaction", "show", code]);
    assert!(
        shown["transaction"]["cost"].is_null() && shown["profit"].is_null(),
        "{shown}"
    );
}

#[tokio::test]
async fn the_default_sandbox_commission_is_three_percent_and_text_output_shows_it() {
    let server = TestServer::spawn().await;
    let who = server.customer("5000");
    let d = buy(&server, &who, "airtime", airtime(200.0)).await;
    let code = d["reference_code"].as_str().unwrap();
    server.wait_final(&who.api_key, code).await;
    let tx = &server.cli(&["transaction", "show", code])["transaction"];
    assert_eq!((kobo(&tx["amount"]), kobo(&tx["cost"])), (20_000, 19_400));
    let text = std::process::Command::new(crate::support::BIN)
        .args([
            "transaction",
            "show",
            code,
            "--database-url",
            &server.database_url,
        ])
        .env("BILLPAY_MASTER_KEY", crate::support::MASTER_KEY)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    for line in [
        "face value 200.00",
        "charged    200.00 (list price)",
        "cost       194.00",
        "profit     6.00",
    ] {
        assert!(text.contains(line), "{line:?} not in {text}");
    }
}

#[tokio::test]
async fn vtpass_total_amount_is_the_cost() {
    let fake = FakeVtpass::start().await;
    let server = crate::vtpass::server_with(&fake, &[]).await;
    let who = server.customer("5000");
    tier(
        &server,
        "t",
        &[&["--product", "airtime", "--discount-percent", "1"]],
    );
    set_tier(&server, &who, "t").await;
    let phone = "08011111111";
    let body = json!({ "provider_id": "mtn", "amount": 100, "phone": phone });
    let d = buy(&server, &who, "airtime", body).await;
    let code = d["reference_code"].as_str().unwrap();
    assert_eq!(
        server.wait_final(&who.api_key, code).await["status"],
        "successful"
    );
    // VTpass was asked for the face value, not our customer's price.
    let paid = fake.pay_calls_for(phone);
    assert_eq!(paid.len(), 1);
    assert_eq!(paid[0]["amount"].as_f64(), Some(100.0));
    let (_, total) = total_amount(&paid[0]);
    let shown = server.cli(&["transaction", "show", code]);
    let tx = &shown["transaction"];
    assert_eq!(kobo(&tx["cost"]), (total * 100.0).round() as i64, "{shown}");
    assert_eq!(kobo(&tx["cost"]), 9_650);
    assert_eq!(kobo(&tx["amount"]), 9_900);
    assert_eq!(kobo(&shown["profit"]), 250);
}

#[tokio::test]
async fn the_cli_refuses_a_rule_below_a_plans_last_cost_unless_allowed() {
    let server = TestServer::spawn().await;
    let customer = server.customer("5000");
    // The sandbox charges ₦600 less 3%: MTN 1GB (SME) last cost ₦582.
    let body = serde_json::json!({"provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": "08031234567", "reference": reference()});
    let code = server
        .place(&customer.api_key, "/v1/data/purchase", body)
        .await;
    server.wait_final(&customer.api_key, &code).await;
    server.cli(&["tier", "create", "resellers"]);
    let rule = [
        "tier",
        "rule",
        "resellers",
        "--product",
        "data",
        "--provider",
        "MTN",
        "--plan",
        "mtn-sme-1gb",
        "--price",
        "560",
    ];
    let (ok, out) = server.cli_result(&rule);
    assert!(!ok, "{out}");
    let error = out["error"].as_str().unwrap();
    assert!(
        error.contains("MTN 1GB (SME, 7 days) at ₦560.00 is below its last supplier cost ₦582.00")
            && error.contains("--allow-below-cost"),
        "{error}"
    );
    let shown = server.cli(&["tier", "show", "resellers"]);
    assert_eq!(shown["rules"].as_array().unwrap().len(), 0, "nothing set");
    let mut allowed = rule.to_vec();
    allowed.push("--allow-below-cost");
    let set = server.cli(&allowed);
    assert_eq!(set["rules"][0]["kind"], "price", "{set}");
    assert_eq!(set["rules"][0]["plan"], "mtn-sme-1gb", "{set}");
    // At or above the cost needs no flag.
    let fair = [
        "tier",
        "rule",
        "resellers",
        "--product",
        "data",
        "--provider",
        "mtn",
        "--plan",
        "mtn-sme-1gb",
        "--price",
        "590",
    ];
    assert!(server.cli_result(&fair).0);
}
