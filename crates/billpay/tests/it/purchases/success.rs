//! Success for every product: `/test` only simulates, a live purchase is
//! processing, then successful with one debit, and the CLI, e-pin batch and
//! webhook event all show the final state.

use super::checks::*;
use super::expect::*;
use super::kind::*;
use crate::support::*;
use serde_json::{Value, json};
use std::collections::HashMap;

/// Buys `kind` live with `reference` (recipient ending 1234), checking the
/// accepted response against the balance before; returns it.
async fn buy(
    server: &TestServer,
    key: &str,
    kind: Kind,
    reference: &str,
    expect: &HashMap<Kind, Expect>,
    before: i64,
) -> Value {
    let r = server
        .post(key, &kind.live(), kind.body(reference, "1234"))
        .await;
    assert_accepted(
        r.assert_ok(),
        kind,
        reference,
        "1234",
        &expect[&kind],
        before,
    )
}

/// Buys every product live (recipient ending 1234), checking each accepted
/// response against the balance it started from; returns (kind, accepted).
async fn buy_every_product(
    server: &TestServer,
    key: &str,
    expect: &HashMap<Kind, Expect>,
) -> Vec<(Kind, Value)> {
    let mut balance = balance_kobo(server, key).await;
    let mut accepted = Vec::new();
    for kind in ALL {
        let reference = reference();
        let d = buy(server, key, kind, &reference, expect, balance).await;
        balance -= expect[&kind].amount;
        accepted.push((kind, d));
    }
    accepted
}

/// Waits until each accepted purchase is final; returns code → final status.
async fn final_statuses(
    server: &TestServer,
    key: &str,
    accepted: &[(Kind, Value)],
) -> HashMap<String, Value> {
    let mut finals = HashMap::new();
    for (_, d) in accepted {
        let code = str_of(&d["reference_code"]);
        let done = server.wait_final(key, &code).await;
        finals.insert(code, done);
    }
    finals
}

#[tokio::test]
async fn test_mode_simulates_every_product_and_leaves_the_reference_unused() {
    let server = TestServer::spawn().await;
    let c = server.customer("200000");
    let expect = expectations(&server, &c.api_key).await;
    let start = balance_kobo(&server, &c.api_key).await;
    assert_eq!(start, 20_000_000);

    let references: HashMap<Kind, String> = ALL.iter().map(|k| (*k, reference())).collect();
    for kind in ALL {
        let body = kind.body(&references[&kind], "1234");
        let d = server
            .post(&c.api_key, &kind.test(), body.clone())
            .await
            .assert_ok()
            .clone();
        assert_test_reply(&d, &body, expect[&kind].amount, start);
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, start);
    assert!(transactions(&server, &c.account_id, None).is_empty());
    for kind in ALL {
        let path = format!("/v1/transaction/status?reference={}", references[&kind]);
        server
            .get(&c.api_key, &path)
            .await
            .assert_error(404, "not_found");
    }

    // Live: the same references are still unused.
    let mut balance = start;
    for kind in ALL {
        let reference = &references[&kind];
        buy(&server, &c.api_key, kind, reference, &expect, balance).await;
        balance -= expect[&kind].amount;
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, balance);
}

#[tokio::test]
async fn a_live_purchase_is_processing_then_successful_with_one_debit() {
    // A second of supplier latency keeps each purchase observably processing.
    let server = TestServer::spawn_with(Options {
        latency_ms: 1000,
        ..Default::default()
    })
    .await;
    let c = server.customer("200000");
    let expect = expectations(&server, &c.api_key).await;
    let start = balance_kobo(&server, &c.api_key).await;
    let mut accepted = Vec::new();
    let mut balance = start;
    for kind in ALL {
        let reference = reference();
        let d = buy(&server, &c.api_key, kind, &reference, &expect, balance).await;
        balance -= expect[&kind].amount;
        // Right after acceptance: processing, by code and by reference.
        assert_status_both(&server, &c.api_key, &d, kind, "processing").await;
        if kind == Epin {
            let path = format!("/v1/epin/batch?batch_id={}", str_of(&d["batch_id"]));
            let batch = server.get(&c.api_key, &path).await.assert_ok().clone();
            assert_eq!(batch["status"], "processing", "{batch}");
            assert_eq!(batch["pins"], json!([]), "no pins before success: {batch}");
        }
        accepted.push((kind, d));
    }
    let spent = start - balance;
    assert_eq!(balance_kobo(&server, &c.api_key).await, balance);

    final_statuses(&server, &c.api_key, &accepted).await;
    for (kind, d) in &accepted {
        assert_status_both(&server, &c.api_key, d, *kind, "successful").await;
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, start - spent);
    let statement = server.assert_ledger_consistent(&c.account_id);
    for (kind, d) in &accepted {
        assert_eq!(
            ledger_of(&statement, d["reference_code"].as_str().unwrap()),
            vec![("debit".to_owned(), -expect[kind].amount)],
            "one debit, no refund"
        );
    }
}

