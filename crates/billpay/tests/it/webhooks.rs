//! Webhooks end to end: a real `billpay serve`, the real CLI (`--json`) and a
//! real HTTP receiver on loopback.
//!
//! Every test runs on a multi-threaded runtime: the receiver lives on the
//! test's runtime, and the CLI calls block a thread while they run, so a
//! single-threaded runtime would stall the receiver (and its timestamps).


use billpay_webhook_verify::{VerifyError, verify_now};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use crate::support::receiver::{Received, Receiver};
use crate::support::*;

const TIMESTAMP: &str = "x-service-timestamp";
const SIGNATURE: &str = "x-service-signature";

/// How long nothing more may arrive for "exactly N" checks. The delivery
/// loop polls every 200 ms, so this covers several of its cycles.
const SETTLE: Duration = Duration::from_millis(1_000);

// ---------------------------------------------------------------- helpers

fn set_url(server: &TestServer, key_id: &str, url: &str) -> Value {
    server.cli(&["key", "webhook", key_id, "--url", url])
}

/// Turns signing on; returns the secret shown (once).
fn enable_signing(server: &TestServer, key_id: &str) -> String {
    let out = server.cli(&["key", "webhook-security", key_id, "--enable"]);
    assert_eq!(out["key_id"], key_id, "{out}");
    let secret = out["webhook_secret"]
        .as_str()
        .unwrap_or_else(|| panic!("no webhook_secret: {out}"))
        .to_owned();
    assert!(secret.len() >= 32, "weak secret {secret:?}");
    secret
}

fn disable_signing(server: &TestServer, key_id: &str) {
    let out = server.cli(&["key", "webhook-security", key_id, "--disable"]);
    assert_eq!(out["webhook_signing"], false, "{out}");
    assert!(out.get("webhook_secret").is_none(), "{out}");
}

/// `billpay webhook list --account ID --json`: the entry of `code`
/// (`{"event": {...}, "attempts": [...]}`), if any.
fn listed_event(
    server: &TestServer,
    account_id: &str,
    code: &str,
    failed_only: bool,
) -> Option<Value> {
    let mut args = vec!["webhook", "list", "--account", account_id];
    if failed_only {
        args.push("--failed");
    }
    let out = server.cli(&args);
    out["events"]
        .as_array()
        .unwrap_or_else(|| panic!("no events array: {out}"))
        .iter()
        .find(|e| e["event"]["transaction_code"] == code)
        .cloned()
}

