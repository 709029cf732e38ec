use crate::common::{
    assert_invariant, finalization, funded_account, funded_account_with_webhook, purchase, store,
};
use billpay_domain::{Kobo, TxStatus};
use billpay_store::clock::{now_ms, rfc3339};
use billpay_store::*;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_claim_leases_due_purchases_once() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    for i in 0..3 {
        let reference = format!("due-{i}");
        store
            .place_purchase(purchase(account, key, &reference, 10))
            .await
            .unwrap();
    }
    let claimed = store.claim_fulfilments(2, LEASE).await.unwrap();
    assert_eq!(claimed.len(), 2);
    let rest = store.claim_fulfilments(10, LEASE).await.unwrap();
    assert_eq!(rest.len(), 1);
    assert!(store.claim_fulfilments(10, LEASE).await.unwrap().is_empty());
    let codes = claimed.iter().map(|t| t.code.clone()).collect();
    store.renew_fulfilment_leases(codes, LEASE).await.unwrap();
    assert!(store.claim_fulfilments(10, LEASE).await.unwrap().is_empty());
    let backlog = store.fulfilment_backlog().await.unwrap();
    assert_eq!(backlog.processing, 3);
    assert!(backlog.oldest_created_at.is_some());
}

#[tokio::test]
async fn an_expired_lease_returns_the_work() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    store
        .place_purchase(purchase(account, key, "lease", 10))
        .await
        .unwrap();
    let short = Duration::from_millis(50);
    assert_eq!(store.claim_fulfilments(10, short).await.unwrap().len(), 1);
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(store.claim_fulfilments(10, short).await.unwrap().len(), 1);
}

#[tokio::test]
async fn submission_and_rescheduling_are_recorded() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let tx = store
        .place_purchase(purchase(account, key, "sub", 10))
        .await
        .unwrap();
    store.claim_fulfilments(10, LEASE).await.unwrap();
    store
        .mark_submitted(&tx.code, "sandbox", Some("SUP-1"))
        .await
        .unwrap();
    store
        .reschedule(&tx.code, Duration::ZERO, "supplier pending")
        .await
        .unwrap();
    let read = store
        .transaction(None, TxLookup::Code(tx.code.clone()))
        .await
        .unwrap()
        .unwrap();
    assert!(read.submitted);
    assert_eq!(read.supplier.as_deref(), Some("sandbox"));
    assert_eq!(read.supplier_reference.as_deref(), Some("SUP-1"));
    assert_eq!(
        read.result,
        serde_json::json!({"last_note": "supplier pending"})
    );
    assert_eq!(read.attempts, 1);
    // Rescheduling releases the lease: due now, it is claimed again.
    assert_eq!(store.claim_fulfilments(10, LEASE).await.unwrap().len(), 1);
}

/// The supplier's books cannot say: the purchase needs review at once,
/// whatever its age — in the listing, the count and `needs_review` alike —,
/// the evidence kept as the last note and the first time kept; still due
/// for requeries; a final status takes it out.
#[tokio::test]
async fn a_review_requested_is_needed_at_once_until_final() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let flagged = store
        .place_purchase(purchase(account, key, "lost", 10))
        .await
        .unwrap();
    let young = store
        .place_purchase(purchase(account, key, "young", 10))
        .await
        .unwrap();
    store.claim_fulfilments(10, LEASE).await.unwrap();
    // A bound before both were placed: only a flagged one needs review.
    let long_ago = "2000-01-01T00:00:00.000+00:00";
    let review = TxFilter::needs_review(long_ago.to_owned(), 100);
    assert!(store.transactions(review.clone()).await.unwrap().is_empty());
    assert_eq!(store.needs_review_count(long_ago, 100).await.unwrap(), 0);
    let note = "needs the operator's review: no order found at site";
    store
        .request_review(&flagged.code, Duration::ZERO, note)
        .await
        .unwrap();
    store
        .reschedule(&young.code, Duration::ZERO, "supplier pending")
        .await
        .unwrap();
    let read = |code: String| {
        let store = store.clone();
        async move {
            let lookup = TxLookup::Code(code);
            store.transaction(None, lookup).await.unwrap().unwrap()
        }
    };
    let first = read(flagged.code.clone()).await;
    let asked = first.review_requested_at.clone().expect("flagged");
    assert_eq!(first.result, serde_json::json!({ "last_note": note }));
    assert_eq!(first.attempts, 1);
    assert!(first.needs_review(long_ago));
    assert!(!read(young.code.clone()).await.needs_review(long_ago));
    let listed = store.transactions(review.clone()).await.unwrap();
    let codes: Vec<&str> = listed.iter().map(|tx| tx.code.as_str()).collect();
    assert_eq!(codes, [flagged.code.as_str()]);
    assert_eq!(store.needs_review_count(long_ago, 100).await.unwrap(), 1);
    // The flagged ones alone (the operators' alert of each), whatever the age bound.
    let flagged_only = || store.transactions(TxFilter::review_requested(100));
    let listed = flagged_only().await.unwrap();
    let codes: Vec<&str> = listed.iter().map(|tx| tx.code.as_str()).collect();
    assert_eq!(codes, [flagged.code.as_str()]);
    // Still requeried; asked again, the first time stands, the note is the last.
    assert_eq!(store.claim_fulfilments(10, LEASE).await.unwrap().len(), 2);
    store
        .request_review(&flagged.code, Duration::ZERO, "2 orders match")
        .await
        .unwrap();
    let again = read(flagged.code.clone()).await;
    assert_eq!(again.review_requested_at.as_deref(), Some(asked.as_str()));
    assert_eq!(again.result["last_note"], "2 orders match");
    // The age bound still counts the others.
    tokio::time::sleep(Duration::from_millis(2)).await;
    let now = rfc3339(now_ms());
    assert_eq!(store.needs_review_count(&now, 100).await.unwrap(), 2);
    // Resolved (or found later): final, out of every review reading.
    let fin = finalization(TxStatus::Failed, false);
    assert!(store.finalize(&flagged.code, fin).await.unwrap());
    assert!(store.transactions(review).await.unwrap().is_empty());
    assert!(flagged_only().await.unwrap().is_empty());
    assert_eq!(store.needs_review_count(long_ago, 100).await.unwrap(), 0);
    assert!(!read(flagged.code.clone()).await.needs_review(long_ago));
    // A final purchase is never flagged.
    store
        .request_review(&flagged.code, Duration::ZERO, "late")
        .await
        .unwrap();
    assert_eq!(read(flagged.code.clone()).await.status, TxStatus::Failed);
    assert_eq!(store.needs_review_count(long_ago, 100).await.unwrap(), 0);
}

