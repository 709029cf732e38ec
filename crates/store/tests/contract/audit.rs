use crate::common::{finalization, funded_account, purchase, store};
use billpay_domain::TxStatus;
use billpay_store::audit::CHECKS;

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
    assert_eq!(outcomes.len(), CHECKS.len());
    for outcome in outcomes {
        assert!(
            outcome.passed(),
            "{}: {:?}",
            outcome.name,
            outcome.violations
        );
    }
}