/// Polls the webhook log until the event of `code` satisfies `done`.
async fn wait_event(
    server: &TestServer,
    account_id: &str,
    code: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let entry = listed_event(server, account_id, code, false);
        if let Some(entry) = &entry
            && done(entry)
        {
            return entry.clone();
        }
        assert!(
            Instant::now() < deadline,
            "event of {code} never became {what}: {entry:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the event of `code` is no longer pending (its delivery has
/// been recorded as final).
async fn wait_settled(server: &TestServer, account_id: &str, code: &str) -> Value {
    wait_event(server, account_id, code, "final", |e| {
        e["event"]["status"] != "pending"
    })
    .await
}

fn attempts(entry: &Value) -> &Vec<Value> {
    entry["attempts"]
        .as_array()
        .unwrap_or_else(|| panic!("no attempts array: {entry}"))
}

/// A loopback URL on which nothing listens: connecting is refused.
fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/hook")
}

/// Places a live purchase; returns the accepted `data`.
async fn buy(server: &TestServer, c: &Customer, path: &str, body: Value) -> Value {
    let reply = server.post(&c.api_key, path, body).await;
    let data = reply.assert_ok().clone();
    assert!(data["reference_code"].is_string(), "{data}");
    data
}

fn code_of(accepted: &Value) -> String {
    accepted["reference_code"].as_str().unwrap().to_owned()
}

fn airtime(phone: &str) -> Value {
    json!({ "provider_id": "mtn", "phone": phone, "amount": 500, "reference": reference() })
}

/// Exactly `count` webhooks for `code`, now and after a settle period.
async fn exactly(receiver: &Receiver, code: &str, count: usize) -> Vec<Received> {
    receiver.wait_for(code, count).await;
    tokio::time::sleep(SETTLE).await;
    let got = receiver.for_code(code);
    assert_eq!(got.len(), count, "webhooks for {code}: {got:#?}");
    got
}

fn assert_json_content_type(hook: &Received) {
    let content_type = hook.header("content-type").unwrap_or_default();
    assert!(
        content_type == "application/json" || content_type.starts_with("application/json;"),
        "Content-Type {content_type:?}"
    );
}

fn assert_unsigned(hook: &Received) {
    assert_eq!(hook.header(TIMESTAMP), None, "signing is off");
    assert_eq!(hook.header(SIGNATURE), None, "signing is off");
}

/// The webhook carries a valid signature for `secret` (and the headers have
/// the spec's shapes).
fn verify_with(hook: &Received, secret: &str) -> Result<(), VerifyError> {
    let timestamp = hook.header(TIMESTAMP).expect("X-Service-Timestamp");
    let signature = hook.header(SIGNATURE).expect("X-Service-Signature");
    assert!(
        !timestamp.is_empty() && timestamp.bytes().all(|b| b.is_ascii_digit()),
        "timestamp {timestamp:?}"
    );
    assert_eq!(signature.len(), 64, "signature {signature:?}");
    assert!(
        signature.bytes().all(|b| b.is_ascii_hexdigit()),
        "{signature:?}"
    );
    verify_now(secret, &timestamp, &signature, &hook.body)
}

fn assert_signed(hook: &Received, secret: &str) {
    assert_eq!(verify_with(hook, secret), Ok(()), "body {:?}", hook.json());
    // Not trivially accepted: the same headers over another body fail.
    let mut tampered = hook.body.clone();
    tampered.push(b' ');
    let timestamp = hook.header(TIMESTAMP).unwrap();
    let signature = hook.header(SIGNATURE).unwrap();
    assert_eq!(
        verify_now(secret, &timestamp, &signature, &tampered),
        Err(VerifyError::SignatureMismatch)
    );
}

/// `2026-11-22T01:51:22.123+00:00`: ISO 8601 with a numeric offset.
fn assert_iso8601_with_offset(value: &Value) {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"));
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    let ok = b.len() >= 25
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && {
            let offset = &b[b.len() - 6..];
            matches!(offset[0], b'+' | b'-')
                && offset[1..3].iter().all(u8::is_ascii_digit)
                && offset[3] == b':'
                && offset[4..6].iter().all(u8::is_ascii_digit)
        }
        && {
            let fraction = &b[19..b.len() - 6];
            fraction.is_empty()
                || (fraction[0] == b'.'
                    && fraction.len() > 1
                    && fraction[1..].iter().all(u8::is_ascii_digit))
        };
    assert!(ok, "not ISO 8601 with offset: {s:?}");
}

/// What one purchase's webhook must say.
struct Expect<'a> {
    event: &'a str,
    successful: bool,
    /// `plan` (data, cable) or `item` (the others).
    label_field: &'a str,
    /// Electricity and education: a `pin` on success.
    pin: Option<fn(&str) -> bool>,
    epin: bool,
}

/// Checks a webhook body against the spec's payload fields, the accepted
/// response and the status endpoint.
fn assert_payload(hook: &Received, accepted: &Value, status: &Value, expect: &Expect<'_>) {
    let body = hook.json();
    let code = accepted["reference_code"].as_str().unwrap();
    let ctx = format!("webhook for {code}: {body}");
    let fields: BTreeSet<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let allowed: BTreeSet<&str> = [
        "event",
        "reference",
        "reference_code",
        "status",
        "message",
        "plan",
        "item",
        "recipient",
        "amount",
        "pin",
        "completed_at",
        "batch_id",
    ]
    .into();
    assert!(fields.is_subset(&allowed), "unexpected fields: {ctx}");

    assert_eq!(body["event"], expect.event, "{ctx}");
    assert_eq!(body["reference"], accepted["reference"], "{ctx}");
    assert!(body["reference"].is_string(), "{ctx}");
    assert_eq!(body["reference_code"], code, "{ctx}");
    let want_status = if expect.successful {
        "successful"
    } else {
        "failed"
    };
    assert_eq!(body["status"], want_status, "{ctx}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{ctx}");
    assert_eq!(body["message"], status["message"], "{ctx}");
    if !expect.successful {
        assert!(
            message.contains("refunded"),
            "failure message must say the wallet was refunded: {ctx}"
        );
    }

    let other = if expect.label_field == "plan" {
        "item"
    } else {
        "plan"
    };
    assert!(
        body[expect.label_field]
            .as_str()
            .is_some_and(|l| !l.is_empty()),
        "{ctx}"
    );
    assert_eq!(
        body[expect.label_field], accepted[expect.label_field],
        "{ctx}"
    );
    assert!(body.get(other).is_none(), "only one of plan/item: {ctx}");

    assert_eq!(body["recipient"], accepted["recipient"], "{ctx}");
    assert!(body["amount"].is_number(), "amount is a number: {ctx}");
    assert_eq!(body["amount"], accepted["amount"], "{ctx}");

    match (expect.pin, expect.successful) {
        (Some(valid), true) => {
            let pin = body["pin"]
                .as_str()
                .unwrap_or_else(|| panic!("no pin: {ctx}"));
            assert!(valid(pin), "pin {pin:?}: {ctx}");
            assert_eq!(body["pin"], status["pin"], "{ctx}");
        }
        _ => assert!(body.get("pin").is_none(), "no pin expected: {ctx}"),
    }
    if expect.epin {
        let batch = body["batch_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no batch_id: {ctx}"));
        assert!(!batch.is_empty(), "{ctx}");
        assert_eq!(body["batch_id"], accepted["batch_id"], "{ctx}");
    } else {
        assert!(body.get("batch_id").is_none(), "{ctx}");
    }

    assert_iso8601_with_offset(&body["completed_at"]);
    assert_eq!(body["completed_at"], status["completed_at"], "{ctx}");
}

