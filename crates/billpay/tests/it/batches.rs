//! Batches (issue 50), over HTTP against a spawned `billpay serve`, on the
//! test backend (SQLite, or PostgreSQL with `BILLPAY_TEST_BACKEND=postgres`):
//! items placed in the background through the one purchase operation, each
//! an ordinary purchase found by its own reference; the batch idempotent by
//! its reference even when raced; refusals one item at a time; the wallet
//! never overdrawn; the `batch.completed` webhook. Every test ends with
//! `billpay audit` (the kit's `Drop`).

use crate::purchases::checks::{
    balance_kobo, entries_of_kind, post_all, status_by_reference, transactions,
};
use crate::support::*;
use billpay_api_testkit::kind::kobo;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A ₦`naira` MTN airtime item for `phone`.
fn airtime(reference: &str, phone: &str, naira: u32) -> Value {
    json!({"product": "airtime", "provider_id": "mtn", "phone": phone, "amount": naira, "reference": reference})
}

/// `count` airtime items of ₦`naira`, the ones at `failing` positions to a
/// number ending 0000 (the sandbox supplier fails those).
fn items(batch: &str, count: usize, naira: u32, failing: &[usize]) -> Vec<Value> {
    (0..count)
        .map(|i| {
            let tail = if failing.contains(&i) { 0 } else { 1000 + i };
            let phone = format!("0803{:03}{tail:04}", i);
            airtime(&format!("{batch}-{i:04}"), &phone, naira)
        })
        .collect()
}

fn batch(reference: &str, items: Vec<Value>) -> Value {
    json!({"reference": reference, "items": items})
}

/// Polls `GET /v1/batches/{reference}` until the batch is completed.
async fn completed(server: &TestServer, key: &str, reference: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let reply = server.get(key, &format!("/v1/batches/{reference}")).await;
        let data = reply.assert_ok().clone();
        if data["status"] == "completed" {
            return data;
        }
        assert!(Instant::now() < deadline, "batch not completed: {data}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn statuses(batch: &Value) -> Vec<String> {
    let items = batch["items"].as_array().unwrap();
    items
        .iter()
        .map(|i| i["status"].as_str().unwrap().to_owned())
        .collect()
}

/// 50 items, 3 of them failing at the supplier; the batch posted twice at
/// once and once more after: one batch, 50 purchases, each charged once;
/// 47 successful, 3 failed and refunded; each item is an ordinary purchase
/// found by its reference; the key's webhook gets `batch.completed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_items_with_three_supplier_failures_end_47_successful_and_3_refunded_charged_once() {
    let server = TestServer::spawn().await;
    let receiver = receiver::Receiver::start().await;
    let c = server.customer("100000");
    server.cli(&[
        "key",
        "webhook",
        &c.key_id,
        "--url",
        &receiver.url("/hooks"),
    ]);
    let reference = format!("staff-{}", rand_suffix());
    let body = batch(&reference, items(&reference, 50, 500, &[7, 23, 41]));

    let raced = vec![
        ("/v1/batches".to_owned(), body.clone()),
        ("/v1/batches".to_owned(), body.clone()),
    ];
    let replies = post_all(&server, &c.api_key, raced).await;
    let again = server.post(&c.api_key, "/v1/batches", body).await;
    let mut ids = Vec::new();
    for reply in replies.iter().chain([&again]) {
        assert_eq!(reply.status, 202, "{}", reply.body);
        let data = reply.data();
        assert_eq!(data["reference"], reference.as_str());
        assert_eq!(data["counts"]["total"], 50, "{data}");
        ids.push(data["batch_id"].clone());
    }
    assert!(ids.iter().all(|id| *id == ids[0]), "one batch: {ids:?}");

    let done = completed(&server, &c.api_key, &reference).await;
    let counts = &done["counts"];
    assert_eq!(
        (&counts["successful"], &counts["failed"], &counts["refused"]),
        (&json!(47), &json!(3), &json!(0)),
        "{done}"
    );
    assert_eq!(
        (&counts["queued"], &counts["processing"]),
        (&json!(0), &json!(0))
    );
    assert_eq!(kobo(&done["charged"]), 47 * 50_000);
    let failed: Vec<usize> = statuses(&done)
        .iter()
        .enumerate()
        .filter(|(_, s)| *s == "failed")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(failed, vec![7, 23, 41], "{done}");

    // Charged once: 50 purchases, 50 debits, 3 refunds, the balance to the kobo.
    assert_eq!(transactions(&server, &c.account_id, None).len(), 50);
    let statement = server.assert_ledger_consistent(&c.account_id);
    assert_eq!(entries_of_kind(&statement, "debit"), 50, "{statement}");
    assert_eq!(entries_of_kind(&statement, "refund"), 3, "{statement}");
    let spent = 47 * 50_000;
    assert_eq!(balance_kobo(&server, &c.api_key).await, 10_000_000 - spent);

    // Each item is an ordinary purchase, found by its own reference.
    let item = &done["items"][23];
    let found = status_by_reference(&server, &c.api_key, item["reference"].as_str().unwrap()).await;
    assert_eq!(found["reference_code"], item["reference_code"]);
    assert_eq!(found["status"], "failed");

    // The batch's webhook, once, besides each purchase's own.
    let hook = wait_for_event(&receiver, "batch.completed").await;
    assert_eq!(hook["reference"], reference.as_str());
    assert_eq!(hook["batch_id"], ids[0]);
    assert_eq!(
        (&hook["items"], &hook["successful"], &hook["failed"]),
        (&json!(50), &json!(47), &json!(3))
    );
    assert_eq!(kobo(&hook["charged"]), spent);

    let listed = server.get(&c.api_key, "/v1/batches").await;
    let listed = listed.assert_ok().as_array().unwrap().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["counts"]["successful"], 47);
    let (passed, report) = server.audit();
    assert!(passed, "{report}");
}

