//! Resends, opted-in retries, and events pending across a crash.

use super::*;

/// `billpay webhook resend CODE` sends the same body once more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resend_delivers_the_same_body_once_more() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("10000");
    set_url(&server, &c.key_id, &receiver.url("/ok"));
    let secret = enable_signing(&server, &c.key_id);
    let code = code_of(
        &buy(
            &server,
            &c,
            "/v1/electricity/purchase",
            electricity(&reference(), "12345678901", 1500.0),
        )
        .await,
    );
    receiver.wait_for(&code, 1).await;
    let entry = wait_settled(&server, &c.account_id, &code).await;
    assert_eq!(entry["event"]["status"], "delivered", "{entry}");

    let out = server.cli(&["webhook", "resend", &code]);
    assert_eq!(out["queued"], true, "{out}");
    assert_eq!(out["reference_code"], code.as_str(), "{out}");
    assert_eq!(out["event_id"], entry["event"]["id"], "{out}");

    let hooks = exactly(&receiver, &code, 2).await;
    assert_eq!(
        hooks[0].body, hooks[1].body,
        "a resend carries the identical body"
    );
    assert_signed(&hooks[0], &secret);
    assert_signed(&hooks[1], &secret);
    let entry = wait_settled(&server, &c.account_id, &code).await;
    assert_eq!(entry["event"]["status"], "delivered", "{entry}");
    assert_eq!(attempts(&entry).len(), 2, "{entry}");

    // By event id too.
    let event_id = entry["event"]["id"].as_str().unwrap().to_owned();
    server.cli(&["webhook", "resend", &event_id]);
    exactly(&receiver, &code, 3).await;

    // An unknown code is a clear error.
    let (ok, out) = server.cli_result(&["webhook", "resend", "NOPE-123456"]);
    assert!(!ok, "{out}");
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("NOPE-123456")),
        "{out}"
    );
}

/// With retries opted in, a failed attempt leaves the event pending with a
/// retry scheduled instead of failing it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opted_in_retries_keep_a_failed_event_pending() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("10000");
    set_url(&server, &c.key_id, &receiver.url("/fail"));
    let out = server.cli(&["key", "webhook-retries", &c.key_id, "--enable"]);
    assert_eq!(out["webhook_retries"], true, "{out}");

    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031233001")).await);
    let entry = wait_event(&server, &c.account_id, &code, "attempted", |e| {
        e["event"]["attempts"].as_u64() >= Some(1)
    })
    .await;
    assert_eq!(
        entry["event"]["status"], "pending",
        "retry scheduled: {entry}"
    );
    assert_eq!(entry["event"]["attempts"], 1, "{entry}");
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 1, "{entry}");
    assert_eq!(tries[0]["http_status"], 500, "{entry}");
    assert_eq!(receiver.for_code(&code).len(), 1);
    // Not failed (the first retry is due 5 s after the first attempt).
    assert!(listed_event(&server, &c.account_id, &code, true).is_none());
}

/// Durability: an event that is pending in the outbox when the server is
/// SIGKILLed is delivered after the restart, exactly once; and one queued
/// while the server is down is delivered on start, exactly once.
///
/// Deterministic by construction: the key opts into retries and its URL
/// points at a closed port, so the first attempt fails at once and leaves
/// the event pending with its retry due 5 s later and no lease held. The
/// server is killed in that window, and the URL is repointed at the receiver
/// while it is down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_event_survives_a_crash_and_is_delivered_once() {
    let mut server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("10000");
    server.cli(&["key", "webhook-retries", &c.key_id, "--enable"]);
    set_url(&server, &c.key_id, &closed_port_url());
    let secret = enable_signing(&server, &c.key_id);

    let code = code_of(
        &buy(
            &server,
            &c,
            "/v1/electricity/purchase",
            electricity(&reference(), "12345678901", 1500.0),
        )
        .await,
    );
    let final_status = server.wait_final(&c.api_key, &code).await;
    assert_eq!(final_status["status"], "successful");
    let entry = wait_event(&server, &c.account_id, &code, "attempted", |e| {
        e["event"]["attempts"].as_u64() >= Some(1)
    })
    .await;
    assert_eq!(entry["event"]["status"], "pending", "{entry}");
    server.kill();
    let entry = listed_event(&server, &c.account_id, &code, false).unwrap();
    assert_eq!(
        entry["event"]["attempts"], 1,
        "killed too late (the retry already ran): {entry}"
    );

    set_url(&server, &c.key_id, &receiver.url("/ok"));
    assert!(receiver.for_code(&code).is_empty());
    server.start();
    let hooks = receiver.wait_for(&code, 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        receiver.for_code(&code).len(),
        1,
        "exactly once after the restart"
    );
    assert_signed(&hooks[0], &secret);
    assert_eq!(hooks[0].json()["status"], "successful");
    assert_eq!(hooks[0].json()["pin"], final_status["pin"]);
    let entry = wait_settled(&server, &c.account_id, &code).await;
    assert_eq!(entry["event"]["status"], "delivered", "{entry}");
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 2, "{entry}");
    assert!(
        tries[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("refused")),
        "{entry}"
    );
    assert_eq!(tries[1]["http_status"], 200, "{entry}");

    // Queued while the server is down (a committed, never-claimed event):
    // delivered on start, once.
    server.kill();
    server.cli(&["webhook", "resend", &code]);
    server.start();
    let hooks = receiver.wait_for(&code, 2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.for_code(&code).len(), 2, "exactly once more");
    assert_eq!(hooks[0].body, hooks[1].body);
}
