//! Self-service upgrades (issue 49), through the real binary on the test
//! backend: the owner offers a tier with the CLI, the customer sees what it
//! would have saved and buys it over HTTP once per reference (raced ten
//! times: charged once), the next purchase is priced at the new tier at
//! once (on PostgreSQL on another node too), the fee is income in the sales
//! report, and the owner's downgrade gives it back only when asked, once.
//! `billpay audit` runs when each test ends (the kit's `Drop`).

use super::{airtime, buy, tier};
use crate::support::{Customer, Options, TestServer, reference};
use billpay_api_testkit::kind::kobo;
use serde_json::{Value, json};

/// `reseller`: 10 % off airtime, offered for ₦5,000.
fn offer_reseller(server: &TestServer, extra: &[&str]) {
    tier(
        server,
        "reseller",
        &[&["--product", "airtime", "--discount-percent", "10"]],
    );
    let mut args = vec!["tier", "offer", "reseller", "--fee", "5000"];
    args.extend_from_slice(extra);
    server.cli(&args);
}

async fn upgrade(server: &TestServer, who: &Customer, reference: &str) -> crate::support::Reply {
    let body = json!({ "tier": "reseller", "reference": reference });
    server.post(&who.api_key, "/v1/account/upgrade", body).await
}

async fn the_offer(server: &TestServer, who: &Customer) -> Value {
    let offers = server.get(&who.api_key, "/v1/account/upgrades").await;
    offers.assert_ok()["offers"][0].clone()
}

