use crate::common::{assert_invariant, finalization, funded_account, join_all, purchase, store};
use billpay_domain::{AccountId, Kobo, Product, PurchaseDetails, TxStatus};
use billpay_store::*;

#[tokio::test]
async fn a_purchase_debits_once_and_a_failure_refunds_once() {
    let (_db, store) = store().await;
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
    let kinds: Vec<LedgerKind> = store
        .ledger(account, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    use LedgerKind::*;
    assert_eq!(kinds, [Refund, Debit, Debit, Credit]);
    let entries = store.ledger_for_transaction(&tx.code).await.unwrap();
    assert_eq!(
        entries.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["debit", "refund"]
    );
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn concurrent_purchases_never_overdraw() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 10_000).await;
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
    let accepted = join_all(tasks).await.into_iter().filter(|ok| *ok).count();
    assert_eq!(accepted, 10_000 / 350);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(10_000 - 350 * accepted as i64)
    );
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn the_check_refuses_as_a_purchase_would_and_changes_nothing() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 100).await;
    store
        .place_purchase(purchase(account, key, "used", 10))
        .await
        .unwrap();
    let check = |reference: &'static str, naira| {
        let store = store.clone();
        async move {
            store
                .check_purchase(account, reference, "08031234567", Kobo::from_naira(naira))
                .await
        }
    };
    assert_eq!(check("fresh", 90).await.unwrap(), Kobo::from_naira(90));
    assert!(matches!(
        check("used", 1).await,
        Err(StoreError::Refused(Refusal::DuplicateReference))
    ));
    assert!(matches!(
        check("fresh", 91).await,
        Err(StoreError::Refused(Refusal::InsufficientBalance))
    ));
    let unknown = store
        .check_purchase(AccountId::new(), "x", "08031234567", Kobo(1))
        .await;
    assert!(matches!(unknown, Err(StoreError::NotFound(_))));
    assert_eq!(store.balance(account).await.unwrap(), Kobo::from_naira(90));
}

#[tokio::test]
async fn a_purchase_reads_back_as_placed_by_code_reference_and_batch_id() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let (other, _) = funded_account(&store, 1).await;
    let mut new = purchase(account, key, "epin-0001", 100);
    new.product = Product::Epin;
    new.details = PurchaseDetails {
        batch_id: Some("BATCH-1".into()),
        quantity: Some(2),
        ..PurchaseDetails::default()
    };
    let placed = store.place_purchase(new).await.unwrap();
    assert_eq!((placed.status, placed.attempts), (TxStatus::Processing, 0));
    let as_placed = serde_json::to_value(&placed).unwrap();
    for lookup in [
        TxLookup::Code(placed.code.clone()),
        TxLookup::Reference("epin-0001".into()),
        TxLookup::BatchId("BATCH-1".into()),
    ] {
        let mine = store
            .transaction(Some(account), lookup.clone())
            .await
            .unwrap();
        assert_eq!(serde_json::to_value(mine.unwrap()).unwrap(), as_placed);
        let any = store.transaction(None, lookup.clone()).await.unwrap();
        assert_eq!(any.unwrap().code, placed.code);
        assert!(
            store
                .transaction(Some(other), lookup)
                .await
                .unwrap()
                .is_none()
        );
    }
}

#[tokio::test]
async fn purchases_are_listed_newest_first_filtered_and_paginated() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let mut codes = Vec::new();
    for i in 0..3 {
        let reference = format!("list-{i}");
        let tx = store
            .place_purchase(purchase(account, key, &reference, 10))
            .await
            .unwrap();
        codes.push(tx.code);
        // Distinct creation times: the order is then not a coin toss.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    store
        .finalize(&codes[0], finalization(TxStatus::Failed, false))
        .await
        .unwrap();
    let page = |offset, status, search: Option<&str>| TxFilter {
        account_id: Some(account),
        status,
        search: search.map(str::to_owned),
        limit: 2,
        offset,
        ..Default::default()
    };
    let listed = |filter| async { store.transactions(filter).await.unwrap() };
    let first: Vec<_> = listed(page(0, None, None))
        .await
        .into_iter()
        .map(|t| t.code)
        .collect();
    assert_eq!(first, [codes[2].clone(), codes[1].clone()]);
    assert_eq!(listed(page(2, None, None)).await[0].code, codes[0]);
    let failed = listed(page(0, Some(TxStatus::Failed), None)).await;
    assert_eq!(
        failed.iter().map(|t| &t.code).collect::<Vec<_>>(),
        [&codes[0]]
    );
    assert_eq!(
        listed(page(0, None, Some("list-1"))).await[0].code,
        codes[1]
    );

    let spend = store
        .daily_spend(account, "2000-01-01T00:00:00.000+00:00")
        .await
        .unwrap();
    assert_eq!(spend.len(), 1, "failed purchases are not spend");
    assert_eq!((spend[0].count, spend[0].amount), (2, Kobo::from_naira(20)));
}

/// The product and the creation-time bounds filter the list as well (from
/// inclusive, until exclusive), each on its own.
#[tokio::test]
async fn purchases_are_filtered_by_product_and_creation_time() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let airtime = store
        .place_purchase(purchase(account, key, "when-1", 10))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let data = NewPurchase {
        product: Product::Data,
        ..purchase(account, key, "when-2", 10)
    };
    let data = store.place_purchase(data).await.unwrap();
    let store = &store;
    let listed = |filter: TxFilter| async move {
        let filter = TxFilter {
            account_id: Some(account),
            limit: 10,
            ..filter
        };
        let found = store.transactions(filter).await.unwrap();
        found.into_iter().map(|t| t.code).collect::<Vec<_>>()
    };
    let data_only = TxFilter {
        product: Some(Product::Data),
        ..TxFilter::default()
    };
    assert_eq!(listed(data_only).await, [data.code.as_str()]);
    let from_data = TxFilter {
        created_from: Some(data.created_at.clone()),
        ..TxFilter::default()
    };
    assert_eq!(listed(from_data).await, [data.code.as_str()]);
    let until_data = TxFilter {
        created_until: Some(data.created_at.clone()),
        ..TxFilter::default()
    };
    assert_eq!(listed(until_data).await, [airtime.code]);
}

/// Both engines answer a placement with the transaction built from what they
/// wrote, not read back: it is exactly what reading it back gives.
#[tokio::test]
async fn a_placed_purchase_is_answered_as_it_reads_back() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let plain = purchase(account, key, "ref-placed-1", 100);
    let priced = NewPurchase {
        plan_id: Some("mtn-1gb".into()),
        tier: Some("gold".into()),
        face_value: Kobo::from_naira(105),
        ..purchase(account, key, "ref-placed-2", 100)
    };
    for new in [plain, priced] {
        let placed = store.place_purchase(new).await.unwrap();
        let lookup = TxLookup::Code(placed.code.clone());
        let read = store.transaction(Some(account), lookup).await.unwrap();
        let as_json = |tx: &Transaction| serde_json::to_value(tx).unwrap();
        assert_eq!(as_json(&placed), as_json(&read.expect("stored")));
    }
}
