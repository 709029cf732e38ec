//! Purchases fulfilled by VTpass (`BILLPAY_SUPPLIER=vtpass`), against the
//! test kit's fake VTpass (support/vtpass.rs) written from VTpass's docs.

mod callbacks;
mod fulfilment;
pub mod operations;
mod reversals;

use crate::support::receiver::Receiver;
use crate::support::vtpass::FakeVtpass;
use crate::support::{Customer, Options, TestServer, reference};
use serde_json::{Value, json};
use std::time::Duration;

pub async fn server_with(fake: &FakeVtpass, extra: &[(&str, &str)]) -> TestServer {
    let env = fake.env();
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // Short enough that a slow VTpass counts as a timeout within the test.
    all.push(("BILLPAY_VTPASS_TIMEOUT_MS", "1000"));
    all.extend_from_slice(extra);
    TestServer::spawn_with_env(Options::default(), &all).await
}

/// Places a purchase and returns its reference code.
pub async fn buy(server: &TestServer, who: &Customer, product: &str, mut body: Value) -> String {
    body["reference"] = json!(reference());
    let accepted = server
        .post(&who.api_key, &format!("/v1/{product}/purchase"), body)
        .await;
    accepted.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Waits for `done` (failing the test after 30 s: something hangs).
pub async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn meter(number: &str) -> Value {
    json!({ "provider_id": "ikeja-electric", "amount": 1000, "meter_number": number, "meter_type": 1 })
}
