//! Per-key rate limits, their headers, and per-key overrides.

use crate::support::*;
use std::time::Duration;

/// A server whose keys may send 2 requests a second, 5 at once.
async fn with_low_limits() -> TestServer {
    TestServer::spawn_with(Options {
        rate_per_second: 2,
        rate_burst: 5,
        ..Options::default()
    })
    .await
}

#[tokio::test]
async fn a_key_past_its_burst_is_429_with_headers_and_its_tokens_come_back() {
    let server = with_low_limits().await;
    let c = server.customer("0");
    let other = server.customer("0");
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..8 {
        let r = server.get(&c.api_key, "/v1/wallet/balance").await;
        statuses.push(r.status);
        for h in ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"] {
            assert!(r.headers.contains_key(h), "missing {h}");
        }
        last = Some(r);
    }
    assert_eq!(&statuses[..5], &[200; 5]);
    assert!(statuses[5..].contains(&429), "{statuses:?}");
    let limited = last.unwrap();
    limited.assert_error(429, "rate_limited");
    let retry_after: u64 = limited.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry_after));
    let message = limited.body["message"].as_str().unwrap();
    let said = if retry_after == 1 {
        "1 second"
    } else {
        "2 seconds"
    };
    assert_eq!(message, format!("Rate limit exceeded; retry after {said}"));
    assert_eq!(limited.headers["ratelimit-limit"], "5");
    assert_eq!(limited.headers["ratelimit-remaining"], "0");
    // another key is not affected
    server
        .get(&other.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();
    // tokens come back with time
    tokio::time::sleep(Duration::from_millis(1100)).await;
    server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();
}

#[tokio::test]
async fn a_per_key_override_applies_without_a_restart() {
    let server = with_low_limits().await;
    let other = server.customer("0");
    server
        .get(&other.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();
    server.cli(&[
        "key",
        "set-rate-limit",
        &other.key_id,
        "--per-second",
        "1",
        "--burst",
        "1",
    ]);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    server
        .get(&other.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();
    server
        .get(&other.api_key, "/v1/wallet/balance")
        .await
        .assert_error(429, "rate_limited");
}