fn is_electricity_token(pin: &str) -> bool {
    let groups: Vec<&str> = pin.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .all(|g| g.len() == 4 && g.bytes().all(|b| b.is_ascii_digit()))
}

fn are_exam_pins(pin: &str) -> bool {
    let pins: Vec<&str> = pin.split(',').collect();
    pins.len() == 2
        && pins
            .iter()
            .all(|p| p.len() == 12 && p.bytes().all(|b| b.is_ascii_digit()))
}

// ------------------------------------------------------------------ tests

/// One signed webhook per purchase, for every product and both outcomes,
/// carrying the spec's payload fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_product_gets_one_signed_webhook_with_the_spec_payload() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("100000");
    set_url(&server, &c.key_id, &receiver.url("/ok"));
    let secret = enable_signing(&server, &c.key_id);

    let item = "item";
    let plan = "plan";
    let purchases: Vec<(&str, Value, Expect<'_>)> = vec![
        (
            "/v1/electricity/purchase",
            electricity(&reference(), "12345678901", 1500.0),
            Expect {
                event: "electricity.purchase",
                successful: true,
                label_field: item,
                pin: Some(is_electricity_token),
                epin: false,
            },
        ),
        (
            // The sandbox fails recipients ending in 0000.
            "/v1/electricity/purchase",
            electricity(&reference(), "45670000", 2000.0),
            Expect {
                event: "electricity.purchase",
                successful: false,
                label_field: item,
                pin: Some(is_electricity_token),
                epin: false,
            },
        ),
        (
            "/v1/epin/purchase",
            json!({ "provider_id": "mtn", "denomination": 100, "quantity": 3, "reference": reference() }),
            Expect {
                event: "epin.purchase",
                successful: true,
                label_field: item,
                pin: None,
                epin: true,
            },
        ),
        (
            "/v1/airtime/purchase",
            // International form in; the webhook carries the local form.
            json!({ "provider_id": "mtn", "phone": "2348031234567", "amount": 500, "reference": reference() }),
            Expect {
                event: "airtime.purchase",
                successful: true,
                label_field: item,
                pin: None,
                epin: false,
            },
        ),
        (
            "/v1/data/purchase",
            json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": "08031234568", "reference": reference() }),
            Expect {
                event: "data.purchase",
                successful: true,
                label_field: plan,
                pin: None,
                epin: false,
            },
        ),
        (
            "/v1/cable/purchase",
            json!({ "provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": "7012345678", "reference": reference() }),
            Expect {
                event: "cable.purchase",
                successful: true,
                label_field: plan,
                pin: None,
                epin: false,
            },
        ),
        (
            "/v1/education/purchase",
            json!({ "provider_id": "waec", "quantity": 2, "phone": "08031234569", "reference": reference() }),
            Expect {
                event: "education.purchase",
                successful: true,
                label_field: item,
                pin: Some(are_exam_pins),
                epin: false,
            },
        ),
        (
            "/v1/bet/purchase",
            json!({ "provider_id": "bet9ja", "customer_id": "BET12345", "amount": 1000, "reference": reference() }),
            Expect {
                event: "bet.purchase",
                successful: true,
                label_field: item,
                pin: None,
                epin: false,
            },
        ),
    ];

    let mut placed = Vec::new();
    for (path, body, expect) in purchases {
        let accepted = buy(&server, &c, path, body.clone()).await;
        assert_eq!(accepted["reference"], body["reference"]);
        placed.push((accepted, expect));
    }
    for (accepted, expect) in &placed {
        let code = code_of(accepted);
        let status = server.wait_final(&c.api_key, &code).await;
        let hooks = receiver.wait_for(&code, 1).await;
        let hook = &hooks[0];
        assert_eq!(hook.path, "/ok");
        assert_json_content_type(hook);
        assert_signed(hook, &secret);
        assert_payload(hook, accepted, &status, expect);
    }
    let airtime_hook = receiver.for_code(&code_of(&placed[3].0));
    assert_eq!(airtime_hook[0].json()["recipient"], "08031234567");

    // Exactly one each, and each logged as delivered with one 2xx attempt.
    tokio::time::sleep(SETTLE).await;
    for (accepted, expect) in &placed {
        let code = code_of(accepted);
        assert_eq!(receiver.for_code(&code).len(), 1, "webhooks for {code}");
        let entry = wait_settled(&server, &c.account_id, &code).await;
        assert_eq!(entry["event"]["status"], "delivered", "{entry}");
        assert_eq!(entry["event"]["event"], expect.event, "{entry}");
        assert_eq!(entry["event"]["attempts"], 1, "{entry}");
        let tries = attempts(&entry);
        assert_eq!(tries.len(), 1, "{entry}");
        assert_eq!(tries[0]["http_status"], 200, "{entry}");
        assert_eq!(tries[0]["error"], Value::Null, "{entry}");
        assert_eq!(tries[0]["url"], receiver.url("/ok"), "{entry}");
        // The logged payload is the body that was sent, byte for byte.
        let sent = receiver.for_code(&code)[0].body.clone();
        assert_eq!(
            entry["event"]["payload"].as_str().unwrap().as_bytes(),
            &sent[..]
        );
    }
    assert_eq!(receiver.received().len(), placed.len());
}

