//! Price tiers, the supplier's cost and the sales report (issue 20),
//! through the real binary: rules set with the CLI, purchases over HTTP,
//! `billpay audit` when each test ends (the kit's `Drop`).

mod audit;
mod changes;
mod cost;
mod floor;
mod precedence;
mod report;
mod upgrades;

use crate::support::{Customer, TestServer, reference};
use billpay_api_testkit::kind::kobo;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Creates tier `name` and gives it `rules` (each the flags of one `tier rule`).
pub fn tier(server: &TestServer, name: &str, rules: &[&[&str]]) {
    server.cli(&["tier", "create", name]);
    for flags in rules {
        let mut args = vec!["tier", "rule", name];
        args.extend_from_slice(flags);
        server.cli(&args);
    }
}

/// Puts the customer on `tier` and waits until the server prices with it
/// (the price book is re-checked within a second).
pub async fn set_tier(server: &TestServer, who: &Customer, tier: &str) {
    server.cli(&["account", "set-tier", &who.account_id, tier]);
    until_tier(server, who, tier).await;
}

pub async fn until_tier(server: &TestServer, who: &Customer, tier: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let pricing = server.get(&who.api_key, "/v1/pricing").await;
        if pricing.assert_ok()["tier"] == tier {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the server never priced with {tier}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What `/v1/test/<product>/purchase` would deduct, in kobo.
pub async fn would_deduct(server: &TestServer, who: &Customer, product: &str, body: Value) -> i64 {
    let mut body = body;
    body["reference"] = json!(reference());
    let r = server
        .post(&who.api_key, &format!("/v1/test/{product}/purchase"), body)
        .await;
    kobo(&r.assert_ok()["would_deduct"])
}

/// Buys live; returns the accepted response.
pub async fn buy(server: &TestServer, who: &Customer, product: &str, body: Value) -> Value {
    let mut body = body;
    body["reference"] = json!(reference());
    let r = server
        .post(&who.api_key, &format!("/v1/{product}/purchase"), body)
        .await;
    r.assert_ok().clone()
}

pub fn airtime(naira: f64) -> Value {
    json!({ "provider_id": "mtn", "phone": "08031234567", "amount": naira })
}

pub fn data(provider: &str, plan: &str) -> Value {
    // A number of the provider's own network (crates/domain/src/network.rs).
    let phone = match provider {
        "glo" => "08051234567",
        "airtel" => "08021234567",
        "9mobile" => "08091234567",
        _ => "08031234567",
    };
    json!({ "provider_id": provider, "plan_id": plan, "phone": phone })
}

pub fn electricity(naira: f64) -> Value {
    json!({ "provider_id": "ikeja-electric", "amount": naira, "meter_number": "12345678901", "meter_type": 1 })
}

/// (charged, face value) of an accepted purchase or a status record, kobo.
pub fn prices(d: &Value) -> (i64, i64) {
    (kobo(&d["amount"]), kobo(&d["face_value"]))
}
