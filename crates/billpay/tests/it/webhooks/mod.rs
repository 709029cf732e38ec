//! Webhooks end to end: a real `billpay serve`, the real CLI (`--json`) and a
//! real HTTP receiver on loopback.
//!
//! Every test runs on a multi-threaded runtime: the receiver lives on the
//! test's runtime, and the CLI calls block a thread while they run, so a
//! single-threaded runtime would stall the receiver (and its timestamps).

mod deliveries;
mod durability;
mod payload;
mod sealing;
mod signing;
mod urls;

use crate::support::receiver::{Received, Receiver};
use crate::support::*;
use billpay_webhook_verify::{VerifyError, verify_now};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

pub const TIMESTAMP: &str = "x-service-timestamp";
pub const SIGNATURE: &str = "x-service-signature";

/// How long nothing more may arrive for "exactly N" checks. The delivery
/// loop polls every 200 ms, so this covers several of its cycles.
pub const SETTLE: Duration = Duration::from_millis(1_000);

pub fn set_url(server: &TestServer, key_id: &str, url: &str) -> Value {
    server.cli(&["key", "webhook", key_id, "--url", url])
}

/// Turns signing on; returns the secret shown (once).
pub fn enable_signing(server: &TestServer, key_id: &str) -> String {
    let out = server.cli(&["key", "webhook-security", key_id, "--enable"]);
    assert_eq!(out["key_id"], key_id, "{out}");
    let secret = out["webhook_secret"]
        .as_str()
        .unwrap_or_else(|| panic!("no webhook_secret: {out}"))
        .to_owned();
    assert!(secret.len() >= 32, "weak secret {secret:?}");
    secret
}

pub fn disable_signing(server: &TestServer, key_id: &str) {
    let out = server.cli(&["key", "webhook-security", key_id, "--disable"]);
    assert_eq!(out["webhook_signing"], false, "{out}");
    assert!(out.get("webhook_secret").is_none(), "{out}");
}

/// `billpay webhook list --account ID --json`: the entry of `code`
/// (`{"event": {...}, "attempts": [...]}`), if any.
pub fn listed_event(
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
pub async fn wait_event(
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
pub async fn wait_settled(server: &TestServer, account_id: &str, code: &str) -> Value {
    wait_event(server, account_id, code, "final", |e| {
        e["event"]["status"] != "pending"
    })
    .await
}

pub fn attempts(entry: &Value) -> &Vec<Value> {
    entry["attempts"]
        .as_array()
        .unwrap_or_else(|| panic!("no attempts array: {entry}"))
}

/// The single attempt of `entry`, checked to have had no HTTP answer and an
/// error that mentions `error`.
pub fn only_unanswered_attempt<'a>(entry: &'a Value, error: &str) -> &'a Value {
    let tries = attempts(entry);
    assert_eq!(tries.len(), 1, "{entry}");
    assert_eq!(tries[0]["http_status"], Value::Null, "{entry}");
    assert!(
        tries[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains(error)),
        "{entry}"
    );
    &tries[0]
}

/// A loopback URL on which nothing listens: connecting is refused.
pub fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/hook")
}

/// Places a live purchase; returns the accepted `data`.
pub async fn buy(server: &TestServer, c: &Customer, path: &str, body: Value) -> Value {
    let reply = server.post(&c.api_key, path, body).await;
    let data = reply.assert_ok().clone();
    assert!(data["reference_code"].is_string(), "{data}");
    data
}

pub fn code_of(accepted: &Value) -> String {
    accepted["reference_code"].as_str().unwrap().to_owned()
}

pub fn airtime(phone: &str) -> Value {
    json!({ "provider_id": "mtn", "phone": phone, "amount": 500, "reference": reference() })
}

/// Exactly `count` webhooks for `code`, now and after a settle period.
pub async fn exactly(receiver: &Receiver, code: &str, count: usize) -> Vec<Received> {
    receiver.wait_for(code, count).await;
    tokio::time::sleep(SETTLE).await;
    let got = receiver.for_code(code);
    assert_eq!(got.len(), count, "webhooks for {code}: {got:#?}");
    got
}

pub fn assert_json_content_type(hook: &Received) {
    let content_type = hook.header("content-type").unwrap_or_default();
    assert!(
        content_type == "application/json" || content_type.starts_with("application/json;"),
        "Content-Type {content_type:?}"
    );
}

pub fn assert_unsigned(hook: &Received) {
    assert_eq!(hook.header(TIMESTAMP), None, "signing is off");
    assert_eq!(hook.header(SIGNATURE), None, "signing is off");
}

/// The webhook carries a valid signature for `secret` (and the headers have
/// the spec's shapes).
pub fn verify_with(hook: &Received, secret: &str) -> Result<(), VerifyError> {
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

pub fn assert_signed(hook: &Received, secret: &str) {
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