/// Verification off → no signature headers; switching it off and on again
/// gives a new secret and the old one no longer verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_off_has_no_headers_and_reenabling_rotates_the_secret() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("100000");
    set_url(&server, &c.key_id, &receiver.url("/ok"));

    // Off by default.
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031230001")).await);
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    assert_json_content_type(&hook);
    assert_unsigned(&hook);

    let first = enable_signing(&server, &c.key_id);
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031230002")).await);
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    assert_signed(&hook, &first);

    disable_signing(&server, &c.key_id);
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031230003")).await);
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    assert_unsigned(&hook);

    let second = enable_signing(&server, &c.key_id);
    assert_ne!(first, second, "re-enabling must generate a new secret");
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031230004")).await);
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    assert_signed(&hook, &second);
    assert_eq!(
        verify_with(&hook, &first),
        Err(VerifyError::SignatureMismatch)
    );

    tokio::time::sleep(SETTLE).await;
    assert_eq!(receiver.received().len(), 4);
}

/// 500, a receiver slower than 10 s and a refused connection are each
/// logged as failed (no retry by default), and a healthy receiver is served
/// promptly while the slow one hangs. SIGTERM during the slow delivery waits
/// for it to be recorded, then exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_deliveries_are_logged_and_do_not_hold_up_healthy_ones() {
    let mut server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let slow = server.customer("10000");
    let failing = server.customer("10000");
    let closed = server.customer("10000");
    let healthy = server.customer("10000");
    set_url(&server, &slow.key_id, &receiver.url("/slow"));
    set_url(&server, &failing.key_id, &receiver.url("/fail"));
    let closed_url = closed_port_url();
    set_url(&server, &closed.key_id, &closed_url);
    set_url(&server, &healthy.key_id, &receiver.url("/ok"));

    // The slow receiver gets its webhook and hangs on to it.
    let slow_code = code_of(
        &buy(
            &server,
            &slow,
            "/v1/airtime/purchase",
            airtime("08031231001"),
        )
        .await,
    );
    let slow_started = receiver.wait_for(&slow_code, 1).await[0].at;

    let failing_code = code_of(
        &buy(
            &server,
            &failing,
            "/v1/airtime/purchase",
            airtime("08031231002"),
        )
        .await,
    );
    let closed_code = code_of(
        &buy(
            &server,
            &closed,
            "/v1/airtime/purchase",
            airtime("08031231003"),
        )
        .await,
    );

    // Meanwhile a healthy receiver is served at once.
    let healthy_accepted = buy(
        &server,
        &healthy,
        "/v1/electricity/purchase",
        electricity(&reference(), "12345678901", 1500.0),
    )
    .await;
    let healthy_code = code_of(&healthy_accepted);
    server.wait_final(&healthy.api_key, &healthy_code).await;
    let finished = Instant::now();
    let hook = receiver.wait_for(&healthy_code, 1).await.remove(0);
    let lag = hook.at.saturating_duration_since(finished);
    assert!(
        lag < Duration::from_secs(2),
        "healthy webhook {lag:?} after the purchase finished"
    );
    assert!(
        slow_started.elapsed() < Duration::from_secs(10),
        "the check must run while the slow receiver still hangs ({:?})",
        slow_started.elapsed()
    );
    let slow_entry = listed_event(&server, &slow.account_id, &slow_code, false).unwrap();
    assert_eq!(
        slow_entry["event"]["status"], "pending",
        "still in flight: {slow_entry}"
    );
    // A resend while that delivery is under way is refused: it would send twice at once.
    let (ok, refused) = server.cli_result(&["webhook", "resend", &slow_code]);
    assert!(!ok, "resend during a delivery was accepted: {refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("in progress"),
        "{refused}"
    );

    let entry = wait_settled(&server, &healthy.account_id, &healthy_code).await;
    assert_eq!(entry["event"]["status"], "delivered", "{entry}");
    assert_eq!(attempts(&entry)[0]["http_status"], 200, "{entry}");

    let entry = wait_settled(&server, &failing.account_id, &failing_code).await;
    assert_eq!(entry["event"]["status"], "failed", "{entry}");
    assert_eq!(entry["event"]["attempts"], 1, "{entry}");
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 1, "{entry}");
    assert_eq!(tries[0]["http_status"], 500, "{entry}");
    assert!(
        tries[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("500")),
        "{entry}"
    );
    assert!(tries[0]["latency_ms"].is_u64(), "{entry}");
    assert_eq!(tries[0]["url"], receiver.url("/fail"), "{entry}");

    let entry = wait_settled(&server, &closed.account_id, &closed_code).await;
    assert_eq!(entry["event"]["status"], "failed", "{entry}");
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 1, "{entry}");
    assert_eq!(tries[0]["http_status"], Value::Null, "{entry}");
    assert!(
        tries[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("refused")),
        "{entry}"
    );
    assert!(tries[0]["latency_ms"].is_u64(), "{entry}");
    assert_eq!(tries[0]["url"], closed_url, "{entry}");

    // SIGTERM while the slow delivery is still in flight: the server lets it
    // run to its 10 s limit, records it, and only then exits.
    assert_eq!(
        listed_event(&server, &slow.account_id, &slow_code, false).unwrap()["event"]["status"],
        "pending",
        "the slow delivery must still be in flight when SIGTERM is sent"
    );
    let exit = tokio::task::block_in_place(|| server.terminate_within(Duration::from_secs(20)));
    assert!(exit.success(), "graceful exit: {exit:?}");
    let entry = listed_event(&server, &slow.account_id, &slow_code, false).unwrap();
    assert_eq!(
        entry["event"]["status"], "failed",
        "recorded before exiting: {entry}"
    );
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 1, "{entry}");
    assert_eq!(tries[0]["http_status"], Value::Null, "{entry}");
    assert!(
        tries[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out")),
        "{entry}"
    );
    let latency = tries[0]["latency_ms"].as_u64().unwrap();
    assert!(
        (9_500..12_000).contains(&latency),
        "slow attempt took {latency} ms: {entry}"
    );

    // `--failed` lists exactly the failed ones.
    assert!(listed_event(&server, &failing.account_id, &failing_code, true).is_some());
    assert!(listed_event(&server, &closed.account_id, &closed_code, true).is_some());
    assert!(listed_event(&server, &slow.account_id, &slow_code, true).is_some());
    assert!(listed_event(&server, &healthy.account_id, &healthy_code, true).is_none());

    // No redelivery by default (the server ran for seconds after the
    // failures, longer than the first retry delay of a key with retries).
    assert_eq!(receiver.for_code(&failing_code).len(), 1);
    assert_eq!(receiver.for_code(&slow_code).len(), 1);
    assert_eq!(receiver.for_code(&healthy_code).len(), 1);
    assert_eq!(receiver.for_code(&closed_code).len(), 0);
}