#[tokio::test]
async fn an_epin_batch_holds_its_pins_with_only_the_contract_fields() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let expect = expectations(&server, &c.api_key).await;
    let before = balance_kobo(&server, &c.api_key).await;
    let reference = reference();
    let epin = buy(&server, &c.api_key, Epin, &reference, &expect, before).await;
    server
        .wait_final(&c.api_key, &str_of(&epin["reference_code"]))
        .await;

    let batch_path = format!("/v1/epin/batch?batch_id={}", str_of(&epin["batch_id"]));
    let batch = server
        .get(&c.api_key, &batch_path)
        .await
        .assert_ok()
        .clone();
    assert_eq!(batch["batch_id"], epin["batch_id"]);
    assert_eq!(batch["status"], "successful");
    assert_eq!(batch["provider"], "airtel");
    assert_eq!(kobo(&batch["denomination"]), 20_000);
    assert_eq!(batch["quantity"], 3);
    let pins = batch["pins"].as_array().unwrap();
    assert_eq!(pins.len(), 3, "{batch}");
    for pin in pins {
        let fields: Vec<&String> = pin.as_object().unwrap().keys().collect();
        assert_eq!(fields.len(), 3, "only serial, pin, expires_on: {pin}");
        assert!(!str_of(&pin["serial"]).is_empty());
        assert!(!str_of(&pin["pin"]).is_empty());
        let expires = str_of(&pin["expires_on"]);
        let b = expires.as_bytes();
        assert!(
            b.len() == 10 && b[4] == b'-' && b[7] == b'-',
            "expires_on is YYYY-MM-DD: {expires}"
        );
    }
}

#[tokio::test]
async fn the_cli_shows_and_lists_successful_purchases() {
    let server = TestServer::spawn().await;
    let c = server.customer("200000");
    let expect = expectations(&server, &c.api_key).await;
    let accepted = buy_every_product(&server, &c.api_key, &expect).await;
    final_statuses(&server, &c.api_key, &accepted).await;

    // Show by code and by reference.
    for (kind, d) in &accepted {
        let code = str_of(&d["reference_code"]);
        for key in [code.clone(), str_of(&d["reference"])] {
            let shown = server.cli(&["transaction", "show", &key]);
            let tx = &shown["transaction"];
            assert_eq!(tx["code"], code.as_str(), "{shown}");
            assert_eq!(tx["status"], "successful");
            assert_eq!(tx["supplier"], "sandbox");
            assert_eq!(tx["reference"], d["reference"]);
            assert_eq!(tx["account_id"], c.account_id.as_str());
            assert_eq!(tx["recipient"], d["recipient"]);
            assert_eq!(kobo(&tx["amount"]), expect[kind].amount);
            assert_eq!(
                tx["product"],
                if *kind == Bet { "betting" } else { kind.path() }
            );
        }
    }
    // List with and without a status filter.
    assert_eq!(transactions(&server, &c.account_id, None).len(), 7);
    let successful = transactions(&server, &c.account_id, Some("successful"));
    assert_eq!(successful.len(), 7);
    assert!(transactions(&server, &c.account_id, Some("failed")).is_empty());
    assert!(transactions(&server, &c.account_id, Some("processing")).is_empty());
}

#[tokio::test]
async fn each_purchase_has_one_webhook_event_with_its_final_state() {
    let server = TestServer::spawn().await;
    let c = server.customer("200000");
    let expect = expectations(&server, &c.api_key).await;
    let accepted = buy_every_product(&server, &c.api_key, &expect).await;
    let finals = final_statuses(&server, &c.api_key, &accepted).await;

    // No URL configured: each event is skipped.
    let events = settled_events(&server, &c.account_id, 7).await;
    for (kind, d) in &accepted {
        let code = str_of(&d["reference_code"]);
        let mine: Vec<&Value> = events
            .iter()
            .filter(|e| e["event"]["transaction_code"] == code.as_str())
            .collect();
        assert_eq!(mine.len(), 1, "exactly one event for {code}");
        let event = &mine[0]["event"];
        assert_eq!(event["status"], "skipped", "{event}");
        assert_eq!(event["event"], kind.event());
        let payload: Value = serde_json::from_str(event["payload"].as_str().unwrap()).unwrap();
        let fin = &finals[&code];
        assert_eq!(payload["event"], kind.event());
        assert_eq!(payload["reference"], d["reference"]);
        assert_eq!(payload["reference_code"], code.as_str());
        assert_eq!(payload["status"], "successful");
        assert_eq!(payload["recipient"], d["recipient"]);
        assert_eq!(kobo(&payload["amount"]), expect[kind].amount);
        assert_eq!(payload["completed_at"], fin["completed_at"]);
        let (label, _) = kind.label_fields();
        assert_eq!(payload[label], d[label]);
        if matches!(kind, Electricity | Education) {
            assert_eq!(payload["pin"], fin["pin"], "webhook pin = status pin");
        }
        if *kind == Epin {
            assert_eq!(payload["batch_id"], d["batch_id"]);
        }
    }
}
