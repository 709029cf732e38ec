//! A tier change applies to the next purchase and never to a past one;
//! under a burst of purchases each is charged one of the two prices and
//! the ledger stays exact.

use super::*;
use crate::support::{TestServer, reply};
use billpay_api_testkit::kind::kobo;

#[tokio::test]
async fn a_tier_change_between_two_purchases_leaves_each_its_own_price() {
    let server = TestServer::spawn().await;
    let who = server.customer("10000");
    tier(
        &server,
        "t",
        &[&["--product", "airtime", "--discount-percent", "2"]],
    );
    set_tier(&server, &who, "t").await;
    let first = buy(&server, &who, "airtime", airtime(1000.0)).await;
    assert_eq!(prices(&first), (98_000, 100_000));
    set_tier(&server, &who, "default").await;
    let second = buy(&server, &who, "airtime", airtime(1000.0)).await;
    assert_eq!(prices(&second), (100_000, 100_000));
    // Changing the tier's rule afterwards changes no past purchase either.
    server.cli(&[
        "tier",
        "rule",
        "t",
        "--product",
        "airtime",
        "--discount-percent",
        "5",
    ]);
    for (d, charged) in [(&first, 98_000), (&second, 100_000)] {
        let code = d["reference_code"].as_str().unwrap();
        let status = server.wait_final(&who.api_key, code).await;
        assert_eq!(prices(&status), (charged, 100_000));
        let shown = &server.cli(&["transaction", "show", code])["transaction"];
        assert_eq!(kobo(&shown["amount"]), charged);
    }
    assert_eq!(server.balance(&who.api_key).await, 10000.0 - 980.0 - 1000.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_racing_a_tier_change_is_charged_one_of_the_two_prices() {
    let server = TestServer::spawn().await;
    let who = server.customer("100000");
    tier(
        &server,
        "t",
        &[&["--product", "airtime", "--discount-percent", "2"]],
    );
    set_tier(&server, &who, "t").await;
    let start = kobo(&json!(server.balance(&who.api_key).await));
    let mut burst = tokio::task::JoinSet::new();
    for _ in 0..60 {
        let (http, url) = (server.http.clone(), server.url("/v1/airtime/purchase"));
        let (key, mut body) = (who.api_key.clone(), airtime(1000.0));
        body["reference"] = json!(reference());
        burst.spawn(async move {
            let sent = http.post(url).bearer_auth(key).json(&body).send().await;
            reply(sent.unwrap()).await.assert_ok().clone()
        });
    }
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    server.cli(&["account", "set-tier", &who.account_id, "default"]);
    let accepted: Vec<Value> = burst.join_all().await;
    let charged: Vec<i64> = accepted.iter().map(|d| prices(d).0).collect();
    assert!(
        charged.iter().all(|c| *c == 98_000 || *c == 100_000),
        "{charged:?}"
    );
    for d in &accepted {
        assert_eq!(
            kobo(&d["balance_before"]) - kobo(&d["balance_after"]),
            prices(d).0
        );
    }
    let end = kobo(&json!(server.balance(&who.api_key).await));
    assert_eq!(start - end, charged.iter().sum::<i64>());
    // After the change has applied, the list price.
    until_tier(&server, &who, "default").await;
    assert_eq!(
        prices(&buy(&server, &who, "airtime", airtime(1000.0)).await).0,
        100_000
    );
    server.assert_ledger_consistent(&who.account_id);
}
