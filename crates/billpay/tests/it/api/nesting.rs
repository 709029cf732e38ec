//! Deeply nested JSON (hardening finding 1): a body of `[[[[…` used to
//! overflow the stack and abort the whole process. Every endpoint that reads
//! a body refuses nesting past 32 levels with a 400 in the envelope, and the
//! process survives whatever depth arrives.

use crate::support::*;
use serde_json::Value;

/// Every operation the OpenAPI document gives a request body, plus the
/// supplier callback (outside the document, read from strangers too).
fn endpoints_with_a_body() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    let document: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut paths: Vec<String> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, operations)| operations["post"].get("requestBody").is_some())
        .map(|(path, _)| path.clone())
        .collect();
    assert!(paths.len() >= 20, "{paths:?}");
    paths.push("/callbacks/vtpass".into());
    paths
}

fn nested(depth: usize, inside_a_field: bool) -> String {
    let array = "[".repeat(depth) + &"]".repeat(depth);
    if inside_a_field {
        format!(r#"{{"reference":"deep-1","amount":{array}}}"#)
    } else {
        array
    }
}

#[tokio::test]
async fn deeply_nested_bodies_are_refused_and_the_process_survives() {
    let server = TestServer::spawn().await;
    let c = server.customer("1000");
    // A fresh connection per request: a connection the server closed after
    // a 413 mid-upload is never reused.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    // 30 000 levels fit the 64 KiB body limit (the real attack); 100 000
    // do not, and must be refused as cleanly.
    for depth in [33, 2_000, 30_000, 100_000] {
        for inside_a_field in [false, true] {
            for path in endpoints_with_a_body() {
                let sent = http
                    .post(server.url(&path))
                    .bearer_auth(&c.api_key)
                    .header("content-type", "application/json")
                    .body(nested(depth, inside_a_field))
                    .send()
                    .await;
                let response = match sent {
                    Ok(response) => response,
                    // Over the body limit the server may answer 413 and close
                    // before the client has finished sending: the client sees
                    // a broken pipe. The process must still be there.
                    Err(e) if depth == 100_000 => {
                        let health = http.get(server.url("/health")).send().await;
                        assert!(health.is_ok(), "{path}: the server died: {e}");
                        continue;
                    }
                    Err(e) => panic!("{path} at depth {depth}: no answer: {e}"),
                };
                let status = response.status().as_u16();
                let body = reply(response).await.body;
                if path.starts_with("/callbacks/") {
                    // The supplier gets its usual answer, whatever we were
                    // sent within the callbacks' 64 KiB.
                    let expected = if depth == 100_000 { 413 } else { 200 };
                    assert_eq!(status, expected, "{path} at depth {depth}: {body}");
                    continue;
                }
                match (depth, status) {
                    (100_000, 413) => assert_eq!(body["error"], "payload_too_large"),
                    (_, 400) => {
                        assert_eq!(body["error"], "invalid_json", "{path}: {body}");
                        let message = body["message"].as_str().unwrap();
                        assert!(
                            message.ends_with("JSON nested deeper than 32 levels"),
                            "{path}: {body}"
                        );
                    }
                    _ => panic!("{path} at depth {depth}: {status} {body}"),
                }
            }
        }
    }
    let health = http.get(server.url("/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(server.balance(&c.api_key).await, 1000.0);
}
