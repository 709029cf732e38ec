use crate::common::{new_account, signed_in, store};
use billpay_store::clock::now_ms;
use billpay_store::{DeveloperAccess, work};

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

#[tokio::test]
async fn a_session_has_developer_access_through_an_api_tier() {
    let (_db, store) = store().await;
    let (account, hash) = signed_in(&store).await;
    store
        .set_own_developer_access(account, false)
        .await
        .unwrap();
    store.create_tier("api").await.unwrap();
    store.set_account_tier(account, Some("api")).await.unwrap();
    let access = |store: &billpay_store::SharedStore| {
        let (store, hash) = (store.clone(), hash.clone());
        async move {
            let found = store.session_account(&hash).await.unwrap().unwrap();
            found.developer_access
        }
    };
    assert_eq!(access(&store).await, None, "not an API tier yet");
    assert!(store.developer_tiers().await.unwrap().is_empty());
    let log = crate::limits::line("pricing.tier_developer_access");
    store
        .write(log, |tx, log| {
            Box::pin(work::set_tier_developer_access_logged(tx, "api", true, log))
        })
        .await
        .unwrap();
    assert_eq!(access(&store).await, Some(DeveloperAccess::Tier));
    assert_eq!(store.developer_tiers().await.unwrap(), ["api"]);
    store.set_own_developer_access(account, true).await.unwrap();
    assert_eq!(
        access(&store).await,
        Some(DeveloperAccess::Myself),
        "the account's own switch first"
    );
    store
        .set_own_developer_access(account, false)
        .await
        .unwrap();
    store.set_account_tier(account, None).await.unwrap();
    assert_eq!(access(&store).await, None, "off the tier");
}
