//! The OpenAPI document the server serves: the committed copy, every endpoint
//! in it. (The kit's check of every reply against it is tested in
//! `crates/api-testkit`.)

use crate::support::*;
use serde_json::Value;

#[tokio::test]
async fn openapi_lists_every_endpoint() {
    let server = TestServer::spawn().await;
    let doc = server.get_public_json("/openapi.json").await;
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

/// `GET /` points the way: a browser gets a page linking the API's
/// documentation and the dashboard (each of which answers), a client the
/// same links as JSON; neither is a 404.
#[tokio::test]
async fn the_root_points_to_the_docs_and_the_dashboard() {
    let server = TestServer::spawn().await;
    let page = server
        .http
        .get(server.url("/"))
        .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let content_type = page.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let html = page.text().await.unwrap();
    for link in ["href=\"/docs\"", "href=\"/dashboard\"", "name=\"viewport\""] {
        assert!(html.contains(link), "{link} missing: {html}");
    }

    let json = server.get_public_json("/").await;
    assert_eq!(json["code"], 200);
    assert_eq!(json["status"], "success");
    assert_eq!(json["data"]["docs"], "/docs");
    assert_eq!(json["data"]["dashboard"], "/dashboard");
    for path in ["/docs/", "/dashboard/login", "/openapi.json"] {
        let r = server.http.get(server.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 200, "{path}");
    }
}
