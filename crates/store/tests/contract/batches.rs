use crate::common::{funded_account_with_webhook, purchase, store};
use billpay_domain::Product;
use billpay_store::{BatchStatus, ItemOutcome, ItemPlaced, NewBatch, NewBatchItem};
use std::time::Duration;

fn item(reference: &str) -> NewBatchItem {
    NewBatchItem {
        reference: reference.into(),
        product: Product::Airtime,
        body: format!(r#"{{"reference":"{reference}"}}"#),
    }
}

/// A batch is stored once per (account, reference); an item whose reference
/// a purchase or another batch's pending item holds is refused at once; one
/// claim leases it (a second finds nothing); outcomes are counted; it is
/// completed, and its webhook queued, once.
#[tokio::test]
async fn a_batch_is_stored_once_claimed_once_counted_and_completed_once() {
    let (_db, store) = store().await;
    let (account, key) = funded_account_with_webhook(&store, 1_000).await;
    let placed = store
        .place_purchase(purchase(account, key, "used-ref-0001", 100))
        .await
        .unwrap();
    let new = |reference: &str, items: Vec<NewBatchItem>| NewBatch {
        account_id: account,
        key_id: key,
        reference: reference.into(),
        items,
    };
    let items = vec![
        item("used-ref-0001"),
        item("item-ref-0001"),
        item("item-ref-0002"),
    ];
    let (batch, created) = store
        .create_batch(new("batch-0001", items.clone()))
        .await
        .unwrap();
    assert!(created);
    let (again, created) = store.create_batch(new("batch-0001", items)).await.unwrap();
    assert!(!created, "the same reference is the same batch");
    assert_eq!(again.id, batch.id);
    assert_eq!(
        (
            batch.counts.items,
            batch.counts.refused,
            batch.counts.queued
        ),
        (3, 1, 2)
    );
    let (other, _) = store
        .create_batch(new("batch-0002", vec![item("item-ref-0001")]))
        .await
        .unwrap();
    assert_eq!(
        other.counts.refused, 1,
        "a pending item's reference is held"
    );

    let lease = Duration::from_secs(30);
    let claimed = store.claim_batches(10, lease).await.unwrap();
    assert_eq!(claimed.len(), 2);
    assert!(
        store.claim_batches(10, lease).await.unwrap().is_empty(),
        "leased"
    );

    let items = store.batch_items(&batch.id).await.unwrap();
    assert!(matches!(items[0].outcome, ItemOutcome::Refused { .. }));
    let record = |position, placed| store.record_batch_item(&batch.id, position, placed, lease);
    record(1, ItemPlaced::Placed(placed.code.clone()))
        .await
        .unwrap();
    let refused = ItemPlaced::Refused {
        error: "insufficient_balance".into(),
        message: "Insufficient wallet balance".into(),
    };
    record(2, refused).await.unwrap();
    store.batch_placed(&batch.id, Duration::ZERO).await.unwrap();
    let counted = store.batch(account, "batch-0001").await.unwrap().unwrap();
    assert_eq!(counted.status, BatchStatus::Fulfilling);
    assert_eq!((counted.counts.processing, counted.counts.refused), (1, 2));
    assert_eq!(counted.counts.charged, placed.amount);
    assert!(!counted.counts.all_final());

    let payload = r#"{"event":"batch.completed"}"#;
    assert!(
        store
            .complete_batch(&batch.id, "batch.completed", payload)
            .await
            .unwrap()
    );
    assert!(
        !store
            .complete_batch(&batch.id, "batch.completed", payload)
            .await
            .unwrap()
    );
    let event = store
        .event(&batch.id)
        .await
        .unwrap()
        .expect("the batch's event");
    assert_eq!(
        (event.event.as_str(), event.payload.as_str()),
        ("batch.completed", payload)
    );
    let listed = store.batches(account, 10).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        listed
            .iter()
            .filter(|b| b.status == BatchStatus::Completed)
            .count(),
        1
    );
}
