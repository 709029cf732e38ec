//! Crash durability and supplier outages: purchases in flight survive a
//! `kill -9`, and an unknown outcome is never refunded on a guess.

use super::checks::*;
use super::kind::*;
use crate::support::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test]
async fn purchases_in_flight_survive_a_crash() {
    let mut server = TestServer::spawn_with(Options {
        latency_ms: 3000,
        ..Default::default()
    })
    .await;
    let c = server.customer("500000");
    let start = balance_kobo(&server, &c.api_key).await;
    let plan: [(Kind, &str); 20] = [
        (Airtime, "1234"),
        (Airtime, "5678"),
        (Airtime, "0000"),
        (Airtime, "1111"),
        (Data, "1234"),
        (Data, "0000"),
        (Data, "1111"),
        (Epin, "1234"),
        (Epin, "5678"),
        (Cable, "1234"),
        (Cable, "0000"),
        (Cable, "1111"),
        (Electricity, "1234"),
        (Electricity, "0000"),
        (Electricity, "1111"),
        (Education, "1234"),
        (Education, "0000"),
        (Bet, "1234"),
        (Bet, "0000"),
        (Bet, "1111"),
    ];
    let requests = plan
        .iter()
        .map(|(kind, tail)| (kind.live(), kind.body(&reference(), tail)))
        .collect();
    let replies = post_all(&server, &c.api_key, requests).await;
    let placed: Vec<(Kind, bool, String, i64)> = plan
        .iter()
        .zip(&replies)
        .map(|((kind, tail), r)| {
            let d = r.assert_ok();
            (
                *kind,
                *tail == "0000",
                str_of(&d["reference_code"]),
                kobo(&d["amount"]),
            )
        })
        .collect();
    // Let the worker hand them to the (slow) supplier, then crash mid-call.
    let deadline = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < deadline {
        let list = transactions(&server, &c.account_id, None);
        if list.len() == 20 && list.iter().all(|t| t["submitted"] == true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.kill();
    let list = transactions(&server, &c.account_id, None);
    assert_eq!(list.len(), 20);
    assert!(
        list.iter().all(|t| t["status"] == "processing"),
        "killed while all were processing"
    );

    server.start_with_latency(0);
    let mut spent = 0;
    for (kind, fails, code, amount) in &placed {
        let done = server.wait_final(&c.api_key, code).await;
        let want = if *fails { "failed" } else { "successful" };
        assert_eq!(done["status"], want, "{kind:?} {code}: {done}");
        if !fails {
            spent += amount;
        }
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, start - spent);
    let statement = server.cli(&[
        "wallet",
        "statement",
        "--account",
        &c.account_id,
        "--limit",
        "1000",
    ]);
    assert_eq!(statement["balance"], statement["ledger_sum"]);
    for (kind, fails, code, amount) in &placed {
        let mut entries = ledger_of(&statement, code);
        entries.sort();
        let mut want = vec![("debit".to_owned(), -amount)];
        if *fails {
            want.push(("refund".to_owned(), *amount));
        }
        assert_eq!(
            entries, want,
            "{kind:?} {code}: one debit, refunded iff failed"
        );
    }
    let list = transactions(&server, &c.account_id, None);
    assert_eq!(list.len(), 20);
    let failed = transactions(&server, &c.account_id, Some("failed"));
    assert_eq!(failed.len(), placed.iter().filter(|p| p.1).count());
    assert!(transactions(&server, &c.account_id, Some("processing")).is_empty());
    // Exactly one webhook event per transaction (no URL configured: skipped).
    let events = settled_events(&server, &c.account_id, 20).await;
    for (_, fails, code, _) in &placed {
        let mine: Vec<&Value> = events
            .iter()
            .filter(|e| e["event"]["transaction_code"] == code.as_str())
            .collect();
        assert_eq!(mine.len(), 1, "{code}");
        assert_eq!(mine[0]["event"]["status"], "skipped");
        let payload: Value =
            serde_json::from_str(mine[0]["event"]["payload"].as_str().unwrap()).unwrap();
        assert_eq!(
            payload["status"],
            if *fails { "failed" } else { "successful" }
        );
    }
}

/// A server whose sandbox supplier is unreachable (a supplier outage).
async fn during_an_outage() -> TestServer {
    TestServer::spawn_with_env(
        Options::default(),
        &[("BILLPAY_SANDBOX_UNREACHABLE", "true")],
    )
    .await
}

/// Verification calls the supplier inline: 503 during an outage; the test
/// twin never calls the supplier, so it still answers.
#[tokio::test]
async fn a_verification_during_a_supplier_outage_is_503_but_its_test_twin_answers() {
    let server = during_an_outage().await;
    let c = server.customer("0");
    let verify =
        json!({"provider_id": "ikeja-electric", "meter_number": "45012345678", "meter_type": 1});
    server
        .post(&c.api_key, "/v1/electricity/verify", verify.clone())
        .await
        .assert_error(503, "supplier_unavailable");
    assert_eq!(
        server
            .post(&c.api_key, "/v1/test/electricity/verify", verify)
            .await
            .assert_ok()["test_mode"],
        true
    );
}

/// A purchase whose outcome is unknown stays `processing` — debited, never
/// refunded on a guess — and is requeried until the supplier is back, then
/// completes exactly once.
#[tokio::test]
async fn a_supplier_outage_never_refunds_on_a_guess() {
    let mut server = during_an_outage().await;
    let c = server.customer("10000");
    let reference = reference();
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 1000, "reference": reference});
    let code = server
        .post(&c.api_key, "/v1/airtime/purchase", body)
        .await
        .assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    // past the first requery (1 s after the first attempt): still processing, still debited
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let shown = server.cli(&["transaction", "show", &code]);
        if shown["transaction"]["attempts"].as_u64().unwrap_or(0) >= 2 {
            assert_eq!(shown["transaction"]["status"], "processing", "{shown}");
            assert!(
                shown["transaction"]["result"]["last_note"]
                    .as_str()
                    .unwrap()
                    .contains("unavailable"),
                "{shown}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "no requery seen: {shown}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = server
        .get(
            &c.api_key,
            &format!("/v1/transaction/status?reference_code={code}"),
        )
        .await;
    assert_eq!(status.assert_ok()["status"], "processing");
    assert_eq!(server.balance(&c.api_key).await, 9000.0);
    let kinds: Vec<String> = server.assert_ledger_consistent(&c.account_id)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        !kinds.contains(&"refund".to_owned()),
        "refunded on a guess: {kinds:?}"
    );

    // the supplier is back: the requery completes it, once
    server.kill();
    server.set_env(&[]);
    server.start();
    let done = server.wait_final(&c.api_key, &code).await;
    assert_eq!(done["status"], "successful");
    assert_eq!(server.balance(&c.api_key).await, 9000.0);
    let events = server.cli(&["webhook", "list", "--account", &c.account_id]);
    assert_eq!(events["events"].as_array().unwrap().len(), 1, "{events}");
}
