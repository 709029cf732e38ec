//! Failure with refund: the sandbox fails every recipient ending 0000.

use super::checks::*;
use super::expect::*;
use super::kind::*;
use crate::support::*;
use serde_json::Value;

/// Buys every product with a recipient for a recipient ending 0000 and waits
/// until each has failed and its price is back; returns (kind, accepted).
async fn buy_failing(server: &TestServer, c: &Customer) -> Vec<(Kind, Value)> {
    let expect = expectations(server, &c.api_key).await;
    let mut failed = Vec::new();
    for kind in WITH_RECIPIENT {
        let before = balance_kobo(server, &c.api_key).await;
        let reference = reference();
        let r = server
            .post(&c.api_key, &kind.live(), kind.body(&reference, "0000"))
            .await;
        let d = assert_accepted(
            r.assert_ok(),
            kind,
            &reference,
            "0000",
            &expect[&kind],
            before,
        );
        let done = server
            .wait_final(&c.api_key, &str_of(&d["reference_code"]))
            .await;
        assert_eq!(done["status"], "failed", "{kind:?}: {done}");
        assert_eq!(
            balance_kobo(server, &c.api_key).await,
            before,
            "{kind:?}: balance restored exactly"
        );
        failed.push((kind, d));
    }
    failed
}

#[tokio::test]
async fn a_failed_purchase_is_refunded_exactly_once() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let expect = expectations(&server, &c.api_key).await;
    let start = balance_kobo(&server, &c.api_key).await;
    let failed = buy_failing(&server, &c).await;
    for (kind, d) in &failed {
        let s = assert_status_both(&server, &c.api_key, d, *kind, "failed").await;
        let message = str_of(&s["message"]).to_lowercase();
        assert!(message.contains("refunded"), "message says refunded: {s}");
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, start);
    let statement = server.assert_ledger_consistent(&c.account_id);
    for (kind, d) in &failed {
        let amount = expect[kind].amount;
        let mut entries = ledger_of(&statement, d["reference_code"].as_str().unwrap());
        entries.sort();
        assert_eq!(
            entries,
            vec![("debit".into(), -amount), ("refund".into(), amount)],
            "{kind:?}: one debit and one refund"
        );
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, 10_000_000);
}

#[tokio::test]
async fn the_cli_shows_and_lists_failed_purchases() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let failed = buy_failing(&server, &c).await;
    let listed = transactions(&server, &c.account_id, Some("failed"));
    assert_eq!(listed.len(), 6);
    assert!(transactions(&server, &c.account_id, Some("successful")).is_empty());
    assert!(transactions(&server, &c.account_id, Some("processing")).is_empty());
    for (_, d) in &failed {
        let shown = server.cli(&["transaction", "show", d["reference"].as_str().unwrap()]);
        assert_eq!(shown["transaction"]["code"], d["reference_code"]);
        assert_eq!(shown["transaction"]["status"], "failed");
    }
}

#[tokio::test]
async fn a_failed_purchase_has_one_webhook_event_saying_refunded() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let failed = buy_failing(&server, &c).await;
    let events = settled_events(&server, &c.account_id, 6).await;
    for (_, d) in &failed {
        let event = events
            .iter()
            .find(|e| e["event"]["transaction_code"] == d["reference_code"])
            .expect("event for each failure");
        let payload: Value =
            serde_json::from_str(event["event"]["payload"].as_str().unwrap()).unwrap();
        assert_eq!(payload["status"], "failed");
        assert!(
            str_of(&payload["message"])
                .to_lowercase()
                .contains("refunded"),
            "{payload}"
        );
        assert!(payload.get("pin").is_none_or(Value::is_null), "{payload}");
    }
}
