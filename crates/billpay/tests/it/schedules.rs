//! Schedules (issue 50), through the real binary on the test backend: a
//! schedule starting now runs once, lists its next run a day later and
//! stops when deleted; a run the balance cannot pay is skipped and the
//! customer told; a bad body changes nothing. On PostgreSQL, two nodes on
//! one database run each due schedule once.

use crate::support::*;
use billpay_store::clock::{now_ms, parse_rfc3339_ms, rfc3339};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A daily airtime schedule of ₦500 to an MTN number, starting now.
fn daily_airtime(reference: &str) -> Value {
    json!({
        "product": "airtime", "provider_id": "mtn", "phone": "08031234567", "amount": 500,
        "reference": reference, "every": "day", "starts_at": rfc3339(now_ms()),
    })
}

/// `GET /v1/schedules/{reference}` once `ready` holds of it (or 20 s passed).
async fn wait_schedule(
    server: &TestServer,
    key: &str,
    reference: &str,
    ready: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let shown = server.get(key, &format!("/v1/schedules/{reference}")).await;
        let schedule = shown.assert_ok().clone();
        if ready(&schedule) {
            return schedule;
        }
        assert!(Instant::now() < deadline, "never ready: {schedule}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn ran(schedule: &Value) -> bool {
    schedule["runs"] == 1
}

fn ms(value: &Value) -> i64 {
    parse_rfc3339_ms(value.as_str().expect("a time")).expect("RFC 3339")
}

async fn delete(server: &TestServer, key: &str, path: &str) -> Reply {
    let sent = server.http.delete(server.url(path)).bearer_auth(key).send();
    reply(sent.await.unwrap()).await
}

#[tokio::test]
async fn a_schedule_starting_now_runs_once_lists_its_next_run_a_day_later_and_stops_when_deleted() {
    let server = TestServer::spawn().await;
    let customer = server.customer("2000");
    let key = &customer.api_key;
    let reference = format!("daily-{}", rand_suffix());
    let made = server
        .post(key, "/v1/schedules", daily_airtime(&reference))
        .await;
    let made = made.assert_ok().clone();
    assert_eq!(made["status"], "active");
    assert!(
        made["item"].as_str().unwrap().ends_with("Airtime"),
        "{made}"
    );
    assert_eq!(made["amount"], 500.0);

    let schedule = wait_schedule(&server, key, &reference, ran).await;
    let run = &schedule["history"][0];
    assert_eq!(run["outcome"], "placed", "{schedule}");
    assert_eq!(run["reference"], format!("{reference}-1"));
    let code = run["reference_code"].as_str().unwrap();
    let status = server.wait_final(key, code).await;
    assert_eq!(status["reference"], format!("{reference}-1"));
    assert_eq!(status["status"], "successful");
    let day = 24 * 3600 * 1000;
    assert_eq!(ms(&schedule["next_run_at"]), ms(&made["starts_at"]) + day);
    let listed = server.get(key, "/v1/schedules").await;
    let listed = listed.assert_ok()["schedules"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["next_run_at"], schedule["next_run_at"]);

    // a few more passes: still one purchase, one debit
    tokio::time::sleep(Duration::from_secs(3)).await;
    let transactions = server.cli(&["transaction", "list", "--account", &customer.account_id]);
    assert_eq!(transactions["transactions"].as_array().unwrap().len(), 1);
    assert_eq!(server.balance(key).await, 1500.0);

    let stopped = delete(&server, key, &format!("/v1/schedules/{reference}")).await;
    let stopped = stopped.assert_ok();
    assert_eq!(stopped["status"], "stopped");
    assert_eq!(stopped["next_run_at"], Value::Null);
    let again = server
        .post(key, "/v1/schedules", daily_airtime(&reference))
        .await;
    again.assert_error(422, "duplicate_reference");
    let paused = server
        .post(key, &format!("/v1/schedules/{reference}/resume"), json!({}))
        .await;
    paused.assert_error(422, "validation_error");
    let missing = delete(&server, key, "/v1/schedules/no-such-schedule").await;
    missing.assert_error(404, "not_found");
}

#[tokio::test]
async fn a_run_the_balance_cannot_pay_is_skipped_and_the_customer_told() {
    let server = TestServer::spawn().await;
    let customer = server.customer("100");
    let key = &customer.api_key;
    let reference = format!("short-{}", rand_suffix());
    let made = server
        .post(key, "/v1/schedules", daily_airtime(&reference))
        .await;
    let made = made.assert_ok().clone();
    let schedule = wait_schedule(&server, key, &reference, ran).await;
    let run = &schedule["history"][0];
    assert_eq!(run["outcome"], "skipped", "{schedule}");
    assert_eq!(run["reference_code"], Value::Null);
    let reason = run["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Insufficient wallet balance"),
        "{reason}"
    );
    assert_eq!(
        ms(&schedule["next_run_at"]),
        ms(&made["starts_at"]) + 24 * 3600 * 1000
    );
    assert_eq!(server.balance(key).await, 100.0, "nothing charged");
    let told: Vec<_> = server
        .notices_of("schedule_skipped")
        .await
        .into_iter()
        .filter(|n| n.account_id.map(|a| a.to_string()) == Some(customer.account_id.clone()))
        .collect();
    assert_eq!(told.len(), 1, "told once");
    assert_eq!(told[0].data["schedule"], reference);
    assert_eq!(told[0].data["retry"], false);
}

