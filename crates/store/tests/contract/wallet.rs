use crate::common::{Db, account, assert_invariant, join_all, raw_sql, store};
use billpay_domain::{AccountId, Kobo};
use billpay_store::*;

#[tokio::test]
async fn concurrent_credits_with_distinct_and_shared_references() {
    let (_db, store) = store().await;
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
    for _ in 0..200 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store.credit(account, Kobo(10_000), "shared").await.unwrap()
        }));
    }
    let results: Vec<Credit> = join_all(tasks).await;
    assert_eq!(results.iter().filter(|c| c.applied).count(), 201);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo(200 * 150 + 10_000)
    );
    assert_eq!(store.ledger(account, 1000).await.unwrap().len(), 201);
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn a_repeated_credit_answers_the_balance_unchanged() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    let first = store.credit(account, Kobo(500), "once").await.unwrap();
    let again = store.credit(account, Kobo(500), "once").await.unwrap();
    assert_eq!((first.applied, first.balance), (true, Kobo(500)));
    assert_eq!((again.applied, again.balance), (false, Kobo(500)));
    let unknown = store.credit(AccountId::new(), Kobo(1), "x").await;
    assert!(matches!(unknown, Err(StoreError::NotFound(_))));
    assert!(matches!(
        store.balance(AccountId::new()).await,
        Err(StoreError::NotFound(_))
    ));
}

#[tokio::test]
async fn the_ledger_lists_newest_first_within_the_limit() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    for i in 1..=3 {
        store
            .credit(account, Kobo(i), &format!("c{i}"))
            .await
            .unwrap();
    }
    let entries = store.ledger(account, 2).await.unwrap();
    let references: Vec<_> = entries.iter().map(|e| e.credit_reference.clone()).collect();
    assert_eq!(references, [Some("c3".to_owned()), Some("c2".to_owned())]);
    assert_eq!(
        (entries[0].kind.as_str(), entries[0].balance_after),
        ("credit", Kobo(6))
    );
    assert_eq!(store.ledger_sum(account).await.unwrap(), Kobo(6));
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
}

/// Credits are namespaced by their source; one stored before sources existed
/// (no source) is an operator's: it reads as one and a repeat of its
/// reference by an operator is not credited again.
#[tokio::test]
async fn a_credit_from_before_sources_is_an_operators() {
    let (db, store) = store().await;
    let (account, _) = account(&store).await;
    let credited = store.credit(account, Kobo(100), "new").await.unwrap();
    assert!(credited.applied);
    let legacy = format!(
        "UPDATE accounts SET balance = balance + 500 WHERE id = '{account}';
         INSERT INTO ledger (account_id, amount, kind, balance_after, credit_reference, created_at)
         VALUES ('{account}', 500, 'credit', 600, 'old', '2026-01-01T00:00:00.000+00:00');"
    );
    raw_sql(&db, &legacy).await;
    let again = store.credit(account, Kobo(500), "old").await.unwrap();
    assert_eq!((again.applied, again.balance), (false, Kobo(600)));
    let sources: Vec<_> = store.ledger(account, 10).await.unwrap();
    let sources: Vec<_> = sources
        .iter()
        .map(|e| (e.credit_reference.as_deref(), e.credit_source.clone()))
        .collect();
    let operator = Some(CreditSource::Operator);
    assert_eq!(
        sources,
        [(Some("old"), operator.clone()), (Some("new"), operator)]
    );
    assert_invariant(&store, account).await;
    let audit = store.audit().await.unwrap();
    assert!(audit.iter().all(|check| check.passed()), "{audit:?}");
}
