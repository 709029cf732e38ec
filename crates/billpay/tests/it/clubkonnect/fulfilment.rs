//! Fulfilment by ClubKonnect: every product it sells, the outcome table
//! (pending resolved by query, refusals and cancellations refunded once,
//! unknown answers never refunded), callbacks that only cause a query, and a
//! crash between sending and recording.

use super::*;

#[tokio::test]
async fn every_product_clubkonnect_sells_is_delivered() {
    let fake = FakeClubkonnect::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("200000");
    let phone = "08011111111";
    // (product, body, the number ClubKonnect sees, pins in `pin`: separator and count)
    let orders = [
        (
            "airtime",
            json!({ "provider_id": "9mobile", "amount": 100, "phone": phone }),
            phone,
            None,
        ),
        (
            "data",
            json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": "08011111112" }),
            "08011111112",
            None,
        ),
        (
            "cable",
            json!({ "provider_id": "gotv", "plan_id": "gotv-max", "smartcard_number": "1212121212" }),
            "1212121212",
            None,
        ),
        (
            "electricity",
            json!({ "provider_id": "ikeja-electric", "amount": 1000, "meter_number": "1111111111111", "meter_type": 1 }),
            "1111111111111",
            Some(("-", 5)),
        ),
        (
            "education",
            json!({ "provider_id": "waec", "quantity": 1, "phone": "08011111113" }),
            "08011111113",
            Some((",", 1)),
        ),
        (
            "education",
            json!({ "provider_id": "jamb", "quantity": 1, "phone": "08011111114", "profile_id": "1234567890" }),
            "08011111114",
            Some((",", 1)),
        ),
        (
            "bet",
            json!({ "provider_id": "bet9ja", "customer_id": "12345", "amount": 500 }),
            "12345",
            None,
        ),
    ];
    for (product, body, number, pin) in orders {
        let code = buy(&server, &who, product, body).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "successful", "{product}: {status}");
        // RequestID is our reference code; the operator sees who served it.
        assert_eq!(
            served_by(&server, &code),
            ("clubkonnect".into(), code.clone())
        );
        let calls = fake.purchases_for(number);
        assert_eq!(calls.len(), 1, "{product}: bought once");
        assert_eq!(calls[0]["RequestID"], code);
        assert_eq!(
            calls[0]["CallBackURL"],
            "https://billpay.example/callbacks/clubkonnect"
        );
        if let Some((separator, parts)) = pin {
            let pin = status["pin"].as_str().unwrap_or_default();
            assert_eq!(
                pin.split(separator).filter(|p| !p.is_empty()).count(),
                parts,
                "{status}"
            );
        }
    }
    // What ClubKonnect received: its codes, from the catalogue.
    assert_eq!(fake.purchases_for(phone)[0]["MobileNetwork"], "03");
    assert_eq!(fake.purchases_for("08011111112")[0]["DataPlan"], "1000.0");
    assert_eq!(
        fake.purchases_for("1111111111111")[0]["ElectricCompany"],
        "02"
    );
    assert_eq!(
        fake.purchases_for("08011111114")[0]["ProfileID"],
        "1234567890"
    );

    // E-pins: two cards with their pins and serials.
    let accepted = server
        .post(&who.api_key, "/v1/epin/purchase", json!({ "provider_id": "airtel", "denomination": 100, "quantity": 2, "reference": crate::support::reference() }))
        .await;
    let accepted = accepted.assert_ok();
    let code = accepted["reference_code"].as_str().unwrap();
    assert_eq!(
        server.wait_final(&who.api_key, code).await["status"],
        "successful"
    );
    let batch = server
        .get(
            &who.api_key,
            &format!(
                "/v1/epin/batch?batch_id={}",
                accepted["batch_id"].as_str().unwrap()
            ),
        )
        .await;
    let pins = batch.assert_ok()["pins"].as_array().unwrap().clone();
    assert_eq!(pins.len(), 2, "{pins:?}");
    assert!(
        pins.iter()
            .all(|p| p["serial"].as_str().unwrap().starts_with("SN")
                && p["pin"].as_str().unwrap().len() >= 13)
    );

    // Verification: betting, cable and meters at ClubKonnect.
    let found = server
        .post(
            &who.api_key,
            "/v1/bet/verify",
            json!({ "provider_id": "bet9ja", "customer_id": "12345" }),
        )
        .await;
    assert_eq!(found.assert_ok()["customer_name"], "ADA OBI");
    server
        .post(
            &who.api_key,
            "/v1/cable/verify",
            json!({ "provider_id": "gotv", "smartcard_number": "7012345678" }),
        )
        .await
        .assert_error(422, "customer_not_found");

    // JAMB: the profile ID is required, and checked before the pin is bought.
    let missing = server
        .post(&who.api_key, "/v1/education/purchase", json!({ "provider_id": "jamb", "quantity": 1, "reference": crate::support::reference() }))
        .await;
    missing.assert_error(422, "validation_error");
    let before = server.balance(&who.api_key).await;
    let unknown = json!({ "provider_id": "jamb", "quantity": 1, "phone": "08011111115", "profile_id": "9999999999" });
    let code = buy(&server, &who, "education", unknown).await;
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "failed", "{status}");
    assert!(
        fake.purchases_for("08011111115").is_empty(),
        "no pin bought for an unknown profile"
    );
    assert_eq!(server.balance(&who.api_key).await, before);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn pending_resolves_by_query_and_unclear_answers_are_never_refunded() {
    let fake = FakeClubkonnect::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("10000");
    // Received, "network unresponsive", slow (a timeout), an HTML 503 page, a
    // dropped connection: each bought once, settled by query, charged once.
    let numbers = [
        "08000000100",
        "08000000201",
        "08000000300",
        "08000000503",
        "08000000000",
    ];
    for number in numbers {
        let code = buy(&server, &who, "airtime", airtime(number)).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "successful", "{number}: {status}");
        assert_eq!(fake.purchases_for(number).len(), 1, "{number}: bought once");
        assert_eq!(fake.orders_for(number), 1, "{number}");
    }
    assert!(fake.queries() >= numbers.len());
    // 299 "unspecified error": unknown, queried again and again, never refunded.
    let unknown = "08000000299";
    let code = buy(&server, &who, "airtime", airtime(unknown)).await;
    let queries = fake.queries();
    until("queried about the 299", || fake.queries() > queries + 1).await;
    let status = server
        .get(
            &who.api_key,
            &format!("/v1/transaction/status?reference_code={code}"),
        )
        .await;
    assert_eq!(status.assert_ok()["status"], "processing");
    assert_eq!(fake.purchases_for(unknown).len(), 1, "never bought again");
    assert_eq!(server.balance(&who.api_key).await, 10_000.0 - 6.0 * 500.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn refusals_and_cancellations_refund_once() {
    let fake = FakeClubkonnect::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("5000");
    // 417 refused (not charged), 509 cancelled after pending, 602 credited back.
    for number in ["08000000417", "08000000509", "08000000602"] {
        let code = buy(&server, &who, "airtime", airtime(number)).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "failed", "{number}: {status}");
        assert!(
            status["message"].as_str().unwrap().contains("refunded"),
            "{status}"
        );
        assert_eq!(fake.purchases_for(number).len(), 1, "{number}");
    }
    // Refunded once each: the balance is whole again, the ledger agrees.
    assert_eq!(server.balance(&who.api_key).await, 5000.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_only_makes_billpay_query_and_is_harmless_otherwise() {
    let fake = FakeClubkonnect::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("5000");
    let held = "08169999999";
    let code = buy(&server, &who, "airtime", airtime(held)).await;
    let callback = |query: String| {
        let http = server.http.clone();
        let url = server.url(&format!("/callbacks/clubkonnect?{query}"));
        async move {
            let answer = http.get(url).send().await.unwrap();
            let status = answer.status().as_u16();
            (status, answer.json::<Value>().await.unwrap())
        }
    };
    // The worker's own queries come at 1 s, then 5 s later, then 15 s later.
    until("the worker's first query", || fake.queries() >= 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    // A callback claiming success is not believed: the query it causes says 100.
    let queries = fake.queries();
    let forged = format!("orderid=1&statuscode=200&orderstatus=ORDER_COMPLETED&requestid={code}");
    assert_eq!(callback(forged).await.0, 200);
    until("the callback's query", || fake.queries() > queries).await;
    let status = server
        .get(
            &who.api_key,
            &format!("/v1/transaction/status?reference_code={code}"),
        )
        .await;
    assert_eq!(status.assert_ok()["status"], "processing");
    // ClubKonnect completes it; the worker would not ask again for seconds,
    // the callback's query settles it now. (Another code: the guard admits
    // one recheck per purchase per 30 s.)
    let second = buy(&server, &who, "airtime", airtime(held)).await;
    let queries = fake.queries();
    until("the worker's queries of the second", || {
        fake.queries() >= queries + 2
    })
    .await;
    fake.complete(held);
    let (answered, said) = callback(fake.callback_query(&second)).await;
    assert_eq!((answered, said), (200, json!({ "status": "received" })));
    let settled = std::time::Instant::now();
    let status = server.wait_final(&who.api_key, &second).await;
    assert_eq!(status["status"], "successful");
    assert!(
        settled.elapsed() < Duration::from_secs(8),
        "settled by the callback's query"
    );
    // Repeated, or about nothing of ours: answered, nothing bought or refunded.
    let nothing = ["requestid=BP0000000000000NOTOURS000000", "orderid=5", ""];
    for query in nothing
        .map(String::from)
        .into_iter()
        .chain([fake.callback_query(&second)])
    {
        assert_eq!(callback(query).await.0, 200);
    }
    assert_eq!(fake.purchases_for(held).len(), 2);
    assert_eq!(server.balance(&who.api_key).await, 4000.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn a_crash_while_clubkonnect_answers_ends_in_a_query_not_a_second_purchase() {
    let fake = FakeClubkonnect::start().await;
    fake.set_slow(Duration::from_secs(3600));
    let mut server = server_with(&fake, &[("BILLPAY_CLUBKONNECT_TIMEOUT_MS", "60000")]).await;
    let who = server.customer("5000");
    let number = "08000000300";
    let code = buy(&server, &who, "airtime", airtime(number)).await;
    until("ClubKonnect has the order", || {
        !fake.purchases_for(number).is_empty()
    })
    .await;
    server.kill();
    server.start();
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "successful", "{status}");
    assert_eq!(fake.purchases_for(number).len(), 1, "never bought twice");
    assert!(fake.queries() >= 1, "learnt by query");
    assert_eq!(server.balance(&who.api_key).await, 4500.0);
}