#[tokio::test]
async fn a_bad_schedule_is_refused_naming_its_field_and_changes_nothing() {
    let server = TestServer::spawn().await;
    let customer = server.customer("2000");
    let key = &customer.api_key;
    let reference = format!("bad-{}", rand_suffix());
    let with = |field: &str, value: Value| {
        let mut body = daily_airtime(&reference);
        body[field] = value;
        body
    };
    let cases = [
        ("every", with("every", json!("fortnight"))),
        ("starts_at", with("starts_at", json!("tomorrow morning"))),
        (
            "starts_at",
            with("starts_at", json!("2020-01-01T00:00:00Z")),
        ),
        ("product", with("product", json!("lottery"))),
        ("phone", with("phone", json!("12345"))),
        ("amount", with("amount", json!(500.001))),
        ("reference", with("reference", json!("x".repeat(95)))),
    ];
    for (field, body) in cases {
        let refused = server.post(key, "/v1/schedules", body.clone()).await;
        refused.assert_refusal("validation_error", field, &body.to_string());
    }
    let mut no_phone = daily_airtime(&reference);
    no_phone.as_object_mut().unwrap().remove("phone");
    let refused = server.post(key, "/v1/schedules", no_phone).await;
    refused.assert_refusal("validation_error", "phone", "no phone");
    let too_much = server
        .post(key, "/v1/schedules", with("amount", json!(60000)))
        .await;
    too_much.assert_error(422, "maximum_amount");
    let listed = server.get(key, "/v1/schedules").await;
    assert_eq!(listed.assert_ok()["schedules"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_run_each_schedule_due_now_once() {
    let Some(a) = TestServer::spawn_postgres(
        "two_nodes_run_each_schedule_due_now_once",
        Options::default(),
        &[],
    )
    .await
    else {
        return;
    };
    let b = a.another_node(Options::default(), &[]).await;
    let customer = a.customer("50000");
    let key = &customer.api_key;
    let references: Vec<String> = (0..12)
        .map(|i| format!("both-{i}-{}", rand_suffix()))
        .collect();
    for (i, reference) in references.iter().enumerate() {
        // made on either node; both see each one due at once
        let node = if i % 2 == 0 { &a } else { &b };
        node.post(key, "/v1/schedules", daily_airtime(reference))
            .await
            .assert_ok();
    }
    for reference in &references {
        let schedule = wait_schedule(&b, key, reference, ran).await;
        assert_eq!(schedule["history"][0]["outcome"], "placed", "{schedule}");
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let listed = a.cli(&[
        "transaction",
        "list",
        "--account",
        &customer.account_id,
        "--limit",
        "100",
    ]);
    let listed = listed["transactions"].as_array().unwrap();
    assert_eq!(listed.len(), references.len(), "one purchase per schedule");
    for reference in &references {
        let run = format!("{reference}-1");
        assert_eq!(
            listed.iter().filter(|t| t["reference"] == run).count(),
            1,
            "{run}"
        );
    }
    assert_eq!(
        a.balance(key).await,
        50000.0 - 500.0 * references.len() as f64
    );
}
