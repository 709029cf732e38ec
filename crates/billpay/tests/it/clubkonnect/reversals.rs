//! After the sale (issue 27): ClubKonnect's cancellation ("602, credited
//! back") called back seconds after its "completed" is never lost to the
//! callback guard, a cancellation nobody calls back is found by the
//! reversal watch, and callbacks about nothing of ours cannot crowd out a
//! real one.

use super::*;
use crate::support::receiver::Receiver;

/// ClubKonnect's callback GET with this query; returns our status code.
async fn callback(server: &TestServer, query: &str) -> u16 {
    let url = server.url(&format!("/callbacks/clubkonnect?{query}"));
    server.http.get(url).send().await.unwrap().status().as_u16()
}

/// A server whose callback interval is `interval_ms` (30 s in production)
/// and a webhook receiver for the customer's key.
async fn setup(
    fake: &FakeClubkonnect,
    extra: &[(&str, &str)],
) -> (TestServer, Receiver, crate::support::Customer) {
    let server = server_with(fake, extra).await;
    let receiver = Receiver::start().await;
    let who = server.customer("5000");
    server.cli(&["key", "webhook", &who.key_id, "--url", &receiver.url("/ok")]);
    (server, receiver, who)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_called_back_seconds_after_completion_refunds_once() {
    let fake = FakeClubkonnect::start().await;
    let interval = [("BILLPAY_CALLBACK_INTERVAL_MS", "1500")];
    let (server, receiver, who) = setup(&fake, &interval).await;
    let number = "08012345678";
    let code = buy(&server, &who, "airtime", airtime(number)).await;
    let sent = receiver.wait_for(&code, 1).await;
    assert_eq!(sent[0].json()["status"], "successful");

    // "completed": billpay queries, the sale stands.
    let queries = fake.queries();
    assert_eq!(callback(&server, &fake.callback_query(&code)).await, 200);
    until("the first callback's query", || fake.queries() > queries).await;
    // Seconds later, inside the guard's interval: "credited back".
    fake.credit_back(number);
    assert_eq!(callback(&server, &fake.callback_query(&code)).await, 200);
    assert_eq!(callback(&server, &fake.callback_query(&code)).await, 200);

    let webhooks = receiver.wait_for(&code, 2).await;
    assert_eq!(
        webhooks[1].json()["status"],
        "failed",
        "{}",
        webhooks[1].json()
    );
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "failed", "{status}");
    assert_eq!(server.balance(&who.api_key).await, 5000.0, "refunded");
    assert_eq!(
        fake.queries(),
        queries + 2,
        "three callbacks: one query, and one after the interval"
    );
    // Called back again after the interval: it is final (failed), nothing
    // to ask and nothing moves.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(callback(&server, &fake.callback_query(&code)).await, 200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fake.queries(), queries + 2);
    assert_eq!(server.balance(&who.api_key).await, 5000.0, "refunded once");
    assert_eq!(
        receiver.for_code(&code).len(),
        2,
        "the webhook sent again once"
    );
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_nobody_calls_back_is_found_by_the_watch() {
    let fake = FakeClubkonnect::start().await;
    // Watched 0.4 s and 0.8 s after success (in production: minutes to a day).
    let watch = [("BILLPAY_REVERSAL_WATCH_MS", "400,800")];
    let (server, receiver, who) = setup(&fake, &watch).await;
    let (cancelled, stands) = ("08012345678", "08012345679");
    let queries = fake.queries();
    let code = buy(&server, &who, "airtime", airtime(cancelled)).await;
    let kept = buy(&server, &who, "airtime", airtime(stands)).await;
    // Completed at once ("200"); ClubKonnect credits one back right after.
    until("both sold", || {
        fake.purchases_for(cancelled).len() + fake.purchases_for(stands).len() == 2
    })
    .await;
    fake.credit_back(cancelled);
    assert_eq!(
        receiver.wait_for(&code, 1).await[0].json()["status"],
        "successful"
    );
    assert_eq!(
        receiver.wait_for(&kept, 1).await[0].json()["status"],
        "successful"
    );

    let webhooks = receiver.wait_for(&code, 2).await;
    assert_eq!(
        webhooks[1].json()["status"],
        "failed",
        "{}",
        webhooks[1].json()
    );
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "failed"
    );
    // The sale that stands is queried at each watch time, then no more; the
    // cancelled one once (it is final).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(fake.queries(), queries + 3, "bounded: 2 + 1 queries");
    assert_eq!(
        server.wait_final(&who.api_key, &kept).await["status"],
        "successful"
    );
    assert_eq!(receiver.for_code(&kept).len(), 1);
    assert_eq!(server.balance(&who.api_key).await, 4500.0, "refunded once");
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_about_nothing_of_ours_cannot_crowd_out_a_real_one() {
    let fake = FakeClubkonnect::start().await;
    let (server, receiver, who) = setup(&fake, &[]).await;
    let number = "08012345678";
    let code = buy(&server, &who, "airtime", airtime(number)).await;
    assert_eq!(
        receiver.wait_for(&code, 1).await[0].json()["status"],
        "successful"
    );
    let queries = fake.queries();

    // More well-formed request ids of no purchase than the guard remembers
    // (10,000 per 30 s), 16 at a time.
    let flood = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (http, base, flood) = (server.http.clone(), server.url(""), flood.clone());
        senders.spawn(async move {
            loop {
                let i = flood.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= 10_500 {
                    break;
                }
                let url = format!("{base}/callbacks/clubkonnect?requestid=BP{i:025}");
                assert_eq!(http.get(url).send().await.unwrap().status(), 200);
            }
        });
    }
    senders.join_all().await;
    assert_eq!(fake.queries(), queries, "nothing of ours: never queried");

    // ClubKonnect credits a real sale back and calls: heard, refunded.
    fake.credit_back(number);
    assert_eq!(callback(&server, &fake.callback_query(&code)).await, 200);
    let webhooks = receiver.wait_for(&code, 2).await;
    assert_eq!(
        webhooks[1].json()["status"],
        "failed",
        "{}",
        webhooks[1].json()
    );
    assert_eq!(server.balance(&who.api_key).await, 5000.0);
    server.assert_ledger_consistent(&who.account_id);
}
