//! The OpenAPI document the server serves: the committed copy, every endpoint
//! in it. (The kit's check of every reply against it is tested in
//! `crates/api-testkit`.)

use crate::support::*;
use serde_json::Value;

#[tokio::test]
async fn openapi_lists_every_endpoint() {
    let server = TestServer::spawn().await;
    let doc: Value = server
        .http
        .get(server.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let committed = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(committed).unwrap()).unwrap();
    assert!(doc == committed, "/openapi.json is not docs/openapi.json");
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/v1/wallet/balance",
        "/v1/providers",
        "/v1/providers/{service}",
        "/v1/data-plans/categories",
        "/v1/data-plans",
        "/v1/cable-plans",
        "/v1/recharge-pins/denominations",
        "/v1/transaction/status",
        "/v1/epin/batch",
    ] {
        assert!(paths.contains_key(path), "{path} missing");
    }
    for product in [
        "airtime",
        "data",
        "epin",
        "cable",
        "electricity",
        "education",
        "bet",
    ] {
        assert!(paths.contains_key(&format!("/v1/{product}/purchase")));
        assert!(paths.contains_key(&format!("/v1/test/{product}/purchase")));
    }
    for verify in ["cable", "electricity", "bet"] {
        assert!(paths.contains_key(&format!("/v1/{verify}/verify")));
        assert!(paths.contains_key(&format!("/v1/test/{verify}/verify")));
    }
}
