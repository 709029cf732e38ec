//! Which rule prices a purchase: plan > provider > product > list price;
//! discounts half-up to the kobo; fees on the face value; limits on the
//! face value; listings and `/test` at the caller's prices.

use super::*;
use crate::support::TestServer;
use billpay_api_testkit::kind::kobo;

#[tokio::test]
async fn the_most_specific_rule_wins_at_each_level() {
    let server = TestServer::spawn().await;
    let who = server.customer("50000");
    tier(
        &server,
        "reseller",
        &[
            &["--product", "data", "--discount-percent", "1"],
            &[
                "--product",
                "data",
                "--provider",
                "mtn",
                "--discount-percent",
                "2",
            ],
            &[
                "--product",
                "data",
                "--provider",
                "mtn",
                "--plan",
                "mtn-sme-1gb",
                "--price",
                "550",
            ],
            &[
                "--product",
                "airtime",
                "--provider",
                "mtn",
                "--discount-percent",
                "2.5",
            ],
        ],
    );
    // Before the account is on the tier: list prices.
    assert_eq!(
        would_deduct(&server, &who, "data", data("mtn", "mtn-sme-1gb")).await,
        60_000
    );
    set_tier(&server, &who, "reseller").await;

    // plan > provider > product > list price
    assert_eq!(
        would_deduct(&server, &who, "data", data("mtn", "mtn-sme-1gb")).await,
        55_000
    );
    assert_eq!(
        would_deduct(&server, &who, "data", data("mtn", "mtn-sme-2gb")).await,
        127_400
    );
    assert_eq!(
        would_deduct(&server, &who, "data", data("glo", "glo-gifting-1-5gb")).await,
        49_500
    );
    assert_eq!(
        would_deduct(&server, &who, "electricity", electricity(1500.5)).await,
        150_050
    );

    // Live: debited the tier's price, face value beside it, everywhere.
    let before = kobo(&json!(server.balance(&who.api_key).await));
    let d = buy(&server, &who, "data", data("mtn", "mtn-sme-2gb")).await;
    assert_eq!(prices(&d), (127_400, 130_000));
    assert_eq!(
        kobo(&d["balance_before"]) - kobo(&d["balance_after"]),
        127_400
    );
    assert_eq!(kobo(&d["balance_before"]), before);
    let status = server
        .wait_final(&who.api_key, d["reference_code"].as_str().unwrap())
        .await;
    assert_eq!(prices(&status), (127_400, 130_000));

    // The rule at the plan's level removed: the provider's applies.
    server.cli(&[
        "tier",
        "rule",
        "reseller",
        "--product",
        "data",
        "--provider",
        "mtn",
        "--plan",
        "mtn-sme-1gb",
        "--remove",
    ]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while would_deduct(&server, &who, "data", data("mtn", "mtn-sme-1gb")).await != 58_800 {
        assert!(
            std::time::Instant::now() < deadline,
            "the removal never applied"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn discounts_round_half_up_to_the_kobo() {
    let server = TestServer::spawn().await;
    let who = server.customer("5000");
    tier(
        &server,
        "partner",
        &[&["--product", "airtime", "--discount-percent", "2.5"]],
    );
    set_tier(&server, &who, "partner").await;
    // ₦100.50 less 2.5% = 97.9875 → ₦97.99; ₦50.10 less 2.5% = 48.8475 → ₦48.85;
    // ₦50.30 less 2.5% = 49.0425 → ₦49.04.
    for (face, charged) in [(100.5, 9_799), (50.1, 4_885), (50.3, 4_904)] {
        let d = buy(&server, &who, "airtime", airtime(face)).await;
        assert_eq!(
            prices(&d),
            (charged, (face * 100.0_f64).round() as i64),
            "{face}: {d}"
        );
        assert_eq!(
            kobo(&d["balance_before"]) - kobo(&d["balance_after"]),
            charged
        );
        let status = server
            .wait_final(&who.api_key, d["reference_code"].as_str().unwrap())
            .await;
        assert_eq!(kobo(&status["amount"]), charged);
    }
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn a_fee_on_electricity_is_added_and_limits_apply_to_the_face_value() {
    let server = TestServer::spawn().await;
    let who = server.customer("5000");
    tier(
        &server,
        "retail",
        &[&["--product", "electricity", "--fee", "100"]],
    );
    set_tier(&server, &who, "retail").await;
    assert_eq!(
        would_deduct(&server, &who, "electricity", electricity(1000.0)).await,
        110_000
    );
    let d = buy(&server, &who, "electricity", electricity(1000.0)).await;
    assert_eq!(prices(&d), (110_000, 100_000));
    let status = server
        .wait_final(&who.api_key, d["reference_code"].as_str().unwrap())
        .await;
    assert_eq!(status["status"], "successful");
    assert_eq!(prices(&status), (110_000, 100_000));
    // ₦999 is under the minimum even though ₦1,099 would be charged.
    let mut body = electricity(999.0);
    body["reference"] = json!(reference());
    let refused = server
        .post(&who.api_key, "/v1/electricity/purchase", body)
        .await;
    refused.assert_error(422, "minimum_amount");
    assert_eq!(server.balance(&who.api_key).await, 3900.0);
}

#[tokio::test]
async fn accounts_on_different_tiers_pay_their_own_price_and_see_it_listed() {
    let server = TestServer::spawn().await;
    let gold = server.customer("5000");
    let retail = server.customer("5000");
    tier(
        &server,
        "gold",
        &[
            &[
                "--product",
                "data",
                "--provider",
                "mtn",
                "--discount-percent",
                "3",
            ],
            &[
                "--product",
                "epin",
                "--provider",
                "airtel",
                "--plan",
                "200",
                "--price",
                "195",
            ],
            &[
                "--product",
                "cable",
                "--provider",
                "dstv",
                "--plan",
                "dstv-padi",
                "--price",
                "2900",
            ],
        ],
    );
    set_tier(&server, &gold, "gold").await;

    let plan = |list: &Value, id: &str| {
        let plans = list.as_array().unwrap();
        plans.iter().find(|p| p["plan_id"] == id).unwrap().clone()
    };
    let listed = server
        .get(&gold.api_key, "/v1/data-plans?provider=mtn")
        .await;
    let p = plan(listed.assert_ok(), "mtn-sme-1gb");
    assert_eq!(
        (kobo(&p["price"]), kobo(&p["face_value"])),
        (58_200, 60_000)
    );
    let listed = server
        .get(&retail.api_key, "/v1/data-plans?provider=mtn")
        .await;
    let p = plan(listed.assert_ok(), "mtn-sme-1gb");
    assert_eq!(
        (kobo(&p["price"]), kobo(&p["face_value"])),
        (60_000, 60_000)
    );
    let cable = server
        .get(&gold.api_key, "/v1/cable-plans?provider=dstv")
        .await;
    let padi = plan(cable.assert_ok(), "dstv-padi");
    assert_eq!(kobo(&padi["price"]), 290_000);
    let pins = server
        .get(
            &gold.api_key,
            "/v1/recharge-pins/denominations?provider=airtel",
        )
        .await;
    let pins = pins.assert_ok().as_array().unwrap().clone();
    let two_hundred = pins
        .iter()
        .find(|d| kobo(&d["denomination"]) == 20_000)
        .unwrap();
    assert_eq!(kobo(&two_hundred["price"]), 19_500);

    // The same plan bought by both.
    let a = buy(&server, &gold, "data", data("mtn", "mtn-sme-1gb")).await;
    let b = buy(&server, &retail, "data", data("mtn", "mtn-sme-1gb")).await;
    assert_eq!(prices(&a), (58_200, 60_000));
    assert_eq!(prices(&b), (60_000, 60_000));
    // E-pins: the fixed price per pin.
    let pins = json!({ "provider_id": "airtel", "denomination": 200, "quantity": 3 });
    assert_eq!(
        would_deduct(&server, &gold, "epin", pins.clone()).await,
        58_500
    );
    assert_eq!(would_deduct(&server, &retail, "epin", pins).await, 60_000);

    // What each is told about its prices.
    let mine = server.get(&gold.api_key, "/v1/pricing").await;
    let mine = mine.assert_ok();
    assert_eq!(mine["tier"], "gold");
    let rules = mine["prices"].as_array().unwrap();
    let find = |product: &str, provider: &str, plan: Option<&str>| {
        rules
            .iter()
            .find(|r| {
                r["product"] == product && r["provider"] == provider && r["plan"].as_str() == plan
            })
            .unwrap_or_else(|| panic!("{product} {provider} {plan:?} in {mine}"))
            .clone()
    };
    let mtn = find("data", "mtn", None);
    assert_eq!(
        (mtn["kind"].as_str(), mtn["value"].as_f64()),
        (Some("discount_percent"), Some(3.0))
    );
    let pin = find("epin", "airtel", Some("200"));
    assert_eq!(
        (pin["kind"].as_str(), pin["value"].as_f64()),
        (Some("price"), Some(195.0))
    );
    assert_eq!(find("airtime", "mtn", None)["kind"], "list_price");
    let theirs = server.get(&retail.api_key, "/v1/pricing").await;
    assert_eq!(theirs.assert_ok()["tier"], "default");
}

#[tokio::test]
async fn the_cli_refuses_what_no_catalogue_sells_naming_the_flag() {
    let server = TestServer::spawn().await;
    server.cli(&["tier", "create", "api"]);
    let refused = |args: &[&str], flag: &str| {
        let mut all = vec!["tier", "rule", "api"];
        all.extend_from_slice(args);
        let (ok, out) = server.cli_result(&all);
        assert!(!ok, "{args:?} was accepted: {out}");
        let error = out["error"].as_str().unwrap();
        assert!(error.contains(flag), "{args:?}: {error}");
    };
    refused(&["--product", "tv", "--fee", "1"], "--product");
    refused(
        &["--product", "data", "--provider", "nope", "--fee", "1"],
        "--provider",
    );
    refused(
        &[
            "--product",
            "data",
            "--provider",
            "mtn",
            "--plan",
            "mtn-none",
            "--price",
            "1",
        ],
        "--plan",
    );
    refused(&["--product", "airtime", "--price", "90"], "--price");
    refused(
        &["--product", "airtime", "--discount-percent", "100"],
        "--discount-percent",
    );
    refused(
        &["--product", "airtime", "--discount-percent", "1.234"],
        "--discount-percent",
    );
    refused(&["--product", "betting", "--fee", "abc"], "--fee");
    let (ok, out) =
        server.cli_result(&["tier", "rule", "nope", "--product", "airtime", "--fee", "1"]);
    assert!(
        !ok && out["error"]
            .as_str()
            .unwrap()
            .contains("no tier named nope"),
        "{out}"
    );
    let (ok, out) = server.cli_result(&["tier", "create", "api"]);
    assert!(
        !ok && out["error"].as_str().unwrap().contains("already exists"),
        "{out}"
    );
    let (ok, out) = server.cli_result(&["tier", "create", "Bad Name"]);
    assert!(
        !ok && out["error"].as_str().unwrap().contains("--name"),
        "{out}"
    );

    // A markup, a fee, shown back; the account's tier in `account show`.
    server.cli(&[
        "tier",
        "rule",
        "api",
        "--product",
        "airtime",
        "--discount-percent",
        "-1.5",
    ]);
    server.cli(&[
        "tier",
        "rule",
        "api",
        "--product",
        "betting",
        "--provider",
        "bet9ja",
        "--fee",
        "50",
    ]);
    let shown = server.cli(&["tier", "show", "api"]);
    let rules = shown["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2, "{shown}");
    assert_eq!(
        rules[0],
        json!({ "product": "airtime", "provider": null, "plan": null, "kind": "discount_percent", "value": -1.5 })
    );
    assert_eq!(rules[1]["kind"], "fee");
    assert_eq!(rules[1]["value"], 50.0);
    let who = server.customer("100");
    assert_eq!(
        server.cli(&["account", "show", &who.account_id])["tier"],
        "default"
    );
    server.cli(&["account", "set-tier", &who.account_id, "api"]);
    assert_eq!(
        server.cli(&["account", "show", &who.account_id])["tier"],
        "api"
    );
    let list = server.cli(&["tier", "list"]);
    assert_eq!(list["tiers"][0]["name"], "default");
    assert_eq!(
        list["tiers"][1],
        json!({ "name": "api", "rules": 2, "accounts": 1, "developer_access": false })
    );
    let (ok, _) = server.cli_result(&["account", "set-tier", &who.account_id, "missing"]);
    assert!(!ok);
    server.cli(&["account", "set-tier", &who.account_id, "default"]);
    assert_eq!(
        server.cli(&["account", "show", &who.account_id])["tier"],
        "default"
    );
}
