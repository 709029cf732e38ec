use crate::common::{new_account, signed_in, store};
use billpay_domain::AccountId;
use billpay_store::*;

#[tokio::test]
async fn an_account_is_found_by_id_and_by_email_in_any_case() {
    let (_db, store) = store().await;
    let created = new_account(&store).await;
    assert_eq!(
        (created.status, created.balance.0),
        (AccountStatus::Active, 0)
    );
    let by_id = store.account(created.id).await.unwrap().unwrap();
    assert_eq!(by_id.email, created.email);
    let upper = created.email.to_uppercase();
    let by_email = store.account_by_email(&upper).await.unwrap().unwrap();
    assert_eq!(by_email.id, created.id);
    assert!(store.account(AccountId::new()).await.unwrap().is_none());
    assert!(
        store
            .account_by_email("nobody@example.com")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn an_email_in_use_in_any_case_is_refused() {
    let (_db, store) = store().await;
    let first = new_account(&store).await;
    let again = NewAccount {
        name: "B".into(),
        email: first.email.to_uppercase(),
        password_hash: None,
        kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
    };
    assert!(matches!(
        store.create_account(again).await,
        Err(StoreError::EmailTaken(_))
    ));
}

#[tokio::test]
async fn a_suspension_signs_the_account_out() {
    let (_db, store) = store().await;
    let (account, hash) = signed_in(&store).await;
    assert!(store.session_account(&hash).await.unwrap().is_some());
    store
        .set_account_status(account, AccountStatus::Suspended)
        .await
        .unwrap();
    assert_eq!(
        store.account(account).await.unwrap().unwrap().status,
        AccountStatus::Suspended
    );
    assert!(store.session_account(&hash).await.unwrap().is_none());
    let unknown = store.set_account_status(AccountId::new(), AccountStatus::Active);
    assert!(matches!(unknown.await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn a_new_password_signs_the_account_out() {
    let (_db, store) = store().await;
    let (account, hash) = signed_in(&store).await;
    assert!(store.session_account(&hash).await.unwrap().is_some());
    store
        .set_account_password(account, "hash-2".into())
        .await
        .unwrap();
    let stored = store.account(account).await.unwrap().unwrap();
    assert_eq!(stored.password_hash.as_deref(), Some("hash-2"));
    assert!(store.session_account(&hash).await.unwrap().is_none());
    let unknown = store.set_account_password(AccountId::new(), "x".into());
    assert!(matches!(unknown.await, Err(StoreError::NotFound(_))));
}
