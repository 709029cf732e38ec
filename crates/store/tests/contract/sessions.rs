use crate::common::{new_account, signed_in, store};
use billpay_store::clock::now_ms;

#[tokio::test]
async fn an_expired_session_is_not_found() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    store
        .create_session("expired", account, now_ms() - 1)
        .await
        .unwrap();
    assert!(store.session_account("expired").await.unwrap().is_none());
    assert!(
        store
            .session_account("never-issued")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn a_session_answers_its_account_in_one_read() {
    let (_db, store) = store().await;
    let (account, hash) = signed_in(&store).await;
    let found = store.session_account(&hash).await.unwrap().unwrap();
    assert_eq!(found.id, account);
    store
        .create_session("expired-too", account, now_ms() - 1)
        .await
        .unwrap();
    assert!(
        store
            .session_account("expired-too")
            .await
            .unwrap()
            .is_none()
    );
    store.delete_session(&hash).await.unwrap();
    assert!(store.session_account(&hash).await.unwrap().is_none());
}