/// The first webhook whose `event` is `event`.
async fn wait_for_event(receiver: &receiver::Receiver, event: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = receiver
            .received()
            .into_iter()
            .map(|r| r.json())
            .find(|body| body["event"] == event);
        if let Some(body) = found {
            return body;
        }
        assert!(Instant::now() < deadline, "no {event} webhook");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// ₦2,000 and ten ₦500 items: the test twin says 4 fit and 6 would be
/// refused, deducting nothing; the live batch places the first 4 and refuses
/// the other 6 with their reason; the balance ends at 0, never below.
#[tokio::test]
async fn a_batch_larger_than_the_balance_never_overdraws() {
    let server = TestServer::spawn().await;
    let c = server.customer("2000");
    let reference = format!("payday-{}", rand_suffix());
    let body = batch(&reference, items(&reference, 10, 500, &[]));

    let checked = server
        .post(&c.api_key, "/v1/test/batches", body.clone())
        .await;
    let checked = checked.assert_ok().clone();
    assert_eq!(
        (&checked["fit"], &checked["refused"]),
        (&json!(4), &json!(6)),
        "{checked}"
    );
    assert_eq!(kobo(&checked["would_deduct"]), 200_000);
    assert_eq!(checked["items"][4]["error"], "insufficient_balance");
    assert_eq!(
        balance_kobo(&server, &c.api_key).await,
        200_000,
        "the twin deducts nothing"
    );
    let nothing = server
        .get(&c.api_key, &format!("/v1/batches/{reference}"))
        .await;
    nothing.assert_error(404, "not_found");

    let accepted = server.post(&c.api_key, "/v1/batches", body).await;
    assert_eq!(accepted.status, 202, "{}", accepted.body);
    let done = completed(&server, &c.api_key, &reference).await;
    let expected: Vec<&str> = [["successful"; 4].as_slice(), &["refused"; 6]].concat();
    assert_eq!(statuses(&done), expected, "{done}");
    let refused = &done["items"][9];
    assert_eq!(refused["error"], "insufficient_balance");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.starts_with("Insufficient wallet balance"),
        "{message}"
    );
    assert_eq!(kobo(&done["charged"]), 200_000);
    assert_eq!(balance_kobo(&server, &c.api_key).await, 0);
    let statement = server.assert_ledger_consistent(&c.account_id);
    for entry in statement["entries"].as_array().unwrap() {
        assert!(
            kobo(&entry["balance_after"]) >= 0,
            "never negative: {entry}"
        );
    }
}

