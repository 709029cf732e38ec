//! The API docs page (Swagger UI) in a real headless Chromium.

use super::browser::Browser;
use crate::support::*;
use fantoccini::Locator;
use serde_json::Value;

/// `/docs`: Swagger UI, served from the binary, renders every operation of
/// `/openapi.json` and loads nothing from anywhere else (it works offline).
#[tokio::test]
async fn the_api_docs_page_renders_every_operation() {
    let server = TestServer::spawn().await;
    let document: Value = reqwest::get(server.url("/openapi.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let operations: usize = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert!(operations > 20, "{operations} operations documented");

    // Never framed, its own scripts only (the page must still render below).
    let page = reqwest::get(server.url("/docs/")).await.unwrap();
    let headers = page.headers();
    assert_eq!(headers["x-frame-options"], "DENY");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(csp.contains("script-src 'self';"), "{csp}");

    let browser = Browser::start().await;
    let b = &browser;
    b.client.goto(&server.url("/docs")).await.unwrap();
    assert_eq!(b.path().await, "/docs/");
    assert!(b.text(".info .title").await.starts_with("billpay"));
    b.css("#operations-wallet-balance").await;
    let rendered = b.client.find_all(Locator::Css(".opblock")).await.unwrap();
    assert_eq!(rendered.len(), operations);
    b.screenshot("api-docs").await;

    let origin = server.url("");
    let loaded = b
        .client
        .execute(
            "return performance.getEntriesByType('resource').map(r => r.name)",
            vec![],
        )
        .await
        .unwrap();
    let loaded: Vec<String> = serde_json::from_value(loaded).unwrap();
    assert!(loaded.iter().any(|url| url.ends_with("/openapi.json")));
    assert!(
        loaded.iter().all(|url| url.starts_with(&origin)),
        "{loaded:?}"
    );
    browser.stop().await;
}
