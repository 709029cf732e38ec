use crate::common::{account, finalization, funded_account, purchase, raw_sql, store};
use billpay_domain::Kobo;
use billpay_domain::TxStatus;

#[tokio::test]
async fn every_check_passes_after_purchases_and_refunds() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    for (i, status) in [TxStatus::Successful, TxStatus::Failed]
        .into_iter()
        .enumerate()
    {
        let reference = format!("audited-{i}");
        let tx = store
            .place_purchase(purchase(account, key, &reference, 100))
            .await
            .unwrap();
        assert!(
            store
                .finalize(&tx.code, finalization(status, false))
                .await
                .unwrap()
        );
    }
    let outcomes = store.audit().await.unwrap();
    // The SQL checks, and the one of addresses computed in Rust.
    assert_eq!(outcomes.len(), billpay_store::audit::check_names().count());
    for outcome in outcomes {
        assert!(
            outcome.passed(),
            "{}: {:?}",
            outcome.name,
            outcome.violations
        );
    }
}

/// `credit_reference_once` catches a reference credited twice by one source,
/// counting a credit from before sources as an operator's (possible only
/// once the unique index that enforces it is gone).
#[tokio::test]
async fn a_credit_reference_counted_twice_is_named() {
    let (db, store) = store().await;
    let (account, _) = account(&store).await;
    store.credit(account, Kobo(100), "twice").await.unwrap();
    let legacy_repeat = format!(
        "DROP INDEX ledger_one_credit_per_source_reference;
         UPDATE accounts SET balance = balance + 100 WHERE id = '{account}';
         INSERT INTO ledger (account_id, amount, kind, balance_after, credit_reference, created_at)
         VALUES ('{account}', 100, 'credit', 200, 'twice', '2026-01-01T00:00:00.000+00:00');"
    );
    raw_sql(&db, &legacy_repeat).await;
    let outcomes = store.audit().await.unwrap();
    for outcome in &outcomes {
        let expected = usize::from(outcome.name == "credit_reference_once");
        assert_eq!(outcome.violations.len(), expected, "{outcome:?}");
    }
    let check = outcomes.iter().find(|o| o.name == "credit_reference_once");
    let row = &check.unwrap().violations[0];
    let text = |column: &str| row[column].as_deref();
    assert_eq!(text("account_id"), Some(account.to_string().as_str()));
    assert_eq!(text("credit_source"), Some("operator"));
    assert_eq!(text("credit_reference"), Some("twice"));
    assert_eq!(text("credits"), Some("2"));
}