/// A key without a webhook URL: the event is recorded as skipped.
/// A key whose receiver hangs holds at most its share of the delivery slots:
/// with 2 slots and 1 per key, a key with four hanging webhooks leaves the
/// other slot to everyone else (before, all slots waited out the 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_receiver_holds_only_its_share_of_delivery_slots() {
    let server = TestServer::spawn_with_env(
        Options::default(),
        &[
            ("BILLPAY_WEBHOOK_CONCURRENCY", "2"),
            ("BILLPAY_WEBHOOK_CONCURRENCY_PER_KEY", "1"),
        ],
    )
    .await;
    let receiver = Receiver::start().await;
    let hanging = server.customer("10000");
    let healthy = server.customer("10000");
    set_url(&server, &hanging.key_id, &receiver.url("/slow"));
    set_url(&server, &healthy.key_id, &receiver.url("/ok"));

    let mut hanging_codes = Vec::new();
    for phone in ["08031232001", "08031232002", "08031232003", "08031232004"] {
        let accepted = buy(&server, &hanging, "/v1/airtime/purchase", airtime(phone)).await;
        hanging_codes.push(code_of(&accepted));
    }
    let first_hang = receiver.wait_for(&hanging_codes[0], 1).await[0].at;

    let code = code_of(
        &buy(
            &server,
            &healthy,
            "/v1/airtime/purchase",
            airtime("08031232005"),
        )
        .await,
    );
    server.wait_final(&healthy.api_key, &code).await;
    let finished = Instant::now();
    let hook = receiver.wait_for(&code, 1).await.remove(0);
    let lag = hook.at.saturating_duration_since(finished);
    assert!(
        lag < Duration::from_secs(3),
        "the healthy key's webhook waited {lag:?} behind a hanging receiver"
    );
    assert!(
        first_hang.elapsed() < Duration::from_secs(10),
        "the check must run while the hanging receiver still holds its slot"
    );
    let hanging_now = hanging_codes
        .iter()
        .filter(|code| !receiver.for_code(code).is_empty())
        .count();
    assert_eq!(hanging_now, 1, "the hanging key had more than its one slot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_webhook_url_is_recorded_as_skipped() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031232001")).await);
    server.wait_final(&c.api_key, &code).await;
    let entry = wait_settled(&server, &c.account_id, &code).await;
    assert_eq!(entry["event"]["status"], "skipped", "{entry}");
    assert_eq!(entry["event"]["event"], "airtime.purchase", "{entry}");
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 1, "{entry}");
    assert_eq!(tries[0]["url"], Value::Null, "{entry}");
    assert_eq!(tries[0]["http_status"], Value::Null, "{entry}");
    assert!(
        tries[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("no webhook URL")),
        "{entry}"
    );
    // Skipped is not failed.
    assert!(listed_event(&server, &c.account_id, &code, true).is_none());
}

