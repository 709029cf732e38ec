//! Failed, hanging and skipped deliveries: each logged, none holding up
//! the healthy ones.

use super::*;

/// How long after `code` became final its webhook reached `receiver`.
async fn webhook_lag(
    server: &TestServer,
    receiver: &Receiver,
    customer: &Customer,
    code: &str,
) -> Duration {
    server.wait_final(&customer.api_key, code).await;
    let finished = Instant::now();
    let hook = receiver.wait_for(code, 1).await.remove(0);
    hook.at.saturating_duration_since(finished)
}

/// 500, a receiver slower than 10 s and a refused connection are each
/// logged as failed (no retry by default), and a healthy receiver is served
/// promptly while the slow one hangs. SIGTERM during the slow delivery waits
/// for it to be recorded, then exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_deliveries_are_logged_and_do_not_hold_up_healthy_ones() {
    let mut server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let slow = server.customer("10000");
    let failing = server.customer("10000");
    let closed = server.customer("10000");
    let healthy = server.customer("10000");
    set_url(&server, &slow.key_id, &receiver.url("/slow"));
    set_url(&server, &failing.key_id, &receiver.url("/fail"));
    let closed_url = closed_port_url();
    set_url(&server, &closed.key_id, &closed_url);
    set_url(&server, &healthy.key_id, &receiver.url("/ok"));

    // The slow receiver gets its webhook and hangs on to it.
    let slow_code = code_of(
        &buy(
            &server,
            &slow,
            "/v1/airtime/purchase",
            airtime("08031231001"),
        )
        .await,
    );
    let slow_started = receiver.wait_for(&slow_code, 1).await[0].at;

    let failing_code = code_of(
        &buy(
            &server,
            &failing,
            "/v1/airtime/purchase",
            airtime("08031231002"),
        )
        .await,
    );
    let closed_code = code_of(
        &buy(
            &server,
            &closed,
            "/v1/airtime/purchase",
            airtime("08031231003"),
        )
        .await,
    );

    // Meanwhile a healthy receiver is served at once.
    let healthy_accepted = buy(
        &server,
        &healthy,
        "/v1/electricity/purchase",
        electricity(&reference(), "12345678901", 1500.0),
    )
    .await;
    let healthy_code = code_of(&healthy_accepted);
    let lag = webhook_lag(&server, &receiver, &healthy, &healthy_code).await;
    assert!(
        lag < Duration::from_secs(2),
        "healthy webhook {lag:?} after the purchase finished"
    );
    assert!(
        slow_started.elapsed() < Duration::from_secs(10),
        "the check must run while the slow receiver still hangs ({:?})",
        slow_started.elapsed()
    );
    let slow_entry = listed_event(&server, &slow.account_id, &slow_code, false).unwrap();
    assert_eq!(
        slow_entry["event"]["status"], "pending",
        "still in flight: {slow_entry}"
    );
    // A resend while that delivery is under way is refused: it would send twice at once.
    let (ok, refused) = server.cli_result(&["webhook", "resend", &slow_code]);
    assert!(!ok, "resend during a delivery was accepted: {refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("in progress"),
        "{refused}"
    );

    let entry = wait_settled(&server, &healthy.account_id, &healthy_code).await;
    assert_eq!(entry["event"]["status"], "delivered", "{entry}");
    assert_eq!(attempts(&entry)[0]["http_status"], 200, "{entry}");

    let entry = wait_settled(&server, &failing.account_id, &failing_code).await;
    assert_eq!(entry["event"]["status"], "failed", "{entry}");
    assert_eq!(entry["event"]["attempts"], 1, "{entry}");
    let tries = attempts(&entry);
    assert_eq!(tries.len(), 1, "{entry}");
    assert_eq!(tries[0]["http_status"], 500, "{entry}");
    assert!(
        tries[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("500")),
        "{entry}"
    );
    assert!(tries[0]["latency_ms"].is_u64(), "{entry}");
    assert_eq!(tries[0]["url"], receiver.url("/fail"), "{entry}");

    let entry = wait_settled(&server, &closed.account_id, &closed_code).await;
    assert_eq!(entry["event"]["status"], "failed", "{entry}");
    let attempt = only_unanswered_attempt(&entry, "refused");
    assert!(attempt["latency_ms"].is_u64(), "{entry}");
    assert_eq!(attempt["url"], closed_url, "{entry}");

    // SIGTERM while the slow delivery is still in flight: the server lets it
    // run to its 10 s limit, records it, and only then exits.
    assert_eq!(
        listed_event(&server, &slow.account_id, &slow_code, false).unwrap()["event"]["status"],
        "pending",
        "the slow delivery must still be in flight when SIGTERM is sent"
    );
    let exit = tokio::task::block_in_place(|| server.terminate_within(Duration::from_secs(20)));
    assert!(exit.success(), "graceful exit: {exit:?}");
    let entry = listed_event(&server, &slow.account_id, &slow_code, false).unwrap();
    assert_eq!(
        entry["event"]["status"], "failed",
        "recorded before exiting: {entry}"
    );
    let attempt = only_unanswered_attempt(&entry, "timed out");
    let latency = attempt["latency_ms"].as_u64().unwrap();
    assert!(
        (9_500..12_000).contains(&latency),
        "slow attempt took {latency} ms: {entry}"
    );

    // `--failed` lists exactly the failed ones.
    assert!(listed_event(&server, &failing.account_id, &failing_code, true).is_some());
    assert!(listed_event(&server, &closed.account_id, &closed_code, true).is_some());
    assert!(listed_event(&server, &slow.account_id, &slow_code, true).is_some());
    assert!(listed_event(&server, &healthy.account_id, &healthy_code, true).is_none());

    // No redelivery by default (the server ran for seconds after the
    // failures, longer than the first retry delay of a key with retries).
    assert_eq!(receiver.for_code(&failing_code).len(), 1);
    assert_eq!(receiver.for_code(&slow_code).len(), 1);
    assert_eq!(receiver.for_code(&healthy_code).len(), 1);
    assert_eq!(receiver.for_code(&closed_code).len(), 0);
}

