//! Wallet funding by bank transfer, through the real binary with a fake
//! Monnify and a fake Paystack (both on at once): reserving accounts, the
//! signed webhooks, verification, the once-only credit, the reconciler, the
//! operator's tools. Every case runs for both gateways; every test ends with
//! `billpay audit` (the kit's `Drop`).

mod checkout;
pub mod gateways;

use crate::support::monnify::Verify;
use gateways::Setup;
use serde_json::Value;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_credits_the_wallet_once_and_reserving_again_calls_nothing() {
    let setup = Setup::start(&[]).await;
    for fake in &setup.fakes {
        let (customer, number) = setup.customer_with_account(fake).await;
        let calls = fake.reserve_calls();
        let again = setup.reserve(fake, &customer.account_id);
        assert_eq!(
            again["accounts"][0]["account_number"],
            number.as_str(),
            "{again}"
        );
        assert_eq!(
            fake.reserve_calls(),
            calls,
            "{}: reserving again called the gateway",
            fake.name()
        );

        let reference = fake.transfer(Some(&customer.account_id), Some(&number), 5_000.0);
        for _ in 0..3 {
            let (status, body) = setup.post_webhook(fake, fake.webhook(&reference)).await;
            assert_eq!(status, 200, "{}: {body}", fake.name());
        }
        assert_eq!(
            setup.server.balance(&customer.api_key).await,
            5_000.0,
            "{}",
            fake.name()
        );
        let listed = setup.cli(&["funding", "list", "--account", &customer.account_id]);
        let fundings = listed["fundings"].as_array().unwrap();
        assert_eq!(fundings.len(), 1, "{listed}");
        assert_eq!(fundings[0]["status"], "credited");
        assert_eq!(fundings[0]["gateway_reference"], reference.as_str());
        let shown = setup.cli(&["funding", "show", fundings[0]["id"].as_str().unwrap()]);
        assert_eq!(shown["credited"], 5_000.0, "{shown}");

        let accounts = setup
            .server
            .get(&customer.api_key, "/v1/wallet/funding-accounts")
            .await;
        let accounts = accounts.assert_ok().clone();
        let first = &accounts["accounts"][0];
        assert_eq!(first["account_number"], number.as_str(), "{accounts}");
        assert_eq!(first["gateway"], fake.name());
    }
    // One login per process (the CLI's reserve, the server's verifies): the
    // token is cached until it expires.
    assert_eq!(
        setup.monnify().logins(),
        2,
        "Monnify's token is cached until it expires"
    );
    let contents = setup.server.database_contents().await;
    let stored = String::from_utf8_lossy(&contents);
    for secret in [
        crate::support::monnify::SECRET_KEY,
        crate::support::monnify::API_KEY,
        crate::support::paystack::SECRET_KEY,
    ] {
        assert!(
            !stored.contains(secret),
            "a gateway key is stored in the database"
        );
    }
    let metrics = setup
        .server
        .http
        .get(setup.server.url("/metrics"))
        .send()
        .await
        .unwrap();
    let metrics = metrics.text().await.unwrap();
    for gateway in ["monnify", "paystack"] {
        let line = format!("billpay_funding_credited_total{{gateway=\"{gateway}\"}} 1");
        assert!(metrics.contains(&line), "{line} not in:\n{metrics}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_and_concurrent_webhooks_credit_once() {
    let setup = Setup::start(&[]).await;
    for fake in &setup.fakes {
        let (customer, number) = setup.customer_with_account(fake).await;
        let reference = fake.transfer(Some(&customer.account_id), Some(&number), 2_500.5);
        let webhook = fake.webhook(&reference);
        for (status, body) in setup.post_at_once(fake, webhook, 12).await {
            assert_eq!(status, 200, "{}: {body}", fake.name());
        }
        assert_eq!(
            setup.server.balance(&customer.api_key).await,
            2_500.5,
            "{}",
            fake.name()
        );
        let statement = setup.server.assert_ledger_consistent(&customer.account_id);
        let credits = statement["entries"].as_array().unwrap().len();
        assert_eq!(credits, 1, "{statement}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_or_missing_signature_is_refused_and_records_nothing() {
    let setup = Setup::start(&[]).await;
    for fake in &setup.fakes {
        let (customer, number) = setup.customer_with_account(fake).await;
        let reference = fake.transfer(Some(&customer.account_id), Some(&number), 1_000.0);
        let (body, signature) = fake.webhook(&reference);
        let wrong = "ab".repeat(64);
        let tampered = String::from_utf8(body.clone())
            .unwrap()
            .replace("1000", "9000");
        let pretty =
            serde_json::to_vec_pretty(&serde_json::from_slice::<Value>(&body).unwrap()).unwrap();
        for (body, signature) in [
            (body.clone(), Some(wrong)),
            (body.clone(), None),
            (tampered.into_bytes(), Some(signature.clone())),
            (pretty, Some(signature.clone())),
        ] {
            let (status, answer) = setup.post_raw(fake, body, signature.as_deref()).await;
            assert_eq!(status, 401, "{}: {answer}", fake.name());
            assert_eq!(answer["status"], "error");
            assert_eq!(answer["code"], 401);
            assert_eq!(answer["error"], "invalid_signature", "{answer}");
        }
        let (status, answer) = setup.post_webhook(fake, fake.not_a_payment()).await;
        assert_eq!(
            (status, &answer["data"]["outcome"]),
            (200, &Value::from("ignored")),
            "{answer}"
        );
    }
    let listed = setup.cli(&["funding", "list"]);
    assert_eq!(listed["fundings"], serde_json::json!([]), "{listed}");
    assert_eq!(
        setup.monnify().verify_calls(),
        0,
        "a refused webhook asks nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_verified_amount_is_credited_never_the_bodys_and_unpaid_credits_nothing() {
    let setup = Setup::start(&[("BILLPAY_LOG", "warn")]).await;
    for fake in &setup.fakes {
        let (customer, number) = setup.customer_with_account(fake).await;
        let inflated = fake.transfer(Some(&customer.account_id), Some(&number), 1_000.0);
        let (status, body) = setup
            .post_webhook(fake, fake.webhook_claiming(&inflated, 100_000.0))
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            setup.server.balance(&customer.api_key).await,
            1_000.0,
            "{}",
            fake.name()
        );
        let logs = String::from_utf8_lossy(&setup.server.logs()).into_owned();
        let warned = logs
            .lines()
            .any(|l| l.contains("disagrees") && l.contains(&inflated));
        assert!(
            warned,
            "{}: the disagreement is not logged:\n{logs}",
            fake.name()
        );

        let unpaid = fake.transfer(Some(&customer.account_id), Some(&number), 3_000.0);
        fake.set_unpaid(&unpaid);
        let (status, body) = setup.post_webhook(fake, fake.webhook(&unpaid)).await;
        assert_eq!(
            (status, &body["data"]["outcome"]),
            (200, &Value::from("rejected")),
            "{body}"
        );
        assert_eq!(
            setup.server.balance(&customer.api_key).await,
            1_000.0,
            "{}",
            fake.name()
        );
        let rejected = setup.cli(&[
            "funding",
            "list",
            "--status",
            "rejected",
            "--account",
            &customer.account_id,
        ]);
        assert_eq!(
            rejected["fundings"][0]["gateway_reference"],
            unpaid.as_str(),
            "{rejected}"
        );
    }
}

/// Monnify's `PARTIALLY_PAID` (less than the payment's `totalPayable`
/// arrived): a wallet has no price to fall short of, so what arrived,
/// Monnify's `amountPaid`, is credited (docs/funding.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_monnify_partial_payment_credits_what_arrived_once() {
    let setup = Setup::start(&[]).await;
    let fake = setup.fakes.iter().find(|f| f.name() == "monnify").unwrap();
    let (customer, number) = setup.customer_with_account(fake).await;
    let reference = fake.transfer(Some(&customer.account_id), Some(&number), 2_000.0);
    setup.monnify().pay_part(&reference, 1_500.25);
    for _ in 0..2 {
        let (status, body) = setup.post_webhook(fake, fake.webhook(&reference)).await;
        assert_eq!(
            (status, &body["data"]["outcome"]),
            (200, &Value::from("credited")),
            "{body}"
        );
    }
    assert_eq!(setup.server.balance(&customer.api_key).await, 1_500.25);
    let listed = setup.cli(&["funding", "list", "--account", &customer.account_id]);
    let fundings = listed["fundings"].as_array().unwrap();
    assert_eq!(fundings.len(), 1, "{listed}");
    assert_eq!(fundings[0]["status"], "credited", "{listed}");
    assert_eq!(fundings[0]["gateway_reference"], reference.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_down_during_verify_credits_nothing_until_reconciled_once() {
    let setup = Setup::start(&[]).await;
    for fake in &setup.fakes {
        let (customer, number) = setup.customer_with_account(fake).await;
        let reference = fake.transfer(Some(&customer.account_id), Some(&number), 4_000.0);
        for verify in [
            Verify::Down,
            Verify::Garbage,
            Verify::Slow(Duration::from_secs(8)),
        ] {
            fake.set_verify(verify);
            let started = Instant::now();
            let (status, body) = setup.post_webhook(fake, fake.webhook(&reference)).await;
            assert_eq!(status, 503, "{} {verify:?}: {body}", fake.name());
            assert_eq!(body["error"], "verification_pending", "{body}");
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "answered in {:?}",
                started.elapsed()
            );
        }
        assert_eq!(setup.server.balance(&customer.api_key).await, 0.0);
        let pending = setup.cli(&[
            "funding",
            "list",
            "--status",
            "pending_verification",
            "--account",
            &customer.account_id,
        ]);
        assert_eq!(
            pending["fundings"][0]["gateway_reference"],
            reference.as_str(),
            "{pending}"
        );

        fake.set_verify(Verify::Normal);
        let report = setup.cli(&["funding", "reconcile"]);
        let credited: Vec<_> = report["gateways"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["credited"].as_array().unwrap().clone())
            .collect();
        assert_eq!(credited.len(), 1, "{report}");
        assert_eq!(credited[0]["gateway_reference"], reference.as_str());
        assert_eq!(setup.server.balance(&customer.api_key).await, 4_000.0);
        let (status, _) = setup.post_webhook(fake, fake.webhook(&reference)).await;
        assert_eq!(status, 200);
        assert_eq!(setup.cli(&["funding", "reconcile"])["credited"], 0);
        assert_eq!(
            setup.server.balance(&customer.api_key).await,
            4_000.0,
            "{}",
            fake.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_credits_a_lost_webhook_once() {
    let setup = Setup::start(&[]).await;
    let mut customers = Vec::new();
    for fake in &setup.fakes {
        let (customer, number) = setup.customer_with_account(fake).await;
        fake.transfer(Some(&customer.account_id), Some(&number), 750.25);
        customers.push(customer);
    }
    let first = setup.cli(&["funding", "reconcile", "--since-hours", "48"]);
    assert_eq!(first["credited"], 2, "{first}");
    let second = setup.cli(&["funding", "reconcile"]);
    assert_eq!(second["credited"], 0, "{second}");
    for customer in &customers {
        assert_eq!(setup.server.balance(&customer.api_key).await, 750.25);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_background_reconciler_credits_a_lost_webhook() {
    let setup = Setup::start(&[("BILLPAY_FUNDING_RECONCILE_SECS", "1")]).await;
    for fake in &setup.fakes {
        let (customer, number) = setup.customer_with_account(fake).await;
        fake.transfer(Some(&customer.account_id), Some(&number), 300.0);
        let deadline = Instant::now() + Duration::from_secs(20);
        while setup.server.balance(&customer.api_key).await != 300.0 {
            assert!(
                Instant::now() < deadline,
                "{}: not reconciled in time",
                fake.name()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmatched_payment_is_kept_listed_and_assigned_once() {
    let setup = Setup::start(&[]).await;
    for fake in &setup.fakes {
        let (customer, _) = setup.customer_with_account(fake).await;
        let reference = fake.transfer(None, None, 1_200.0);
        let (status, body) = setup.post_webhook(fake, fake.webhook(&reference)).await;
        assert_eq!(
            (status, &body["data"]["outcome"]),
            (200, &Value::from("unmatched")),
            "{body}"
        );
        let unmatched = setup.cli(&["funding", "list", "--status", "unmatched"]);
        let found = unmatched["fundings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["gateway_reference"] == reference.as_str())
            .cloned();
        let id = found.expect("listed")["id"].as_str().unwrap().to_owned();
        let assigned = setup.cli(&["funding", "assign", &id, "--account", &customer.account_id]);
        assert_eq!(assigned["status"], "credited", "{assigned}");
        let (ok, again) =
            setup
                .server
                .cli_result(&["funding", "assign", &id, "--account", &customer.account_id]);
        assert!(!ok, "assigned twice: {again}");
        assert!(
            again["error"]
                .as_str()
                .unwrap()
                .contains("only an unmatched"),
            "{again}"
        );
        let (status, _) = setup.post_webhook(fake, fake.webhook(&reference)).await;
        assert_eq!(status, 200);
        assert_eq!(
            setup.server.balance(&customer.api_key).await,
            1_200.0,
            "{}",
            fake.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fee_is_its_own_ledger_entry_after_the_payment() {
    let fee = [
        ("BILLPAY_FUNDING_FEE_PERCENT", "1.5"),
        ("BILLPAY_FUNDING_FEE_FLAT", "50"),
        ("BILLPAY_FUNDING_FEE_CAP", "100"),
    ];
    let setup = Setup::start(&fee).await;
    for (fake, naira, expected_fee) in setup
        .fakes
        .iter()
        .zip([2_000.0, 10_000.0])
        .map(|(f, n)| (f, n, if n == 2_000.0 { 80.0 } else { 100.0 }))
    {
        let (customer, number) = setup.customer_with_account(fake).await;
        let reference = fake.transfer(Some(&customer.account_id), Some(&number), naira);
        let (status, body) = setup.post_webhook(fake, fake.webhook(&reference)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            setup.server.balance(&customer.api_key).await,
            naira - expected_fee
        );
        let statement = setup.server.assert_ledger_consistent(&customer.account_id);
        let entries: Vec<_> = statement["entries"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .map(|e| {
                (
                    e["kind"].as_str().unwrap().to_owned(),
                    e["amount"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            entries,
            [
                ("credit".to_owned(), naira),
                ("fee".to_owned(), -expected_fee)
            ],
            "{statement}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_the_credit_does_not_credit_twice_when_the_webhook_is_resent() {
    let mut setup = Setup::start(&[]).await;
    let fakes = setup.fakes.clone();
    for fake in &fakes {
        let (customer, number) = setup.customer_with_account(fake).await;
        let reference = fake.transfer(Some(&customer.account_id), Some(&number), 900.0);
        fake.set_verify(Verify::Slow(Duration::from_millis(500)));
        // The gateway gives up before the answer (as if billpay crashed before answering)…
        let (body, signature) = fake.webhook(&reference);
        let request = setup
            .server
            .http
            .post(setup.server.url(&format!("/callbacks/{}", fake.name())))
            .header(fake.signature_header(), signature)
            .body(body)
            .timeout(Duration::from_millis(100));
        assert!(
            request.send().await.is_err(),
            "answered before the verify did"
        );
        // …billpay credits it, and then really crashes.
        let deadline = Instant::now() + Duration::from_secs(10);
        while setup.server.balance(&customer.api_key).await != 900.0 {
            assert!(Instant::now() < deadline, "not credited");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        setup.server.kill();
        setup.server.start();
        fake.set_verify(Verify::Normal);
        let (status, body) = setup.post_webhook(fake, fake.webhook(&reference)).await;
        assert_eq!(
            (status, &body["data"]["outcome"]),
            (200, &Value::from("credited")),
            "{body}"
        );
        assert_eq!(
            setup.server.balance(&customer.api_key).await,
            900.0,
            "{}",
            fake.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paystacks_later_assignment_is_stored_for_its_customer() {
    let setup = Setup::start(&[]).await;
    let fake = setup.fakes.iter().find(|f| f.name() == "paystack").unwrap();
    let (customer, number) = setup.customer_with_account(fake).await;
    let customer_code = fake.paystack().customer_of(&number);
    let assignment = fake
        .paystack()
        .assignment_webhook(&customer_code, "9770000001");
    let (status, body) = setup.post_webhook(fake, assignment).await;
    assert_eq!(
        (status, &body["data"]["outcome"]),
        (200, &Value::from("accounts_saved")),
        "{body}"
    );
    let held = setup.reserve(fake, &customer.account_id);
    let numbers: Vec<_> = held["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["account_number"].clone())
        .collect();
    assert!(numbers.contains(&Value::from("9770000001")), "{held}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_configured_gateway_stops_serve_naming_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(crate::support::BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}", dir.path().join("b.db").display()))
        .env("BILLPAY_MONNIFY_API_KEY", "MK_TEST_ONLY")
        .env("BILLPAY_PAYSTACK_PREFERRED_BANK", "titan-paystack")
        .env("BILLPAY_FUNDING_FEE_PERCENT", "150")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    for missing in [
        "BILLPAY_MONNIFY_SECRET_KEY",
        "BILLPAY_MONNIFY_CONTRACT_CODE",
        "BILLPAY_PAYSTACK_SECRET_KEY",
        "BILLPAY_FUNDING_FEE_PERCENT",
    ] {
        assert!(stderr.contains(missing), "{missing} not named: {stderr}");
    }
    assert!(
        !stderr.contains("MK_TEST_ONLY"),
        "a key was printed: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_where_to_pay_and_the_funding_history() {
    use crate::dashboard::{account_with_password, no_redirects, sign_in};
    let setup = Setup::start(&[]).await;
    let fake = &setup.fakes[0];
    let email = format!("fund-{}@example.com", crate::support::rand_suffix());
    let account_id = account_with_password(&setup.server, &email, "1");
    let reserved = setup.reserve(fake, &account_id);
    let number = reserved["accounts"][0]["account_number"]
        .as_str()
        .unwrap()
        .to_owned();
    let reference = fake.transfer(Some(&account_id), Some(&number), 2_000.0);
    let (status, _) = setup.post_webhook(fake, fake.webhook(&reference)).await;
    assert_eq!(status, 200);
    let cookie = sign_in(&setup.server, &email, "correct horse battery")
        .await
        .unwrap();
    for page in ["/dashboard", "/dashboard/wallet"] {
        let html = no_redirects()
            .get(setup.server.url(page))
            .header("Cookie", &cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        // the buyer's home has it as its "Fund wallet" card, the wallet page as a section
        let heading = match page {
            "/dashboard" => "<h2>Fund wallet</h2>",
            _ => "Fund your wallet",
        };
        assert!(html.contains(heading), "{page}: {html}");
        assert!(html.contains(&number), "{page}: account number missing");
        assert!(
            html.contains("Wema bank") && html.contains("Moniepoint"),
            "{page}: banks missing"
        );
        // the history of funding is the wallet's (the home lists purchases)
        if page == "/dashboard/wallet" {
            assert!(html.contains(&reference), "{page}: funding history missing");
            assert!(html.contains("credited"), "{page}");
        }
    }
}
