//! Pending, then successful on the requery: the sandbox first answers
//! "pending" for every recipient ending 1111.

use super::checks::*;
use super::expect::*;
use super::kind::*;
use crate::support::*;
use std::time::{Duration, Instant};

#[tokio::test]
async fn pending_purchases_stay_processing_until_the_requery() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let expect = expectations(&server, &c.api_key).await;
    let mut balance = balance_kobo(&server, &c.api_key).await;
    let mut pending = Vec::new();
    for kind in WITH_RECIPIENT {
        let reference = reference();
        // Measured from before the request: the purchase cannot be older.
        let sent_at = Instant::now();
        let r = server
            .post(&c.api_key, &kind.live(), kind.body(&reference, "1111"))
            .await;
        let d = assert_accepted(
            r.assert_ok(),
            kind,
            &reference,
            "1111",
            &expect[&kind],
            balance,
        );
        balance -= expect[&kind].amount;
        let code = str_of(&d["reference_code"]);
        // The supplier has answered "pending" once…
        let shown = cli_until(&server, &["transaction", "show", &code], |v| {
            v["transaction"]["attempts"].as_u64().unwrap() >= 1
        })
        .await;
        assert_eq!(shown["transaction"]["status"], "processing", "{shown}");
        // …and the API still says processing, with no completion time.
        assert_status_both(&server, &c.api_key, &d, kind, "processing").await;
        pending.push((kind, d, sent_at));
    }
    for (kind, d, sent_at) in &pending {
        let code = str_of(&d["reference_code"]);
        let done = server.wait_final(&c.api_key, &code).await;
        let waited = sent_at.elapsed();
        assert_eq!(done["status"], "successful", "{kind:?}: {done}");
        assert!(
            waited >= Duration::from_millis(950),
            "{kind:?} resolved by the requery about a second later, not at once ({waited:?})"
        );
        assert_status_both(&server, &c.api_key, d, *kind, "successful").await;
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, balance);
    let statement = server.assert_ledger_consistent(&c.account_id);
    for (kind, d, _) in &pending {
        assert_eq!(
            ledger_of(&statement, d["reference_code"].as_str().unwrap()),
            vec![("debit".to_owned(), -expect[kind].amount)]
        );
    }
    assert_eq!(
        transactions(&server, &c.account_id, Some("successful")).len(),
        6
    );
    settled_events(&server, &c.account_id, 6).await;
}

/// The worker logs each purchase's steps inside a span that names it:
/// `fulfil{code=BP…}`, not a `code` field repeated on every line.
#[tokio::test]
async fn the_worker_logs_a_purchase_inside_a_span_naming_its_code() {
    let options = Options::default();
    let mut server = TestServer::spawn_with_env(options, &[("BILLPAY_LOG", "info")]).await;
    let c = server.customer("1000");
    let body = serde_json::json!({ "provider_id": "mtn", "amount": 100, "phone": "08031111111", "reference": reference() });
    let accepted = server.post(&c.api_key, "/v1/airtime/purchase", body).await;
    let code = accepted.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        server.wait_final(&c.api_key, &code).await["status"],
        "successful"
    );
    server.terminate();
    let logs = without_colours(&String::from_utf8(server.logs()).unwrap());
    let pending = logs
        .lines()
        .find(|line| line.contains("outcome not final; requery later"))
        .unwrap_or_else(|| panic!("no requery line in {logs}"));
    assert!(
        pending.contains(&format!("fulfil{{code={code}}}")),
        "{pending}"
    );
}

/// The text of a log without its ANSI colour sequences (`ESC [ … m`).
fn without_colours(log: &str) -> String {
    let mut out = String::with_capacity(log.len());
    let mut chars = log.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|&c| c == 'm');
        } else {
            out.push(c);
        }
    }
    out
}
