//! Fulfilment by VTpass: every product delivered, unclear answers requeried,
//! definite failures refunded once, a crash ending in a requery.

use super::*;

#[tokio::test]
async fn every_product_vtpass_sells_is_delivered() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("100000");
    let phone = "08011111111";
    // (product, body, what the status shows as `pin`: a token, two exam pins)
    let orders = [
        (
            "airtime",
            json!({ "provider_id": "9mobile", "amount": 100, "phone": phone }),
            None,
        ),
        (
            "data",
            json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": phone }),
            None,
        ),
        (
            "cable",
            json!({ "provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": "1212121212", "phone": phone }),
            None,
        ),
        ("electricity", meter("1111111111111"), Some(("-", 5))),
        (
            "electricity",
            json!({ "provider_id": "eko-electric", "amount": 2000, "meter_number": "1010101010101", "meter_type": 2 }),
            None,
        ),
        (
            "education",
            json!({ "provider_id": "waec", "quantity": 2, "phone": phone }),
            Some((",", 2)),
        ),
    ];
    for (product, body, pin) in orders {
        let code = buy(&server, &who, product, body).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "successful", "{product}: {status}");
        assert!(
            status.get("supplier").is_none(),
            "status JSON as before: {status}"
        );
        // The operator sees who served it and its reference there.
        let shown = &server.cli(&["transaction", "show", &code])["transaction"];
        assert_eq!(shown["supplier"], "vtpass", "{shown}");
        let request_id = shown["supplier_reference"].as_str().unwrap();
        assert!(request_id.ends_with(&code[2..]), "{request_id}");
        if let Some((separator, parts)) = pin {
            let pin = status["pin"].as_str().unwrap_or_default();
            assert_eq!(
                pin.split(separator).filter(|p| !p.is_empty()).count(),
                parts,
                "{status}"
            );
        }
    }
    // What VTpass received follows its docs.
    let calls = fake.pay_calls_for(phone);
    let services: Vec<&str> = calls
        .iter()
        .filter_map(|c| c["serviceID"].as_str())
        .collect();
    assert_eq!(services, ["etisalat", "mtn-data", "waec"]);
    assert_eq!(calls[1]["variation_code"], "mtn-sme-1gb");
    assert!(calls.iter().all(|c| {
        c["request_id"].as_str().unwrap()[..12]
            .bytes()
            .all(|b| b.is_ascii_digit())
    }));
    let cable = &fake.pay_calls_for("1212121212")[0];
    assert_eq!(
        (
            cable["serviceID"].as_str(),
            cable["subscription_type"].as_str()
        ),
        (Some("dstv"), Some("change"))
    );
    assert_eq!(
        fake.pay_calls_for("1010101010101")[0]["variation_code"],
        "postpaid"
    );

    // Verification goes to /api/merchant-verify.
    let found = server
        .post(&who.api_key, "/v1/electricity/verify", json!({ "provider_id": "ikeja-electric", "meter_number": "1111111111111", "meter_type": 1 }))
        .await;
    assert_eq!(found.assert_ok()["customer_name"], "TESTMETER1");
    server
        .post(
            &who.api_key,
            "/v1/cable/verify",
            json!({ "provider_id": "dstv", "smartcard_number": "7012345678" }),
        )
        .await
        .assert_error(422, "customer_not_found");

    // VTpass sells no betting: refused before any money moves.
    let before = server.balance(&who.api_key).await;
    let refused = server
        .post(&who.api_key, "/v1/bet/purchase", json!({ "provider_id": "bet9ja", "customer_id": "12345", "amount": 500, "reference": reference() }))
        .await;
    refused.assert_error(422, "invalid_provider");
    assert_eq!(server.balance(&who.api_key).await, before);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn unclear_answers_are_requeried_and_never_refunded() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("10000");
    // pending, a timeout, a dropped connection, an HTML page: VTpass sold
    // each once; we learn it by requery and charge the customer once.
    let numbers = [
        "201000000000",
        "300000000000",
        "400000000000",
        "500000000000",
    ];
    for number in numbers {
        let code = buy(&server, &who, "electricity", meter(number)).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "successful", "{number}: {status}");
        assert_eq!(fake.sales_for(number), 1, "{number}");
        assert_eq!(fake.pay_calls_for(number).len(), 1, "{number}: bought once");
    }
    assert!(fake.requery_calls() >= numbers.len());
    assert_eq!(server.balance(&who.api_key).await, 10_000.0 - 4.0 * 1000.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn definite_failures_and_reversals_refund_once() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("5000");
    for number in ["08000000016", "08000000091", "08000000040"] {
        let body = json!({ "provider_id": "mtn", "amount": 1000, "phone": number });
        let code = buy(&server, &who, "airtime", body).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "failed", "{number}: {status}");
        assert!(
            status["message"].as_str().unwrap().contains("refunded"),
            "{status}"
        );
    }
    assert_eq!(server.balance(&who.api_key).await, 5000.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn a_crash_while_vtpass_answers_ends_in_a_requery_not_a_second_purchase() {
    let fake = FakeVtpass::start().await;
    fake.set_slow(Duration::from_secs(3600));
    let mut server = server_with(&fake, &[("BILLPAY_VTPASS_TIMEOUT_MS", "60000")]).await;
    let who = server.customer("5000");
    let number = "300000000000";
    let code = buy(&server, &who, "electricity", meter(number)).await;
    // VTpass has the order (and sold it); we crash before recording its answer.
    until("VTpass has the order", || {
        !fake.pay_calls_for(number).is_empty()
    })
    .await;
    server.kill();
    server.start();
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "successful", "{status}");
    assert_eq!(fake.pay_calls_for(number).len(), 1, "never paid twice");
    assert!(fake.requery_calls() >= 1, "learnt by requery");
    assert_eq!(fake.sales_for(number), 1);
    assert_eq!(server.balance(&who.api_key).await, 4000.0);
}

#[test]
fn vtpass_without_its_keys_does_not_start_and_never_prints_a_key() {
    let secret = "SK_do-not-print-me";
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(crate::support::BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}/b.db", dir.path().display()))
        .env("BILLPAY_MASTER_KEY", crate::support::MASTER_KEY)
        .env("BILLPAY_SUPPLIER", "vtpass")
        .env("BILLPAY_VTPASS_SECRET_KEY", secret)
        .env("BILLPAY_VTPASS_PUBLIC_KEY", "PK_x")
        .env_remove("BILLPAY_VTPASS_API_KEY")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("BILLPAY_VTPASS_API_KEY"), "{said}");
    assert!(!said.contains(secret), "{said}");
}