/// An item whose reference a purchase already has is refused alone; the
/// rest of the batch is bought.
#[tokio::test]
async fn an_item_reference_already_used_is_refused_for_that_item_alone() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let used = reference();
    server
        .place(&c.api_key, "/v1/airtime/purchase", {
            let mut single = airtime(&used, "08031239876", 100);
            single.as_object_mut().unwrap().remove("product");
            single
        })
        .await;
    let reference = format!("mixed-{}", rand_suffix());
    let fresh = format!("{reference}-0001");
    let body = batch(
        &reference,
        vec![
            airtime(&used, "08031231234", 200),
            airtime(&fresh, "08031231235", 200),
        ],
    );
    let accepted = server.post(&c.api_key, "/v1/batches", body).await;
    assert_eq!(accepted.status, 202, "{}", accepted.body);
    let done = completed(&server, &c.api_key, &reference).await;
    assert_eq!(statuses(&done), ["refused", "successful"], "{done}");
    assert_eq!(done["items"][0]["error"], "duplicate_reference");
    assert_eq!(kobo(&done["charged"]), 20_000);
    assert_eq!(
        balance_kobo(&server, &c.api_key).await,
        1_000_000 - 10_000 - 20_000
    );
}

/// A wrong field refuses its item alone, said as the purchase endpoint says it.
#[tokio::test]
async fn a_wrong_item_is_refused_alone_with_the_endpoints_words() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let reference = format!("fields-{}", rand_suffix());
    let glo_number = airtime(&format!("{reference}-0000"), "08051234567", 100);
    let fine = airtime(&format!("{reference}-0001"), "08031234567", 100);
    let accepted = server
        .post(
            &c.api_key,
            "/v1/batches",
            batch(&reference, vec![glo_number, fine]),
        )
        .await;
    assert_eq!(accepted.status, 202, "{}", accepted.body);
    let done = completed(&server, &c.api_key, &reference).await;
    assert_eq!(statuses(&done), ["refused", "successful"], "{done}");
    assert_eq!(done["items"][0]["error"], "validation_error");
    let message = done["items"][0]["message"].as_str().unwrap();
    assert!(message.starts_with("phone:"), "{message}");
}

/// The whole request refused in the envelope, changing nothing: not JSON,
/// no items, more than 1,000, an unknown product, a reference twice.
#[tokio::test]
async fn a_wrong_batch_is_refused_whole_and_changes_nothing() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let reference = format!("wrong-{}", rand_suffix());
    let too_many = batch(&reference, items(&reference, 1001, 50, &[]));
    let twice = batch(
        &reference,
        vec![
            airtime("twice-0001", "08031231234", 100),
            airtime("twice-0001", "08031231235", 100),
        ],
    );
    let unknown = batch(
        &reference,
        vec![json!({"product": "gold", "reference": "gold-00001"})],
    );
    let cases = [
        (too_many, "items: at most 1000 items"),
        (
            twice,
            "items[1].reference: is also the reference of items[0]",
        ),
        (batch(&reference, vec![]), "items: give at least one item"),
        (unknown, "items[0].product"),
    ];
    for (body, said) in cases {
        let reply = server.post(&c.api_key, "/v1/batches", body).await;
        reply.assert_error(422, "validation_error");
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.starts_with(said), "{message}");
    }
    let not_json = server
        .http
        .post(server.url("/v1/batches"))
        .bearer_auth(&c.api_key)
        .header("content-type", "application/json")
        .body("{\"reference\": ")
        .send()
        .await
        .unwrap();
    reply(not_json).await.assert_error(400, "invalid_json");
    let nothing = server
        .get(&c.api_key, &format!("/v1/batches/{reference}"))
        .await;
    nothing.assert_error(404, "not_found");
    assert_eq!(balance_kobo(&server, &c.api_key).await, 1_000_000);
    assert!(transactions(&server, &c.account_id, None).is_empty());
}

