//! The OpenAPI document the server serves (the committed copy, every endpoint
//! in it), and the kit's check of every reply against the committed copy.

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

/// The kit's OpenAPI check (every reply of these suites passes through it)
/// refuses a body outside the schema and a status the operation lacks.
#[test]
fn the_kit_checks_replies_against_the_openapi_document() {
    use crate::support::openapi::assert_documented;
    use serde_json::json;
    let balance =
        json!({"code": 200, "status": "success", "data": {"balance": 10.5, "currency": "NGN"}});
    assert_documented("/v1/wallet/balance", 200, &balance);
    let refused = |path: &'static str, status: u16, body: Value| {
        std::panic::catch_unwind(|| assert_documented(path, status, &body)).is_err()
    };
    let bare_list = json!([{"slug": "mtn"}]);
    assert!(
        refused("/v1/providers", 200, bare_list),
        "a list outside the envelope"
    );
    let text_balance =
        json!({"code": 200, "status": "success", "data": {"balance": "10.5", "currency": "NGN"}});
    assert!(
        refused("/v1/wallet/balance", 200, text_balance),
        "a balance as text"
    );
    let error = json!({"code": 404, "status": "error", "message": "m", "error": "not_found"});
    assert!(
        refused("/v1/wallet/balance", 404, error.clone()),
        "an undocumented status"
    );
    assert_documented("/v1/providers/nosuch", 404, &error);
}