/// `billpay webhook resend CODE` sends the same body once more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resend_delivers_the_same_body_once_more() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("10000");
    set_url(&server, &c.key_id, &receiver.url("/ok"));
    let secret = enable_signing(&server, &c.key_id);
    let code = code_of(
        &buy(
            &server,
            &c,
            "/v1/electricity/purchase",
            electricity(&reference(), "12345678901", 1500.0),
        )
        .await,
    );
    receiver.wait_for(&code, 1).await;
    let entry = wait_settled(&server, &c.account_id, &code).await;
    assert_eq!(entry["event"]["status"], "delivered", "{entry}");

    let out = server.cli(&["webhook", "resend", &code]);
    assert_eq!(out["queued"], true, "{out}");
    assert_eq!(out["reference_code"], code.as_str(), "{out}");
    assert_eq!(out["event_id"], entry["event"]["id"], "{out}");

    let hooks = exactly(&receiver, &code, 2).await;
    assert_eq!(
        hooks[0].body, hooks[1].body,
        "a resend carries the identical body"
    );
    assert_signed(&hooks[0], &secret);
    assert_signed(&hooks[1], &secret);
    let entry = wait_settled(&server, &c.account_id, &code).await;
    assert_eq!(entry["event"]["status"], "delivered", "{entry}");
    assert_eq!(attempts(&entry).len(), 2, "{entry}");

    // By event id too.
    let event_id = entry["event"]["id"].as_str().unwrap().to_owned();
    server.cli(&["webhook", "resend", &event_id]);
    exactly(&receiver, &code, 3).await;

    // An unknown code is a clear error.
    let (ok, out) = server.cli_result(&["webhook", "resend", "NOPE-123456"]);
    assert!(!ok, "{out}");
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("NOPE-123456")),
        "{out}"
    );
}

/// With retries opted in, a failed attempt leaves the event pending with a
/// retry scheduled instead of failing it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opted_in_retries_keep_a_failed_event_pending() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("10000");
    set_url(&server, &c.key_id, &receiver.url("/fail"));
    let out = server.cli(&["key", "webhook-retries", &c.key_id, "--enable"]);
    assert_eq!(out["webhook_retries"], true, "{out}");

    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031233001")).await);
    let entry = wait_event(&server, &c.account_id, &code, "attempted", |e| {
        e["event"]["attempts"].as_u64() >= Some(1)
    })
    .await;
    assert_eq!(
        entry["event"]["status"], "pending",
        "retry scheduled: {entry}"
    );
    assert_eq!(entry["event"]["attempts"], 1, "{entry}");
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 1, "{entry}");
    assert_eq!(tries[0]["http_status"], 500, "{entry}");
    assert_eq!(receiver.for_code(&code).len(), 1);
    // Not failed (the first retry is due 5 s after the first attempt).
    assert!(listed_event(&server, &c.account_id, &code, true).is_none());
}