/// The key's own rate limit, read by the key cache (within 0.5 s) before
/// this returns.
async fn set_rate_limit(server: &TestServer, key_id: &str, per_second: u32, burst: u32) {
    let (rate, burst) = (per_second.to_string(), burst.to_string());
    let flags = ["--per-second", rate.as_str(), "--burst", burst.as_str()];
    server.cli(&[&["key", "set-rate-limit", key_id][..], &flags].concat());
    tokio::time::sleep(Duration::from_millis(1100)).await;
}

/// `GET /v1/batches/{reference}` until completed, waiting out the key's
/// `429`s (its budget is the items' too).
async fn completed_at_the_keys_pace(server: &TestServer, key: &str, reference: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let reply = server.get(key, &format!("/v1/batches/{reference}")).await;
        if reply.status != 429 && reply.assert_ok()["status"] == "completed" {
            return reply.data().clone();
        }
        assert!(
            Instant::now() < deadline,
            "batch not completed: {}",
            reply.body
        );
        // Seldom: each look spends a token the items want too.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Each item spends the key's rate budget as the purchase request it stands
/// for would (docs/bulk.md): at 5 a second with bursts of 5, a 20-item batch
/// is accepted at once, placed at the key's pace (16 tokens past the burst:
/// over 3 s), and meanwhile the key's own requests are refused `429` with
/// `Retry-After`. Every item is bought once, the money exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batchs_items_spend_the_keys_rate_budget() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    set_rate_limit(&server, &c.key_id, 5, 5).await;
    let reference = format!("paced-{}", rand_suffix());
    let started = Instant::now();
    let body = batch(&reference, items(&reference, 20, 100, &[]));
    let accepted = server.post(&c.api_key, "/v1/batches", body).await;
    assert_eq!(accepted.status, 202, "{}", accepted.body);

    let limited = loop {
        let reply = server.get(&c.api_key, "/v1/wallet/balance").await;
        if reply.status == 429 {
            break reply;
        }
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "the items left the key's budget untouched"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    limited.assert_error(429, "rate_limited");
    let retry_after: u64 = limited.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1, "{retry_after}");

    let done = completed_at_the_keys_pace(&server, &c.api_key, &reference).await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(3_000),
        "20 items at 5 a second from a burst of 5 in {took:?}"
    );
    assert_eq!(statuses(&done), vec!["successful"; 20], "{done}");
    assert_eq!(kobo(&done["charged"]), 20 * 10_000);
    assert_eq!(transactions(&server, &c.account_id, None).len(), 20);
    let statement = server.assert_ledger_consistent(&c.account_id);
    assert_eq!(entries_of_kind(&statement, "debit"), 20, "{statement}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        balance_kobo(&server, &c.api_key).await,
        1_000_000 - 20 * 10_000
    );
}