#[tokio::test]
async fn an_upgrade_raced_ten_times_charges_once_and_prices_the_next_purchase_at_the_new_tier() {
    let server = TestServer::spawn().await;
    offer_reseller(&server, &[]);
    let who = server.customer("10000");
    // another node on PostgreSQL, its price book read before the upgrade
    let other = match server.is_postgres() {
        true => Some(server.another_node(Options::default(), &[]).await),
        false => None,
    };
    let first = buy(&server, &who, "airtime", airtime(1000.0)).await;
    let code = first["reference_code"].as_str().unwrap();
    server.wait_final(&who.api_key, code).await;

    let offer = the_offer(&server, &who).await;
    assert_eq!(offer["tier"], "reseller");
    assert_eq!(kobo(&offer["fee"]), 500_000);
    assert_eq!(offer["eligible"], true);
    assert_eq!(offer["purchases_counted"], 1);
    assert_eq!(kobo(&offer["savings"]), 10_000, "10 % of ₦1,000 saved");
    if let Some(other) = &other {
        let listed = server.get(&who.api_key, "/v1/pricing").await;
        assert_eq!(listed.assert_ok()["tier"], "default");
        assert_eq!(
            super::would_deduct(other, &who, "airtime", airtime(1000.0)).await,
            100_000
        );
    }

    let same = reference();
    let racers = (0..10).map(|_| upgrade(&server, &who, &same));
    let answers = futures_util::future::join_all(racers).await;
    let mut charged = 0;
    for answer in &answers {
        let data = answer.assert_ok();
        assert_eq!(data["tier"], "reseller");
        assert_eq!(data["tier_before"], "default");
        assert_eq!(kobo(&data["balance"]), 400_000);
        charged += usize::from(data["repeated"] == false);
    }
    assert_eq!(charged, 1, "one of the ten charged, the others answered it");
    assert_eq!(server.balance(&who.api_key).await, 4000.0);

    // at once, on this node and on the other: 10 % off
    let next = buy(&server, &who, "airtime", airtime(1000.0)).await;
    assert_eq!(kobo(&next["amount"]), 90_000);
    if let Some(other) = &other {
        let there = buy(other, &who, "airtime", airtime(1000.0)).await;
        assert_eq!(
            kobo(&there["amount"]),
            90_000,
            "the other node priced it at the new tier"
        );
    }

    // another reference for the tier it is on: nothing charged
    let again = upgrade(&server, &who, &reference()).await;
    again.assert_error(422, "validation_error");
    let said = again.body["message"].as_str().unwrap();
    assert!(
        said.starts_with("tier: You are on reseller already"),
        "{said}"
    );
    let ledger = server.assert_ledger_consistent(&who.account_id);
    let fees: Vec<&Value> = ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["credit_reference"] == same.as_str())
        .collect();
    assert_eq!(fees.len(), 1, "one fee in the ledger: {ledger}");
    let offer = the_offer(&server, &who).await;
    assert_eq!(
        (offer["current"].clone(), offer["eligible"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(server.notices_of("upgrade_bought").await.len(), 1);
    let (passed, audit) = server.audit();
    assert!(passed, "{audit}");
}

#[tokio::test]
async fn an_upgrade_refused_charges_nothing_and_says_why() {
    let server = TestServer::spawn().await;
    offer_reseller(&server, &[]);
    let poor = server.customer("100");
    let short = upgrade(&server, &poor, &reference()).await;
    short.assert_error(422, "insufficient_balance");
    assert_eq!(server.balance(&poor.api_key).await, 100.0);

    let body = json!({ "tier": "gold", "reference": reference() });
    let unknown = server
        .post(&poor.api_key, "/v1/account/upgrade", body)
        .await;
    unknown.assert_error(422, "validation_error");
    let said = unknown.body["message"].as_str().unwrap();
    assert!(said.starts_with("tier: gold is not on offer"), "{said}");
    let bad = json!({ "tier": "reseller", "reference": "x" });
    server
        .post(&poor.api_key, "/v1/account/upgrade", bad)
        .await
        .assert_error(422, "validation_error");

    // an offer only after ₦20,000 spent in 30 days: a new account may not buy it
    let flags = ["--fee", "50", "--min-monthly-spend", "20000"];
    server.cli(&[&["tier", "offer", "reseller"][..], &flags].concat());
    let offer = the_offer(&server, &poor).await;
    assert_eq!(offer["eligible"], false);
    assert_eq!(kobo(&offer["min_monthly_spend"]), 2_000_000);
    let unmet = offer["unmet"].as_str().unwrap();
    assert!(
        unmet.contains("₦20,000.00 spent over the last 30 days"),
        "{offer}"
    );
    let unmet = upgrade(&server, &poor, &reference()).await;
    unmet.assert_error(422, "validation_error");
    assert_eq!(server.balance(&poor.api_key).await, 100.0);
    let priced = server.get(&poor.api_key, "/v1/pricing").await;
    assert_eq!(priced.assert_ok()["tier"], "default");

    // withdrawn: no offer
    server.cli(&["tier", "offer", "reseller", "--remove"]);
    let offers = server.get(&poor.api_key, "/v1/account/upgrades").await;
    assert_eq!(offers.assert_ok()["offers"], json!([]));
}

#[tokio::test]
async fn the_fee_is_income_and_a_downgrade_refunds_only_when_asked_once() {
    let server = TestServer::spawn().await;
    offer_reseller(&server, &[]);
    let who = server.customer("6000");
    upgrade(&server, &who, &reference()).await.assert_ok();
    let report = server.cli(&["report", "sales"]);
    assert_eq!(report["upgrades"]["bought"], 1);
    assert_eq!(kobo(&report["upgrades"]["income"]), 500_000, "{report}");

    let kept = server.cli(&["tier", "downgrade", &who.account_id, "--reason", "asked to"]);
    assert_eq!(kept["refunded"], false);
    assert_eq!(server.balance(&who.api_key).await, 1000.0);
    super::until_tier(&server, &who, "default").await;

    // bought again, then downgraded with the refund: given back once
    upgrade(&server, &who, &reference())
        .await
        .assert_error(422, "insufficient_balance");
    let other = server.customer("5000");
    upgrade(&server, &other, &reference()).await.assert_ok();
    let flags = [
        "tier",
        "downgrade",
        &other.account_id,
        "--refund",
        "--reason",
        "sold in error",
    ];
    assert_eq!(server.cli(&flags)["refunded"], true);
    assert_eq!(server.balance(&other.api_key).await, 5000.0);
    assert_eq!(server.cli(&flags)["refunded"], false, "once");
    assert_eq!(server.balance(&other.api_key).await, 5000.0);
    let report = server.cli(&["report", "sales"]);
    assert_eq!(report["upgrades"]["bought"], 2);
    assert_eq!(kobo(&report["upgrades"]["refunded"]), 500_000);
    assert_eq!(kobo(&report["upgrades"]["income"]), 500_000);
    let log = server.cli(&["operator", "log", "--subject", &other.account_id]);
    let text = log.to_string();
    assert!(
        text.contains("wallet.upgrade_refund") && text.contains("sold in error"),
        "{text}"
    );
    let (passed, audit) = server.audit();
    assert!(passed, "{audit}");
}