/// Durability: an event that is pending in the outbox when the server is
/// SIGKILLed is delivered after the restart, exactly once; and one queued
/// while the server is down is delivered on start, exactly once.
///
/// Deterministic by construction: the key opts into retries and its URL
/// points at a closed port, so the first attempt fails at once and leaves
/// the event pending with its retry due 5 s later and no lease held. The
/// server is killed in that window, and the URL is repointed at the receiver
/// while it is down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_event_survives_a_crash_and_is_delivered_once() {
    let mut server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("10000");
    server.cli(&["key", "webhook-retries", &c.key_id, "--enable"]);
    set_url(&server, &c.key_id, &closed_port_url());
    let secret = enable_signing(&server, &c.key_id);

    let code = code_of(
        &buy(
            &server,
            &c,
            "/v1/electricity/purchase",
            electricity(&reference(), "12345678901", 1500.0),
        )
        .await,
    );
    let final_status = server.wait_final(&c.api_key, &code).await;
    assert_eq!(final_status["status"], "successful");
    let entry = wait_event(&server, &c.account_id, &code, "attempted", |e| {
        e["event"]["attempts"].as_u64() >= Some(1)
    })
    .await;
    assert_eq!(entry["event"]["status"], "pending", "{entry}");
    server.kill();
    let entry = listed_event(&server, &c.account_id, &code, false).unwrap();
    assert_eq!(
        entry["event"]["attempts"], 1,
        "killed too late (the retry already ran): {entry}"
    );

    set_url(&server, &c.key_id, &receiver.url("/ok"));
    assert!(receiver.for_code(&code).is_empty());
    server.start();
    let hooks = receiver.wait_for(&code, 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        receiver.for_code(&code).len(),
        1,
        "exactly once after the restart"
    );
    assert_signed(&hooks[0], &secret);
    assert_eq!(hooks[0].json()["status"], "successful");
    assert_eq!(hooks[0].json()["pin"], final_status["pin"]);
    let entry = wait_settled(&server, &c.account_id, &code).await;
    assert_eq!(entry["event"]["status"], "delivered", "{entry}");
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 2, "{entry}");
    assert!(
        tries[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("refused")),
        "{entry}"
    );
    assert_eq!(tries[1]["http_status"], 200, "{entry}");

    // Queued while the server is down (a committed, never-claimed event):
    // delivered on start, once.
    server.kill();
    server.cli(&["webhook", "resend", &code]);
    server.start();
    let hooks = receiver.wait_for(&code, 2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.for_code(&code).len(), 2, "exactly once more");
    assert_eq!(hooks[0].body, hooks[1].body);
}

/// `key webhook --url`: only absolute http(s) URLs; `''` clears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_url_is_validated_and_can_be_cleared() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let out = set_url(&server, &c.key_id, "https://hooks.example.com/billpay");
    assert_eq!(
        out["webhook_url"], "https://hooks.example.com/billpay",
        "{out}"
    );

    for (url, says) in [
        ("ftp://x", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("hooks.example.com/billpay", "not a valid absolute URL"),
        (
            "https://user:secret@example.com/hook",
            "username or password",
        ),
    ] {
        let (ok, out) = server.cli_result(&["key", "webhook", &c.key_id, "--url", url]);
        assert!(!ok, "{url} accepted: {out}");
        let error = out["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{url}: {out}"));
        assert!(error.contains(says), "{url}: {error:?}");
        assert!(
            !error.contains("secret"),
            "the URL's password is not echoed: {error:?}"
        );
    }

    // The rejected URLs changed nothing.
    let out = server.cli(&["key", "webhook-retries", &c.key_id, "--disable"]);
    assert_eq!(
        out["webhook_url"], "https://hooks.example.com/billpay",
        "{out}"
    );

    let out = set_url(&server, &c.key_id, "");
    assert_eq!(out["webhook_url"], Value::Null, "{out}");
}

