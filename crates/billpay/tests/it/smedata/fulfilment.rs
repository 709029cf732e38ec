//! What an SME-data site sells for us, bought once each at its real cost;
//! a refusal that fails over; an order processing then successful; a
//! success the site's admin fails later, refunded exactly once.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_product_a_site_sells_is_bought_once_at_its_real_cost() {
    let fake = FakeSmedata::start().await;
    let server = sites(&[("husmodata", &fake, "")], "", &[]).await;
    let who = server.customer("200000");
    let wallet = fake.balance();
    // (product, body, the number the site sees, what it charged us in kobo)
    let orders = [
        ("data", data("08011111112"), "08011111112", 25_000),
        (
            "airtime",
            json!({ "provider_id": "airtel", "amount": 100, "phone": "08011111113" }),
            "08011111113",
            9_800,
        ),
        (
            "electricity",
            json!({ "provider_id": "eko-electric", "amount": 1000, "meter_number": "1111111111111", "meter_type": 1 }),
            "1111111111111",
            100_000,
        ),
        (
            "cable",
            json!({ "provider_id": "gotv", "plan_id": "gotv-max", "smartcard_number": "1212121212" }),
            "1212121212",
            157_500,
        ),
    ];
    let mut charged = 0;
    for (product, body, number, cost) in orders {
        let code = buy(&server, &who, product, body).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "successful", "{product}: {status}");
        assert_eq!(fake.posts_for(number).len(), 1, "{product}: bought once");
        assert_eq!(fake.orders_for(number), 1, "{product}: one order there");
        // The site's id is the supplier reference; the cost is what its wallet lost.
        let id = fake.order_id(number).unwrap().to_string();
        assert_eq!(
            served_by(&server, &code),
            ("husmodata".into(), id),
            "{product}"
        );
        let tx = &shown(&server, &code)["transaction"];
        assert_eq!(
            tx["cost"].as_f64(),
            Some(cost as f64 / 100.0),
            "{product}: {tx}"
        );
        charged += cost;
        if product == "electricity" {
            // The token without the site's `Token : ` label.
            assert_eq!(status["pin"], "4216-7939-6032-0173-3524", "{status}");
        }
    }
    assert_eq!(
        fake.balance(),
        wallet - charged,
        "the site's wallet moved by what it charged"
    );
    // The margin report: by supplier, the site's line has the real cost.
    let report = server.cli(&["report", "sales", "--by", "supplier"]);
    let line = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["key"] == "husmodata")
        .cloned()
        .unwrap_or_else(|| panic!("no husmodata line: {report}"));
    assert_eq!(
        line["cost"].as_f64(),
        Some(charged as f64 / 100.0),
        "{line}"
    );
    assert_eq!(line["cost_unknown"], 0, "{line}");
    let profit = line["charged"].as_f64().unwrap() - charged as f64 / 100.0;
    assert!(
        (line["profit"].as_f64().unwrap() - profit).abs() < 0.005,
        "{line}"
    );
    // What the site received: its ids, its plan, always Customer_Phone.
    assert_eq!(
        fake.posts_for("08011111112")[0],
        json!({ "network": 1, "mobile_number": "08011111112", "plan": 6, "Ported_number": true })
    );
    let airtime = &fake.posts_for("08011111113")[0];
    assert_eq!(
        (&airtime["network"], &airtime["airtime_type"]),
        (&json!(4), &json!("VTU"))
    );
    let meter = &fake.posts_for("1111111111111")[0];
    assert_eq!(
        (
            &meter["disco_name"],
            &meter["Customer_Phone"],
            &meter["MeterType"]
        ),
        (&json!(2), &json!("08030000000"), &json!(1))
    );
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_fails_over_and_a_plan_the_site_does_not_list_is_not_bought_there() {
    let site = FakeSmedata::start_with(200, false, &SCRIPT_NETWORKS).await;
    let clubkonnect = FakeClubkonnect::start().await;
    let env = clubkonnect.env();
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.push(("BILLPAY_CLUBKONNECT_TIMEOUT_MS", "1000"));
    let server = sites(
        &[("gladtidings", &site, "")],
        "data = [\"gladtidings\", \"clubkonnect\"]",
        &env,
    )
    .await;
    let who = server.customer("5000");
    let price = sme_1gb_price(&server);

    // 400 {"error": [...]}: refused before it was taken, so ClubKonnect delivers.
    let refused = "08000000400";
    let code = buy(&server, &who, "data", data(refused)).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(site.posts_for(refused).len(), 1);
    assert_eq!(site.orders_for(refused), 0);
    assert_eq!(clubkonnect.purchases_for(refused).len(), 1);
    assert_eq!(served_by(&server, &code).0, "clubkonnect");

    // A plan without the site's code is not sent there at all.
    let unlisted =
        json!({ "provider_id": "mtn", "plan_id": "mtn-sme-2gb", "phone": "08011111119" });
    let code = buy(&server, &who, "data", unlisted).await;
    let status = server.wait_final(&who.api_key, &code).await;
    assert!(site.posts_for("08011111119").is_empty());
    let second = match status["status"].as_str() {
        Some("successful") => status["amount"].as_f64().unwrap(),
        _ => 0.0,
    };
    assert_eq!(server.balance(&who.api_key).await, 5000.0 - price - second);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_at_the_only_site_is_refunded_once() {
    let fake = FakeSmedata::start().await;
    let server = sites(&[("husmodata", &fake, "")], "", &[]).await;
    let who = server.customer("5000");
    let code = buy(&server, &who, "data", data("08000000400")).await;
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "failed", "{status}");
    assert_eq!(server.balance(&who.api_key).await, 5000.0);
    assert_eq!(fake.balance(), 5_000_000, "nothing charged there");
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processing_then_successful_is_asked_by_the_sites_id() {
    let fake = FakeSmedata::start().await;
    let server = sites(&[("husmodata", &fake, "")], "", &[]).await;
    let who = server.customer("5000");
    let code = buy(&server, &who, "data", data("08000000102")).await;
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "successful", "{status}");
    assert!(fake.item_reads() >= 1, "asked by its id");
    assert_eq!(fake.listing_reads(), 0, "its id was known: no search");
    assert_eq!(fake.posts_for("08000000102").len(), 1);
    assert_eq!(
        shown(&server, &code)["transaction"]["cost"].as_f64(),
        Some(250.0)
    );
    assert_eq!(
        server.balance(&who.api_key).await,
        5000.0 - sme_1gb_price(&server)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_the_sites_admin_fails_later_is_refunded_exactly_once() {
    let fake = FakeSmedata::start().await;
    let watch = [("BILLPAY_REVERSAL_WATCH_MS", "300,600,900,1200,30000")];
    let server = sites(&[("husmodata", &fake, "")], "", &watch).await;
    let who = server.customer("5000");
    let number = "08000000602";
    let code = buy(&server, &who, "data", data(number)).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    let price = sme_1gb_price(&server);
    assert_eq!(server.balance(&who.api_key).await, 5000.0 - price);
    let wallet = fake.balance();
    fake.fail_by_admin(number);
    assert_eq!(
        fake.balance(),
        wallet + 25_000,
        "the site refunded its wallet"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = server
            .get(
                &who.api_key,
                &format!("/v1/transaction/status?reference_code={code}"),
            )
            .await;
        if status.assert_ok()["status"] == "failed" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never reversed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Later watches find it failed again: still refunded once.
    let reads = fake.item_reads();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        fake.item_reads() <= reads + 1,
        "a reversed purchase is watched no more"
    );
    assert_eq!(server.balance(&who.api_key).await, 5000.0);
    assert_eq!(fake.posts_for(number).len(), 1);
    server.assert_ledger_consistent(&who.account_id);
}
