//! Bearer API keys: missing or wrong keys, and the operator suspending,
//! reactivating and revoking keys and accounts while the server runs.

use super::within;
use crate::support::*;
use serde_json::json;
use std::time::Duration;

/// A server and a customer with ₦2,500.75 whose key was just used (so it
/// is in the key cache).
async fn with_a_cached_key() -> (TestServer, Customer) {
    let server = TestServer::spawn().await;
    let c = server.customer("2500.75");
    server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();
    (server, c)
}

#[tokio::test]
async fn a_valid_key_gets_the_balance_and_a_missing_or_unknown_one_is_401() {
    let server = TestServer::spawn().await;
    let c = server.customer("2500.75");
    let data = server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_ok()
        .clone();
    assert_eq!(data, json!({ "balance": 2500.75, "currency": "NGN" }));

    // no header, wrong scheme, empty bearer
    let r = reply(
        server
            .http
            .get(server.url("/v1/wallet/balance"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.assert_error(401, "missing_api_key");
    let r = reply(
        server
            .http
            .get(server.url("/v1/wallet/balance"))
            .header("Authorization", format!("Basic {}", c.api_key))
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.assert_error(401, "missing_api_key");
    server
        .get("bp_live_0000", "/v1/wallet/balance")
        .await
        .assert_error(401, "invalid_api_key");
}

/// Key suspension, from the CLI while the server runs, applies within 1 s
/// (keys are cached for at most KEY_CACHE_TTL, 0.5 s).
#[tokio::test]
async fn a_suspended_key_is_403_within_a_second_until_reactivated() {
    let (server, c) = with_a_cached_key().await;
    server.cli(&["key", "suspend", &c.key_id]);
    let took = within(1, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 403
    })
    .await;
    assert!(took < Duration::from_secs(1));
    server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_error(403, "suspended");
    server.cli(&["key", "reactivate", &c.key_id]);
    within(2, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 200
    })
    .await;
}

#[tokio::test]
async fn a_suspended_account_stops_its_keys_until_reactivated() {
    let (server, c) = with_a_cached_key().await;
    server.cli(&["account", "suspend", &c.account_id]);
    within(2, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 403
    })
    .await;
    server
        .get(&c.api_key, "/v1/providers")
        .await
        .assert_error(403, "suspended");
    server.cli(&["account", "reactivate", &c.account_id]);
    within(2, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 200
    })
    .await;
}

#[tokio::test]
async fn a_revoked_key_is_401_within_a_second_and_cannot_be_reactivated() {
    let (server, c) = with_a_cached_key().await;
    server.cli(&["key", "revoke", &c.key_id]);
    within(1, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 401
    })
    .await;
    server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_error(401, "invalid_api_key");
    let (ok, err) = server.cli_result(&["key", "reactivate", &c.key_id]);
    assert!(
        !ok && err["error"].as_str().unwrap().contains("revoked"),
        "{err}"
    );
}
