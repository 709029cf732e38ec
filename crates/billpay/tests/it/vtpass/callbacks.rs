//! `POST /callbacks/{name}` open to anyone (hardening finding 7): callbacks
//! cannot make billpay hammer VTpass, each is answered at once, and those
//! about nothing of ours are harmless.

use super::*;
use std::time::Instant;

/// `body` to `/callbacks/vtpass`, not yet sent.
fn callback(server: &TestServer, body: String) -> reqwest::RequestBuilder {
    server
        .http
        .post(server.url("/callbacks/vtpass"))
        .header("content-type", "application/json")
        .body(body)
}

/// Sends a request; returns the status, the answer and how long it took.
async fn send(request: reqwest::RequestBuilder) -> (u16, Value, Duration) {
    let started = Instant::now();
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap(), started.elapsed())
}

/// Posts every body at once; returns what `send` answers for each.
async fn post_all(server: &TestServer, bodies: Vec<String>) -> Vec<(u16, Value, Duration)> {
    let mut set = tokio::task::JoinSet::new();
    for body in bodies {
        set.spawn(send(callback(server, body)));
    }
    set.join_all().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_callbacks_for_one_purchase_cause_one_requery_each_answered_at_once() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("5000");
    let number = "08033333333";
    let body = json!({ "provider_id": "mtn", "amount": 1000, "phone": number });
    let code = buy(&server, &who, "airtime", body).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    let requeries = fake.requery_calls();
    // VTpass takes 2 s to answer a requery (billpay gives up after 1 s in
    // these tests): a callback held open for its requery would show.
    fake.set_requery_delay(Duration::from_secs(2));
    let body = fake.callback_body(&fake.request_ids_for(number)[0]);

    let answers = post_all(&server, vec![body.to_string(); 100]).await;
    until("the one requery", || fake.requery_calls() > requeries).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        fake.requery_calls() - requeries,
        1,
        "100 callbacks, one requery"
    );
    for (status, answer, took) in &answers {
        assert_eq!((*status, answer), (200, &json!({"response": "success"})));
        assert!(*took < Duration::from_secs(1), "answered after {took:?}");
    }
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(server.balance(&who.api_key).await, 4000.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_about_nothing_of_ours_are_harmless() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let requeries = fake.requery_calls();
    // Well-formed request ids of no purchase, and bodies that are no callback.
    let mut bodies: Vec<String> = (0..100)
        .map(|i| {
            let request_id = format!("202601010000{:015}", i);
            json!({"type": "transaction-update", "data": {"requestId": request_id}}).to_string()
        })
        .collect();
    bodies.extend(["", "not json", "[]", "{\"data\": {\"requestId\": 7}}"].map(String::from));
    for (status, answer, _) in post_all(&server, bodies).await {
        assert_eq!((status, answer), (200, json!({"response": "success"})));
    }
    // A body over the cap is refused in the envelope; an unknown sender is a 404.
    let (status, answer, _) = send(callback(&server, "x".repeat(65 * 1024))).await;
    assert_eq!(
        (status, &answer["error"]),
        (413, &json!("payload_too_large")),
        "{answer}"
    );
    let answer = server
        .http
        .post(server.url("/callbacks/nobody"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    assert_eq!(answer.json::<Value>().await.unwrap()["error"], "not_found");

    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fake.requery_calls(), requeries, "nothing to requery");
    let health = server.http.get(server.url("/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
}
