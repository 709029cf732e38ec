//! PostgreSQL only: several stores (as several nodes would have) on one
//! database. Runs when `BILLPAY_TEST_POSTGRES_URL` names a server
//! (`postgres://postgres@127.0.0.1:5432/postgres`); each test makes and drops
//! its own database. Without it, each test prints that it skipped.

mod common;

use billpay_domain::{KeyId, Kobo, TxStatus};
use billpay_store::postgres::scratch::ScratchDatabase;
use billpay_store::postgres::{PostgresOptions, PostgresStore};
use billpay_store::*;
use common::{funded_account, funded_account_with_webhook, purchase};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

async fn database(test: &str) -> Option<ScratchDatabase> {
    match std::env::var("BILLPAY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(ScratchDatabase::create(&url).await.unwrap()),
        _ => {
            eprintln!("SKIPPED {test}: set BILLPAY_TEST_POSTGRES_URL to run it");
            None
        }
    }
}

async fn node(db: &ScratchDatabase, group_commit: bool) -> SharedStore {
    let options = PostgresOptions {
        group_commit,
        ..PostgresOptions::default()
    };
    node_with(db, options).await
}

async fn node_with(db: &ScratchDatabase, options: PostgresOptions) -> SharedStore {
    Arc::new(PostgresStore::open_with(&db.url, options).await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn migrations_are_applied_once_when_nodes_start_together() {
    let Some(db) = database("migrations_are_applied_once_when_nodes_start_together").await else {
        return;
    };
    let opens: Vec<_> = (0..6)
        .map(|_| {
            let url = db.url.clone();
            tokio::spawn(async move { PostgresStore::open(&url).await.map(|_| ()) })
        })
        .collect();
    for open in opens {
        open.await.unwrap().unwrap();
    }
    let store: SharedStore = Arc::new(PostgresStore::open(&db.url).await.unwrap());
    assert_eq!(store.catalogue_version().await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reference_raced_on_two_nodes_is_debited_once() {
    let Some(db) = database("a_reference_raced_on_two_nodes_is_debited_once").await else {
        return;
    };
    let nodes = [node(&db, true).await, node(&db, false).await];
    let (account, key) = funded_account(&nodes[0], 100_000).await;
    for round in 0..5 {
        let reference = format!("race-{round:04}");
        let tasks: Vec<_> = (0..24)
            .map(|i| {
                let store = nodes[i % 2].clone();
                let reference = reference.clone();
                tokio::spawn(async move {
                    store
                        .place_purchase(purchase(account, key, &reference, 100))
                        .await
                })
            })
            .collect();
        let mut accepted = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(_) => accepted += 1,
                Err(StoreError::Refused(Refusal::DuplicateReference)) => {}
                Err(e) => panic!("a race must be a duplicate_reference, not {e}"),
            }
        }
        assert_eq!(accepted, 1, "round {round}");
    }
    let balance = nodes[1].balance(account).await.unwrap();
    assert_eq!(balance, Kobo::from_naira(100_000 - 5 * 100));
    assert_eq!(balance, nodes[0].ledger_sum(account).await.unwrap());
}

/// Both nodes group-commit: copies of each reference land in one batch of
/// a node's lane (placed in turn under the wallet's one lock) and in the
/// other node's batches (waiting on that lock), several references at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn references_raced_in_two_nodes_batches_are_debited_once() {
    let test = "references_raced_in_two_nodes_batches_are_debited_once";
    let Some(db) = database(test).await else {
        return;
    };
    let nodes = [node(&db, true).await, node(&db, true).await];
    let (account, key) = funded_account(&nodes[0], 100_000).await;
    let (rounds, references, copies) = (4, 8, 6);
    for round in 0..rounds {
        let tasks: Vec<_> = (0..references * copies)
            .map(|i| {
                let store = nodes[i % 2].clone();
                let reference = format!("race-{round}-{}", i % references);
                tokio::spawn(async move {
                    let placed = store
                        .place_purchase(purchase(account, key, &reference, 100))
                        .await;
                    (reference, placed)
                })
            })
            .collect();
        let mut accepted = HashSet::new();
        for task in tasks {
            match task.await.unwrap() {
                (reference, Ok(_)) => assert!(accepted.insert(reference), "placed twice"),
                (_, Err(StoreError::Refused(Refusal::DuplicateReference))) => {}
                (_, Err(e)) => panic!("a race must be a duplicate_reference, not {e}"),
            }
        }
        assert_eq!(accepted.len(), references, "round {round}");
    }
    let placed = (rounds * references) as i64;
    let balance = nodes[1].balance(account).await.unwrap();
    assert_eq!(balance, Kobo::from_naira(100_000 - placed * 100));
    assert_eq!(balance, nodes[0].ledger_sum(account).await.unwrap());
    let debits = nodes[0].ledger(account, 1_000).await.unwrap();
    assert_eq!(
        debits.len() as i64,
        placed + 1,
        "one debit each, and the funding"
    );
    // Each entry's balance_after is its wallet's running sum (entries of
    // one batch are written in order).
    let audit = nodes[1].audit().await.unwrap();
    assert!(audit.iter().all(|c| c.passed()), "{audit:?}");
}

/// Purchases of 12 wallets on two nodes of one lane each, at once: each
/// node's batches lock several wallets (`wallet::lock_all`, in account
/// order), and each wallet is debited by exactly its purchases.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_wallets_batched_on_two_nodes_are_each_debited_exactly() {
    let test = "many_wallets_batched_on_two_nodes_are_each_debited_exactly";
    let Some(db) = database(test).await else {
        return;
    };
    // One lane a node: every batch holds whichever wallets are queued.
    let one_lane = || {
        let options = PostgresOptions {
            batches_in_flight: 1,
            ..PostgresOptions::default()
        };
        node_with(&db, options)
    };
    let nodes = [one_lane().await, one_lane().await];
    let mut wallets = Vec::new();
    for _ in 0..12 {
        wallets.push(funded_account(&nodes[0], 10_000).await);
    }
    let tasks: Vec<_> = (0..480)
        .map(|i| {
            let store = nodes[i % 2].clone();
            let (account, key) = wallets[(i / 2) % wallets.len()];
            tokio::spawn(async move {
                let reference = format!("many-{i:03}");
                store
                    .place_purchase(purchase(account, key, &reference, 50))
                    .await
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    for (account, _) in &wallets {
        let balance = nodes[1].balance(*account).await.unwrap();
        assert_eq!(balance, Kobo::from_naira(10_000 - 40 * 50));
        assert_eq!(balance, nodes[0].ledger_sum(*account).await.unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_purchases_on_two_nodes_never_overdraw() {
    let Some(db) = database("concurrent_purchases_on_two_nodes_never_overdraw").await else {
        return;
    };
    let nodes = [node(&db, true).await, node(&db, true).await];
    let (account, key) = funded_account(&nodes[0], 10_000).await;
    let tasks: Vec<_> = (0..200)
        .map(|i| {
            let store = nodes[i % 2].clone();
            tokio::spawn(async move {
                match store
                    .place_purchase(purchase(account, key, &format!("order-{i:04}"), 350))
                    .await
                {
                    Ok(tx) => Some(tx),
                    Err(StoreError::Refused(Refusal::InsufficientBalance)) => None,
                    Err(e) => panic!("{e}"),
                }
            })
        })
        .collect();
    let mut accepted = Vec::new();
    for task in tasks {
        accepted.extend(task.await.unwrap());
    }
    assert_eq!(accepted.len(), (10_000 / 350) as usize);
    let balance = nodes[1].balance(account).await.unwrap();
    assert_eq!(
        balance,
        Kobo::from_naira(10_000 - 350 * accepted.len() as i64)
    );
    assert_eq!(balance, nodes[0].ledger_sum(account).await.unwrap());
    // What place_purchase answered is what a read gives back.
    for tx in &accepted {
        let read = nodes[1]
            .transaction(Some(account), TxLookup::Code(tx.code.clone()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            serde_json::to_value(tx).unwrap()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nodes_claim_disjoint_work_and_take_over_expired_leases() {
    let Some(db) = database("nodes_claim_disjoint_work_and_take_over_expired_leases").await else {
        return;
    };
    let nodes = [node(&db, true).await, node(&db, true).await];
    let (account, key) = funded_account_with_webhook(&nodes[0], 1_000_000).await;
    let mut codes = HashSet::new();
    for i in 0..300 {
        let tx = nodes[i % 2]
            .place_purchase(purchase(account, key, &format!("work-{i:04}"), 100))
            .await
            .unwrap();
        codes.insert(tx.code);
    }

    // Both nodes claim at once, in small bites: every row exactly once.
    let lease = Duration::from_millis(1500);
    let claimers: Vec<_> = nodes
        .iter()
        .map(|store| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let claimed = store.claim_fulfilments(16, lease).await.unwrap();
                    if claimed.is_empty() {
                        return mine;
                    }
                    mine.extend(claimed.into_iter().map(|t| t.code));
                }
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for claimer in claimers {
        claimed.extend(claimer.await.unwrap());
    }
    assert_eq!(claimed.len(), 300, "each transaction claimed exactly once");
    assert_eq!(claimed.iter().cloned().collect::<HashSet<_>>(), codes);

    // Leased: nobody else gets them…
    assert!(
        nodes[1]
            .claim_fulfilments(500, lease)
            .await
            .unwrap()
            .is_empty()
    );
    // …until the lease runs out (the claimer "died").
    tokio::time::sleep(lease + Duration::from_millis(200)).await;
    let taken_over = nodes[1].claim_fulfilments(500, lease).await.unwrap();
    assert_eq!(taken_over.len(), 300);

    // Finalize them all, half of them failed: one refund each, one event each.
    for (i, tx) in taken_over.iter().enumerate() {
        let status = if i % 2 == 0 {
            TxStatus::Successful
        } else {
            TxStatus::Failed
        };
        let fin = Finalization {
            status,
            message: "done".into(),
            result: serde_json::json!({}),
            completed_at_ms: clock::now_ms(),
            event_payload: format!("{{\"code\":\"{}\"}}", tx.code),
            reversal: false,
            cost: None,
            watch_at_ms: None,
        };
        let (a, b) = tokio::join!(
            nodes[0].finalize(&tx.code, fin.clone()),
            nodes[1].finalize(&tx.code, fin)
        );
        assert!(a.unwrap() ^ b.unwrap(), "finalized exactly once");
    }
    assert_eq!(
        nodes[0].balance(account).await.unwrap(),
        Kobo::from_naira(1_000_000 - 150 * 100)
    );

    let deliverers: Vec<_> = nodes
        .iter()
        .map(|store| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let events = store
                        .claim_events(8, Duration::from_secs(60), Vec::new())
                        .await
                        .unwrap();
                    if events.is_empty() {
                        return mine;
                    }
                    for event in events {
                        let attempt = NewAttempt {
                            url: None,
                            http_status: Some(200),
                            error: None,
                            latency_ms: 1,
                            response_excerpt: String::new(),
                        };
                        store
                            .record_delivery(&event.id, attempt, EventNext::Delivered)
                            .await
                            .unwrap();
                        mine.push(event.id);
                    }
                }
            })
        })
        .collect();
    let mut delivered = Vec::new();
    for deliverer in deliverers {
        delivered.extend(deliverer.await.unwrap());
    }
    assert_eq!(delivered.len(), 300);
    assert_eq!(delivered.iter().collect::<HashSet<_>>().len(), 300);
    for id in delivered.iter().take(20) {
        assert_eq!(nodes[0].attempts(id).await.unwrap().len(), 1);
    }
}

#[tokio::test]
async fn answers_match_the_sqlite_backend() {
    let Some(db) = database("answers_match_the_sqlite_backend").await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = open(&format!("sqlite://{}", dir.path().join("t.db").display()))
        .await
        .unwrap();
    let postgres = open(&db.url).await.unwrap();
    assert_eq!(
        serde_json::to_value(sqlite.catalogue().await.unwrap().1).unwrap(),
        serde_json::to_value(postgres.catalogue().await.unwrap().1).unwrap()
    );
    for store in [&sqlite, &postgres] {
        let (account, key) = funded_account_with_webhook(store, 1_000).await;
        let tx = store
            .place_purchase(purchase(account, key, "same-0001", 300))
            .await
            .unwrap();
        store
            .reschedule(&tx.code, Duration::ZERO, "supplier pending")
            .await
            .unwrap();
        let read = store
            .transaction(None, TxLookup::Reference("same-0001".into()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            read.result,
            serde_json::json!({"last_note": "supplier pending"})
        );
        assert_eq!(read.attempts, 1);
        assert_eq!(read.created_at.len(), "2026-11-22T01:51:22.123+00:00".len());
        let spend = store
            .daily_spend(account, "2000-01-01T00:00:00.000+00:00")
            .await
            .unwrap();
        assert_eq!(spend.len(), 1);
        assert_eq!(
            (spend[0].count, spend[0].amount),
            (1, Kobo::from_naira(300))
        );
        let email = store.account(account).await.unwrap().unwrap().email;
        let found = store
            .account_by_email(&email.to_uppercase())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found.id, account, "e-mail lookups ignore case");
        assert!(matches!(
            store
                .create_account(NewAccount {
                    name: "B".into(),
                    email: email.to_uppercase(),
                    password_hash: None,
                    kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
                })
                .await,
            Err(StoreError::EmailTaken(_))
        ));
        let listed = store
            .transactions(TxFilter {
                account_id: Some(account),
                search: Some("same-0".into()),
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(listed.len(), 1);

        let fin = Finalization {
            status: TxStatus::Successful,
            message: "Transaction successful".into(),
            result: serde_json::json!({"pin": "1234"}),
            completed_at_ms: clock::now_ms(),
            event_payload: "{}".into(),
            reversal: false,
            cost: None,
            watch_at_ms: None,
        };
        assert!(store.finalize(&tx.code, fin).await.unwrap());
        let events = |key_id| EventFilter {
            account_id: Some(account),
            key_id,
            failed_only: false,
            limit: 10,
        };
        assert_eq!(store.events(events(Some(key))).await.unwrap().len(), 1);
        assert!(
            store
                .events(events(Some(KeyId::new())))
                .await
                .unwrap()
                .is_empty()
        );
        let event = store.event(&tx.code).await.unwrap().unwrap();
        assert_eq!(
            (event.event.as_str(), event.attempts),
            ("airtime.purchase", 0)
        );
        assert_eq!(
            store.ledger_for_transaction(&tx.code).await.unwrap().len(),
            1
        );
    }
}

/// Connections terminated by the server (an operator's `pg_terminate_backend`,
/// a failover) while purchases flow: a statement the server aborted never
/// committed, so it is run again on a fresh connection instead of answering
/// 500; every accepted purchase is debited once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn purchases_survive_terminated_connections() {
    let Some(db) = database("purchases_survive_terminated_connections").await else {
        return;
    };
    let store = node(&db, true).await;
    let (account, key) = funded_account(&store, 1_000_000).await;
    let (admin, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let killing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let killer = {
        let killing = killing.clone();
        tokio::spawn(async move {
            let mut terminated = 0;
            while killing.load(std::sync::atomic::Ordering::Relaxed) {
                let rows = admin
                    .query(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                         WHERE datname = current_database() AND pid <> pg_backend_pid()",
                        &[],
                    )
                    .await
                    .unwrap();
                terminated += rows.len();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            terminated
        })
    };
    let mut failures = Vec::new();
    for wave in 0..40 {
        let tasks: Vec<_> = (0..16)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let reference = format!("kill-{wave:03}-{i:02}");
                    store
                        .place_purchase(purchase(account, key, &reference, 100))
                        .await
                })
            })
            .collect();
        for task in tasks {
            if let Err(e) = task.await.unwrap() {
                failures.push(e.to_string());
            }
        }
    }
    killing.store(false, std::sync::atomic::Ordering::Relaxed);
    let terminated = killer.await.unwrap();
    assert!(terminated > 0, "no connection was terminated");
    assert!(
        failures.is_empty(),
        "{} of 640 failed, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(3)]
    );
    let placed = store
        .transactions(TxFilter {
            account_id: Some(account),
            limit: 1_000,
            ..TxFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(placed.len(), 640);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(1_000_000 - 64_000)
    );
    assert!(
        store
            .audit()
            .await
            .unwrap()
            .iter()
            .all(|check| check.passed())
    );
}