#[tokio::test]
async fn a_success_is_final_and_emits_one_event() {
    let (_db, store) = store().await;
    let (account, key) = funded_account_with_webhook(&store, 1_000).await;
    let tx = store
        .place_purchase(purchase(account, key, "ok", 300))
        .await
        .unwrap();
    let mut fin = finalization(TxStatus::Successful, false);
    fin.result = serde_json::json!({"pin": "1234"});
    assert!(store.finalize(&tx.code, fin).await.unwrap());
    let done = finalization(TxStatus::Failed, false);
    assert!(!store.finalize(&tx.code, done).await.unwrap());
    let read = store
        .transaction(Some(account), TxLookup::Code(tx.code.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.status, TxStatus::Successful);
    assert_eq!(read.result, serde_json::json!({"pin": "1234"}));
    assert!(read.completed_at.is_some());
    assert_eq!(store.balance(account).await.unwrap(), Kobo::from_naira(700));
    let event = store.event(&tx.code).await.unwrap().unwrap();
    assert_eq!(
        (event.event.as_str(), event.status),
        ("airtime.purchase", EventStatus::Pending)
    );
    assert_eq!(store.fulfilment_backlog().await.unwrap().processing, 0);
    let unknown = store.finalize("BP-none", finalization(TxStatus::Failed, false));
    assert!(matches!(unknown.await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn a_reversal_refunds_a_successful_purchase_once() {
    let (_db, store) = store().await;
    let (account, key) = funded_account_with_webhook(&store, 1_000).await;
    let tx = store
        .place_purchase(purchase(account, key, "ref-reversed", 300))
        .await
        .unwrap();
    let fin = finalization;
    assert!(
        !store
            .finalize(&tx.code, fin(TxStatus::Failed, true))
            .await
            .unwrap(),
        "only a successful purchase is reversed"
    );
    assert!(
        store
            .finalize(&tx.code, fin(TxStatus::Successful, false))
            .await
            .unwrap()
    );
    assert!(
        store
            .finalize(&tx.code, fin(TxStatus::Failed, true))
            .await
            .unwrap()
    );
    assert!(
        !store
            .finalize(&tx.code, fin(TxStatus::Failed, true))
            .await
            .unwrap(),
        "refunded once"
    );
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(1_000)
    );
    let events = store
        .events(EventFilter {
            account_id: Some(account),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    // One event per transaction, sent again with the new status.
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].payload, "failed");
    assert_eq!(events[0].status, EventStatus::Pending);
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn a_watched_success_is_claimed_when_due_until_unwatched_or_reversed() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let mut codes = Vec::new();
    for (reference, watch_at_ms) in [
        ("watched", Some(0)),
        ("later", Some(i64::MAX)),
        ("unwatched", None),
    ] {
        let tx = store
            .place_purchase(purchase(account, key, reference, 10))
            .await
            .unwrap();
        store.claim_fulfilments(10, LEASE).await.unwrap();
        let mut fin = finalization(TxStatus::Successful, false);
        fin.watch_at_ms = watch_at_ms;
        assert!(store.finalize(&tx.code, fin).await.unwrap());
        codes.push(tx.code);
    }
    // Only the due one, once (leased), and never as processing work.
    let claimed = store.claim_watches(10, LEASE).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        (claimed[0].code.as_str(), claimed[0].status),
        (codes[0].as_str(), TxStatus::Successful)
    );
    assert!(store.claim_watches(10, LEASE).await.unwrap().is_empty());
    assert!(store.claim_fulfilments(10, LEASE).await.unwrap().is_empty());
    // Watched again: due now, claimed again; no more: never again.
    store.rewatch(&codes[0], Some(0)).await.unwrap();
    assert_eq!(store.claim_watches(10, LEASE).await.unwrap().len(), 1);
    store.rewatch(&codes[0], None).await.unwrap();
    assert!(store.claim_watches(10, LEASE).await.unwrap().is_empty());
    // A reversal ends the watch (and refunds once).
    store.rewatch(&codes[0], Some(0)).await.unwrap();
    let reversal = finalization(TxStatus::Failed, true);
    assert!(store.finalize(&codes[0], reversal).await.unwrap());
    assert!(store.claim_watches(10, LEASE).await.unwrap().is_empty());
    store.rewatch(&codes[0], Some(0)).await.unwrap();
    assert!(
        store.claim_watches(10, LEASE).await.unwrap().is_empty(),
        "a failed one is never watched again"
    );
    assert_eq!(store.balance(account).await.unwrap(), Kobo::from_naira(980));
    assert_invariant(&store, account).await;
}