/// Without BILLPAY_WEBHOOK_ALLOW_PRIVATE the server refuses loopback
/// targets (by IP literal and by name): logged, and nothing is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_targets_are_refused_unless_allowed() {
    let server = TestServer::spawn_with_env(
        Options::default(),
        &[("BILLPAY_WEBHOOK_ALLOW_PRIVATE", "false")],
    )
    .await;
    let receiver = Receiver::start().await;
    let by_ip = server.customer("10000");
    let by_name = server.customer("10000");
    set_url(&server, &by_ip.key_id, &receiver.url("/ok"));
    let port = receiver.base.rsplit(':').next().unwrap();
    set_url(
        &server,
        &by_name.key_id,
        &format!("http://localhost:{port}/ok"),
    );

    let ip_code = code_of(
        &buy(
            &server,
            &by_ip,
            "/v1/airtime/purchase",
            airtime("08031234001"),
        )
        .await,
    );
    let name_code = code_of(
        &buy(
            &server,
            &by_name,
            "/v1/airtime/purchase",
            airtime("08031234002"),
        )
        .await,
    );
    for (c, code) in [(&by_ip, &ip_code), (&by_name, &name_code)] {
        let entry = wait_settled(&server, &c.account_id, code).await;
        assert_eq!(entry["event"]["status"], "failed", "{entry}");
        let tries = attempts(&entry);
        assert_eq!(tries.len(), 1, "{entry}");
        assert_eq!(tries[0]["http_status"], Value::Null, "{entry}");
        assert!(
            tries[0]["error"]
                .as_str()
                .is_some_and(|e| e.contains("refused")),
            "{entry}"
        );
    }
    tokio::time::sleep(SETTLE).await;
    assert!(receiver.received().is_empty(), "{:?}", receiver.received());
}

/// Whether `needle` occurs anywhere in `haystack`.
fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// Tokens, pins and serials are money: sealed at rest like webhook secrets,
/// in clear only where they are shown (status API, e-pin batch API, webhook,
/// CLI), never in the database file (and its WAL), its rows or the logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delivered_pins_and_webhook_secrets_are_sealed_at_rest() {
    let receiver = Receiver::start().await;
    let mut server =
        TestServer::spawn_with_env(Options::default(), &[("BILLPAY_LOG", "debug")]).await;
    let c = server.customer("50000");
    set_url(&server, &c.key_id, &receiver.url("/hooks"));
    let secret = enable_signing(&server, &c.key_id);

    let token_code = code_of(
        &buy(
            &server,
            &c,
            "/v1/electricity/purchase",
            electricity(&reference(), "45012345678", 2000.0),
        )
        .await,
    );
    let epin_code = code_of(&buy(
        &server,
        &c,
        "/v1/epin/purchase",
        json!({ "provider_id": "airtel", "denomination": 200, "quantity": 2, "reference": reference() }),
    )
    .await);
    let exam_code = code_of(&buy(
        &server,
        &c,
        "/v1/education/purchase",
        json!({ "provider_id": "waec", "quantity": 1, "phone": "07012345678", "reference": reference() }),
    )
    .await);

    // Shown in clear where they are shown: the status API, the webhook, the CLI.
    let token = server.wait_final(&c.api_key, &token_code).await["pin"]
        .as_str()
        .unwrap()
        .to_owned();
    let exam_pin = server.wait_final(&c.api_key, &exam_code).await["pin"]
        .as_str()
        .unwrap()
        .to_owned();
    let epin = server.wait_final(&c.api_key, &epin_code).await;
    let batch = server
        .get(
            &c.api_key,
            &format!(
                "/v1/epin/batch?batch_id={}",
                epin["batch_id"].as_str().unwrap()
            ),
        )
        .await
        .assert_ok()
        .clone();
    let mut delivered = vec![token.clone(), exam_pin];
    for pin in batch["pins"].as_array().unwrap() {
        delivered.push(pin["pin"].as_str().unwrap().to_owned());
        delivered.push(pin["serial"].as_str().unwrap().to_owned());
    }
    assert_eq!(delivered.len(), 6, "{batch}");
    let hook = &receiver.wait_for(&token_code, 1).await[0];
    assert_eq!(hook.json()["pin"], token.as_str());
    assert_signed(hook, &secret);
    let shown = server.cli(&["transaction", "show", &token_code]);
    assert!(shown.to_string().contains(&token), "{shown}");
    receiver.wait_for(&exam_code, 1).await;
    receiver.wait_for(&epin_code, 1).await;

    // At rest: nowhere. Stop the server first so every page is written.
    server.terminate();
    let database = server.database_contents().await;
    let logs = server.logs();
    assert!(
        contains(&logs, &token_code),
        "the logs were captured at debug level"
    );
    for value in delivered.iter().chain([&secret]) {
        assert!(!contains(&database, value), "{value} stored in clear");
        assert!(!contains(&logs, value), "{value} logged");
    }
}
