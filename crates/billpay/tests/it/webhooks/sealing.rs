//! Delivered tokens, pins and serials, and webhook secrets, sealed at rest.

use super::*;

/// Whether `needle` occurs anywhere in `haystack`.
fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// Tokens, pins and serials are money: sealed at rest like webhook secrets,
/// in clear only where they are shown (status API, e-pin batch API, webhook,
/// CLI), never in the database file (and its WAL), its rows or the logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delivered_pins_and_webhook_secrets_are_sealed_at_rest() {
    let receiver = Receiver::start().await;
    let mut server =
        TestServer::spawn_with_env(Options::default(), &[("BILLPAY_LOG", "debug")]).await;
    let c = server.customer("50000");
    set_url(&server, &c.key_id, &receiver.url("/hooks"));
    let secret = enable_signing(&server, &c.key_id);

    let token_code = code_of(
        &buy(
            &server,
            &c,
            "/v1/electricity/purchase",
            electricity(&reference(), "45012345678", 2000.0),
        )
        .await,
    );
    let epin_code = code_of(&buy(
        &server,
        &c,
        "/v1/epin/purchase",
        json!({ "provider_id": "airtel", "denomination": 200, "quantity": 2, "reference": reference() }),
    )
    .await);
    let exam_code = code_of(&buy(
        &server,
        &c,
        "/v1/education/purchase",
        json!({ "provider_id": "waec", "quantity": 1, "phone": "07012345678", "reference": reference() }),
    )
    .await);

    // Shown in clear where they are shown: the status API, the webhook, the CLI.
    let token = server.wait_final(&c.api_key, &token_code).await["pin"]
        .as_str()
        .unwrap()
        .to_owned();
    let exam_pin = server.wait_final(&c.api_key, &exam_code).await["pin"]
        .as_str()
        .unwrap()
        .to_owned();
    let epin = server.wait_final(&c.api_key, &epin_code).await;
    let batch = server
        .get(
            &c.api_key,
            &format!(
                "/v1/epin/batch?batch_id={}",
                epin["batch_id"].as_str().unwrap()
            ),
        )
        .await
        .assert_ok()
        .clone();
    let mut delivered = vec![token.clone(), exam_pin];
    for pin in batch["pins"].as_array().unwrap() {
        delivered.push(pin["pin"].as_str().unwrap().to_owned());
        delivered.push(pin["serial"].as_str().unwrap().to_owned());
    }
    assert_eq!(delivered.len(), 6, "{batch}");
    let hook = &receiver.wait_for(&token_code, 1).await[0];
    assert_eq!(hook.json()["pin"], token.as_str());
    assert_signed(hook, &secret);
    let shown = server.cli(&["transaction", "show", &token_code]);
    assert!(shown.to_string().contains(&token), "{shown}");
    receiver.wait_for(&exam_code, 1).await;
    receiver.wait_for(&epin_code, 1).await;

    // At rest: nowhere. Stop the server first so every page is written.
    server.terminate();
    let database = server.database_contents().await;
    let logs = server.logs();
    assert!(
        contains(&logs, &token_code),
        "the logs were captured at debug level"
    );
    for value in delivered.iter().chain([&secret]) {
        assert!(!contains(&database, value), "{value} stored in clear");
        assert!(!contains(&logs, value), "{value} logged");
    }
}