/// A key whose receiver hangs holds at most its share of the delivery slots:
/// with 2 slots and 1 per key, a key with four hanging webhooks leaves the
/// other slot to everyone else (before, all slots waited out the 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_receiver_holds_only_its_share_of_delivery_slots() {
    let server = TestServer::spawn_with_env(
        Options::default(),
        &[
            ("BILLPAY_WEBHOOK_CONCURRENCY", "2"),
            ("BILLPAY_WEBHOOK_CONCURRENCY_PER_KEY", "1"),
        ],
    )
    .await;
    let receiver = Receiver::start().await;
    let hanging = server.customer("10000");
    let healthy = server.customer("10000");
    set_url(&server, &hanging.key_id, &receiver.url("/slow"));
    set_url(&server, &healthy.key_id, &receiver.url("/ok"));

    let mut hanging_codes = Vec::new();
    for phone in ["08031232001", "08031232002", "08031232003", "08031232004"] {
        let accepted = buy(&server, &hanging, "/v1/airtime/purchase", airtime(phone)).await;
        hanging_codes.push(code_of(&accepted));
    }
    // The four may be fulfilled in any order: the first to hang is whichever
    // webhook reaches the receiver first, not necessarily the first bought.
    let first_hang = receiver.wait_for_path("/slow").await.at;

    let code = code_of(
        &buy(
            &server,
            &healthy,
            "/v1/airtime/purchase",
            airtime("08031232005"),
        )
        .await,
    );
    let lag = webhook_lag(&server, &receiver, &healthy, &code).await;
    assert!(
        lag < Duration::from_secs(3),
        "the healthy key's webhook waited {lag:?} behind a hanging receiver"
    );
    assert!(
        first_hang.elapsed() < Duration::from_secs(10),
        "the check must run while the hanging receiver still holds its slot"
    );
    let hanging_now = hanging_codes
        .iter()
        .filter(|code| !receiver.for_code(code).is_empty())
        .count();
    assert_eq!(hanging_now, 1, "the hanging key had more than its one slot");
}

/// A key without a webhook URL: the event is recorded as skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_webhook_url_is_recorded_as_skipped() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let code = code_of(&buy(&server, &c, "/v1/airtime/purchase", airtime("08031232001")).await);
    server.wait_final(&c.api_key, &code).await;
    let entry = wait_settled(&server, &c.account_id, &code).await;
    assert_eq!(entry["event"]["status"], "skipped", "{entry}");
    assert_eq!(entry["event"]["event"], "airtime.purchase", "{entry}");
    let attempt = only_unanswered_attempt(&entry, "no webhook URL");
    assert_eq!(attempt["url"], Value::Null, "{entry}");
    // Skipped is not failed.
    assert!(listed_event(&server, &c.account_id, &code, true).is_none());
}