/// A `batch.completed` whose delivery failed links, on the console's
/// customer page, to its batch's row there (not to a purchase page that
/// does not exist), and a purchase's failed delivery to the purchase.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_batch_webhook_links_to_its_batch() {
    let server = TestServer::spawn().await;
    crate::console::add_operators(&server);
    let receiver = receiver::Receiver::start().await;
    let c = server.customer("10000");
    server.cli(&["key", "webhook", &c.key_id, "--url", &receiver.url("/fail")]);
    let reference = format!("hooked-{}", rand_suffix());
    let body = batch(&reference, items(&reference, 2, 100, &[]));
    let accepted = server.post(&c.api_key, "/v1/batches", body).await;
    assert_eq!(accepted.status, 202, "{}", accepted.body);
    let batch_id = accepted.data()["batch_id"].as_str().unwrap().to_owned();
    let done = completed(&server, &c.api_key, &reference).await;
    let code = done["items"][0]["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();

    // Every delivery fails (the receiver answers 500; no retries by default).
    let deadline = Instant::now() + Duration::from_secs(30);
    let failed = loop {
        let listed = server.cli(&["webhook", "list", "--account", &c.account_id, "--failed"]);
        let events = listed["events"].as_array().unwrap().clone();
        let batch_failed = events
            .iter()
            .any(|e| e["event"]["event"] == "batch.completed");
        if batch_failed && events.len() == 3 {
            break events;
        }
        assert!(Instant::now() < deadline, "not failed yet: {listed}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let batch_event = failed
        .iter()
        .find(|e| e["event"]["event"] == "batch.completed")
        .unwrap();
    assert_eq!(batch_event["event"]["transaction_code"], batch_id.as_str());

    let owner = crate::console::admin(&server, crate::console::OWNER).await;
    let path = format!("/admin/customers/{}", c.account_id);
    let (status, _, html) = crate::console::page(&server, &owner, &path).await;
    assert_eq!(status, 200);
    let table = &html[html
        .find("id=\"failed-webhooks\"")
        .expect("the failed table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(
        table.contains(&format!("<a href=\"#batch-{batch_id}\">{reference}</a>")),
        "{table}"
    );
    assert!(
        !table.contains(&format!("/admin/transactions/{batch_id}")),
        "{table}"
    );
    assert!(
        table.contains(&format!(
            "<a href=\"/admin/transactions/{code}\">{code}</a>"
        )),
        "{table}"
    );
    // The link's target: the batch's row on the same page.
    assert!(
        html.contains(&format!(
            "<tr id=\"batch-{batch_id}\" data-reference=\"{reference}\">"
        )),
        "{html}"
    );
}

/// The server killed (SIGKILL) in the middle of a batch and started again:
/// the items placed before the kill keep their one purchase (none placed
/// again), the rest are placed after the restart (once the dead node's
/// lease ends), and the money is exact. The key's rate budget (2 a second,
/// bursts of 1) paces the items so the kill falls mid-batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_survives_a_restart_mid_batch() {
    let mut server = TestServer::spawn().await;
    let c = server.customer("10000");
    set_rate_limit(&server, &c.key_id, 2, 1).await;
    let reference = format!("restart-{}", rand_suffix());
    let count = 12;
    let body = batch(&reference, items(&reference, count, 100, &[3]));
    let accepted = server.post(&c.api_key, "/v1/batches", body).await;
    assert_eq!(accepted.status, 202, "{}", accepted.body);

    // Some items placed, not all: then the crash.
    let deadline = Instant::now() + Duration::from_secs(20);
    let before = loop {
        let placed = transactions(&server, &c.account_id, None);
        if placed.len() >= 3 {
            break placed;
        }
        assert!(Instant::now() < deadline, "no item placed: {placed:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    server.kill();
    let before: Vec<(String, String)> = before
        .iter()
        .map(|t| {
            (
                t["reference"].as_str().unwrap().to_owned(),
                t["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(before.len() < count, "the batch ended before the kill");

    server.start();
    let done = completed_at_the_keys_pace(&server, &c.api_key, &reference).await;
    let after = transactions(&server, &c.account_id, None);
    assert_eq!(after.len(), count, "one purchase per item: {after:?}");
    for (item_reference, code) in &before {
        let item = done["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["reference"] == item_reference.as_str())
            .unwrap();
        assert_eq!(
            item["reference_code"],
            code.as_str(),
            "placed again: {item}"
        );
    }
    let mut expected = vec!["successful"; count];
    expected[3] = "failed";
    assert_eq!(statuses(&done), expected, "{done}");
    let spent = (count as i64 - 1) * 10_000;
    assert_eq!(kobo(&done["charged"]), spent);
    let statement = server.assert_ledger_consistent(&c.account_id);
    assert_eq!(entries_of_kind(&statement, "debit"), count, "{statement}");
    assert_eq!(entries_of_kind(&statement, "refund"), 1, "{statement}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(balance_kobo(&server, &c.api_key).await, 1_000_000 - spent);
}
