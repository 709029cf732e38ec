use crate::common::{
    finalization, funded_account, funded_account_with_webhook, purchase, set_webhook_url, store,
};
use billpay_domain::{AccountId, KeyId, TxStatus};
use billpay_store::clock::now_ms;
use billpay_store::*;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(60);

/// A finalized purchase of a new account with a webhook URL: its event is due.
async fn due_event(store: &SharedStore, status: TxStatus) -> (AccountId, KeyId, String) {
    let (account, key) = funded_account_with_webhook(store, 1_000).await;
    let tx = store
        .place_purchase(purchase(account, key, "evented", 100))
        .await
        .unwrap();
    store
        .finalize(&tx.code, finalization(status, false))
        .await
        .unwrap();
    (account, key, tx.code)
}

/// How many due events a claim leases.
async fn due_count(store: &SharedStore) -> usize {
    store.claim_events(10, LEASE, vec![]).await.unwrap().len()
}

/// The one due event, leased.
async fn claim_one(store: &SharedStore) -> Event {
    let mut claimed = store.claim_events(10, LEASE, vec![]).await.unwrap();
    assert_eq!(claimed.len(), 1);
    claimed.remove(0)
}

async fn status_of(store: &SharedStore, event_id: &str) -> EventStatus {
    store.event(event_id).await.unwrap().unwrap().status
}

fn attempt(http_status: u16) -> NewAttempt {
    NewAttempt {
        url: Some("https://example.com/hook".into()),
        http_status: Some(http_status),
        error: None,
        latency_ms: 12,
        response_excerpt: "ok".into(),
    }
}

#[tokio::test]
async fn a_claim_leases_due_events_except_the_skipped_keys() {
    let (_db, store) = store().await;
    let (_, key_a, _) = due_event(&store, TxStatus::Successful).await;
    let (_, key_b, code_b) = due_event(&store, TxStatus::Failed).await;
    let claimed = store.claim_events(10, LEASE, vec![key_a]).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        (claimed[0].key_id, &claimed[0].transaction_code),
        (key_b, &code_b)
    );
    assert!(due_count(&store).await == 1, "only a's is left");
    assert!(due_count(&store).await == 0);
}

#[tokio::test]
async fn a_recorded_attempt_moves_the_event_on() {
    let (_db, store) = store().await;
    let (account, _, code) = due_event(&store, TxStatus::Successful).await;
    let event = claim_one(&store).await;
    let retry_at = now_ms() + 60_000;
    store
        .record_delivery(&event.id, attempt(500), EventNext::RetryAtMs(retry_at))
        .await
        .unwrap();
    let pending = store.event(&event.id).await.unwrap().unwrap();
    assert_eq!(
        (pending.status, pending.attempts),
        (EventStatus::Pending, 1)
    );
    assert!(due_count(&store).await == 0, "not due yet");

    store
        .record_delivery(&event.id, attempt(410), EventNext::Failed)
        .await
        .unwrap();
    let failed = store.event(&code).await.unwrap().unwrap();
    assert_eq!(
        (failed.id.as_str(), failed.status),
        (event.id.as_str(), EventStatus::Failed)
    );
    let attempts = store.attempts(&event.id).await.unwrap();
    let statuses: Vec<_> = attempts.iter().map(|a| a.http_status).collect();
    assert_eq!(statuses, [Some(500), Some(410)]);
    assert_eq!(
        (attempts[0].latency_ms, attempts[0].url.as_deref()),
        (12, Some("https://example.com/hook"))
    );
    let filter = |failed_only| EventFilter {
        account_id: Some(account),
        failed_only,
        limit: 10,
        ..Default::default()
    };
    assert_eq!(store.events(filter(true)).await.unwrap().len(), 1);
    let other = EventFilter {
        key_id: Some(KeyId::new()),
        ..filter(false)
    };
    assert!(store.events(other).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_requeue_waits_for_the_delivery_under_way() {
    let (_db, store) = store().await;
    let _ = due_event(&store, TxStatus::Successful).await;
    let event = claim_one(&store).await;
    let refused = store.requeue_event(&event.id).await;
    assert!(matches!(refused, Err(StoreError::DeliveryInProgress)));
    assert_eq!(refused.unwrap_err().to_string(), DELIVERY_IN_PROGRESS);
    store
        .record_delivery(&event.id, attempt(200), EventNext::Delivered)
        .await
        .unwrap();
    assert_eq!(status_of(&store, &event.id).await, EventStatus::Delivered);
    store.requeue_event(&event.id).await.unwrap();
    assert_eq!(status_of(&store, &event.id).await, EventStatus::Pending);
    assert_eq!(due_count(&store).await, 1);
    assert!(matches!(
        store.requeue_event("EV-none").await,
        Err(StoreError::NotFound(_))
    ));
}

#[tokio::test]
async fn a_skipped_event_is_final() {
    let (_db, store) = store().await;
    let _ = due_event(&store, TxStatus::Successful).await;
    let event = claim_one(&store).await;
    let mut skipped = attempt(0);
    (skipped.url, skipped.http_status) = (None, None);
    store
        .record_delivery(&event.id, skipped, EventNext::Skipped)
        .await
        .unwrap();
    assert_eq!(status_of(&store, &event.id).await, EventStatus::Skipped);
    assert!(store.attempts(&event.id).await.unwrap()[0].url.is_none());
}

#[tokio::test]
async fn a_key_without_a_webhook_url_has_its_event_written_skipped() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let tx = store
        .place_purchase(purchase(account, key, "no-url", 100))
        .await
        .unwrap();
    let fin = finalization;
    assert!(
        store
            .finalize(&tx.code, fin(TxStatus::Successful, false))
            .await
            .unwrap()
    );
    let skipped = store.event(&tx.code).await.unwrap().unwrap();
    assert_eq!(
        (skipped.status, skipped.attempts),
        (EventStatus::Skipped, 1)
    );
    assert!(due_count(&store).await == 0, "nothing to deliver");
    let attempts = store.attempts(&skipped.id).await.unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].url, None);
    assert_eq!(attempts[0].http_status, None);
    assert_eq!(attempts[0].error.as_deref(), Some(NO_WEBHOOK_URL));

    // A reversal sends the event again: skipped again, with its own attempt.
    assert!(
        store
            .finalize(&tx.code, fin(TxStatus::Failed, true))
            .await
            .unwrap()
    );
    let again = store.event(&tx.code).await.unwrap().unwrap();
    assert_eq!(
        (again.id.as_str(), again.status),
        (skipped.id.as_str(), EventStatus::Skipped)
    );
    assert_eq!(again.payload, "failed");
    assert_eq!(store.attempts(&again.id).await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_webhook_url_set_later_applies_to_the_events_written_after_it() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let place =
        |reference: &'static str| store.place_purchase(purchase(account, key, reference, 100));
    let (before, after) = (
        place("before").await.unwrap(),
        place("after").await.unwrap(),
    );
    let fin = || finalization(TxStatus::Successful, false);
    assert!(store.finalize(&before.code, fin()).await.unwrap());
    set_webhook_url(&store, key).await;
    assert!(store.finalize(&after.code, fin()).await.unwrap());
    assert_eq!(status_of(&store, &before.code).await, EventStatus::Skipped);
    let claimed = claim_one(&store).await;
    assert_eq!(
        (claimed.transaction_code, claimed.attempts),
        (after.code, 0)
    );
    // The skipped one is sent when asked for again.
    let skipped = store.event(&before.code).await.unwrap().unwrap();
    store.requeue_event(&skipped.id).await.unwrap();
    assert_eq!(claim_one(&store).await.transaction_code, before.code);
}
