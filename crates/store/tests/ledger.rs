//! The ledger invariant and idempotency at the store level, under
//! concurrency (these exercise the group-commit writers), on a real SQLite
//! file — or, with `BILLPAY_TEST_BACKEND=postgres` and
//! `BILLPAY_TEST_POSTGRES_URL`, on a fresh PostgreSQL database.

mod common;

use billpay_domain::{AccountId, KeyId, Kobo, TxStatus};
use billpay_store::postgres::scratch::ScratchDatabase;
use billpay_store::*;
use common::{account, purchase};
use std::sync::Arc;

/// Keeps the test's database alive; removes it on drop.
enum Db {
    Sqlite(tempfile::TempDir),
    Postgres(ScratchDatabase),
}

fn postgres_admin_url() -> Option<String> {
    if std::env::var("BILLPAY_TEST_BACKEND").as_deref() != Ok("postgres") {
        return None;
    }
    Some(
        std::env::var("BILLPAY_TEST_POSTGRES_URL")
            .expect("BILLPAY_TEST_BACKEND=postgres needs BILLPAY_TEST_POSTGRES_URL=postgres://…"),
    )
}

async fn store() -> (Db, SharedStore) {
    if let Some(admin) = postgres_admin_url() {
        let db = ScratchDatabase::create(&admin).await.unwrap();
        let store = open(&db.url).await.unwrap();
        return (Db::Postgres(db), store);
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    (Db::Sqlite(dir), open(&url).await.unwrap())
}

async fn funded_account(store: &SharedStore, naira: i64) -> (AccountId, KeyId) {
    let (account, key) = account(store).await;
    store
        .credit(account, Kobo::from_naira(naira), "fund")
        .await
        .unwrap();
    (account, key)
}

/// A finalization whose message and webhook body are the status's name.
fn finalization(status: TxStatus, reversal: bool) -> Finalization {
    Finalization {
        status,
        message: status.to_string(),
        result: serde_json::json!({}),
        completed_at_ms: clock::now_ms(),
        event_payload: status.to_string(),
        reversal,
    }
}

async fn assert_invariant(store: &SharedStore, account: AccountId) {
    let balance = store.balance(account).await.unwrap();
    assert_eq!(balance, store.ledger_sum(account).await.unwrap());
    assert!(balance >= Kobo::ZERO);
}

#[tokio::test]
async fn concurrent_credits_with_distinct_and_shared_references() {
    let (_dir, store) = store().await;
    let (account, _) = account(&store).await;
    let mut tasks = Vec::new();
    for i in 0..200 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .credit(account, Kobo(150), &format!("distinct-{i}"))
                .await
                .unwrap()
        }));
    }
    for i in 0..200 {
        let store = store.clone();
        let _ = i;
        tasks.push(tokio::spawn(async move {
            store.credit(account, Kobo(10_000), "shared").await.unwrap()
        }));
    }
    let results: Vec<Credit> = futures_join(tasks).await;
    assert_eq!(results.iter().filter(|c| c.applied).count(), 201);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo(200 * 150 + 10_000)
    );
    assert_eq!(store.ledger(account, 1000).await.unwrap().len(), 201);
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn a_purchase_debits_once_and_a_failure_refunds_once() {
    let (_dir, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;

    let tx = store
        .place_purchase(purchase(account, key, "ref-00001", 400))
        .await
        .unwrap();
    assert_eq!(
        (tx.balance_before, tx.balance_after),
        (Kobo::from_naira(1_000), Kobo::from_naira(600))
    );
    assert!(matches!(
        store
            .place_purchase(purchase(account, key, "ref-00001", 1))
            .await,
        Err(StoreError::Refused(Refusal::DuplicateReference))
    ));
    assert!(matches!(
        store
            .place_purchase(purchase(account, key, "ref-00002", 601))
            .await,
        Err(StoreError::Refused(Refusal::InsufficientBalance))
    ));
    // A refused purchase leaves its reference usable.
    store
        .place_purchase(purchase(account, key, "ref-00002", 600))
        .await
        .unwrap();
    assert_eq!(store.balance(account).await.unwrap(), Kobo::ZERO);

    let failed = || finalization(TxStatus::Failed, false);
    assert!(store.finalize(&tx.code, failed()).await.unwrap());
    assert!(
        !store.finalize(&tx.code, failed()).await.unwrap(),
        "a final status never changes"
    );
    assert_eq!(store.balance(account).await.unwrap(), Kobo::from_naira(400));
    let kinds: Vec<String> = store
        .ledger(account, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, ["refund", "debit", "debit", "credit"]);
    assert_eq!(
        store
            .events(EventFilter {
                account_id: Some(account),
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap()
            .len(),
        1
    );
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn concurrent_purchases_never_overdraw() {
    let (_dir, store) = store().await;
    let (account, key) = account(&store).await;
    store
        .credit(account, Kobo::from_naira(10_000), "fund")
        .await
        .unwrap();
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .place_purchase(purchase(account, key, &format!("order-{i:04}"), 350))
                    .await
                    .is_ok()
            })
        })
        .collect();
    let accepted = futures_join(tasks)
        .await
        .into_iter()
        .filter(|ok| *ok)
        .count();
    assert_eq!(accepted, 10_000 / 350);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(10_000 - 350 * accepted as i64)
    );
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn the_ledger_is_append_only() {
    let (db, store) = store().await;
    let (account, _) = account(&store).await;
    store.credit(account, Kobo(100), "fund").await.unwrap();
    match &db {
        Db::Sqlite(dir) => {
            let conn = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
            assert!(conn.execute("UPDATE ledger SET amount = 1", []).is_err());
            assert!(conn.execute("DELETE FROM ledger", []).is_err());
        }
        Db::Postgres(db) => {
            let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            for sql in [
                "UPDATE ledger SET amount = 1",
                "DELETE FROM ledger",
                "TRUNCATE ledger CASCADE",
            ] {
                let refused = client.batch_execute(sql).await.unwrap_err();
                assert!(
                    refused.to_string().contains("append-only")
                        || format!("{refused:?}").contains("append-only"),
                    "{sql}: {refused:?}"
                );
            }
        }
    }
    assert_eq!(store.ledger(account, 10).await.unwrap().len(), 1);
    drop(Arc::clone(&store));
}

async fn futures_join<T: Send + 'static>(tasks: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test]
async fn a_reversal_refunds_a_successful_purchase_once() {
    let (_dir, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
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
