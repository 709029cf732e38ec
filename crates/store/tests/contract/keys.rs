use crate::common::{new_account, store};
use billpay_domain::keys::hash_api_key;
use billpay_domain::sealed::SecretBox;
use billpay_domain::{AccountId, KeyId};
use billpay_store::issue::{issue_api_key, issue_webhook_secret};
use billpay_store::*;

#[tokio::test]
async fn an_issued_key_authenticates_by_its_hash_only() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let issued = issue_api_key(store.as_ref(), account, Some("main".into()))
        .await
        .unwrap();
    let key = issued.record;
    assert_eq!((key.account_id, key.status), (account, KeyStatus::Active));
    assert!(issued.secret.starts_with(&key.display_prefix));
    let (found, status) = store
        .authenticate(&hash_api_key(&issued.secret))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((found.id, status), (key.id, AccountStatus::Active));
    assert!(store.authenticate(&issued.secret).await.unwrap().is_none());
    assert_eq!(
        store
            .api_key(key.id)
            .await
            .unwrap()
            .unwrap()
            .name
            .as_deref(),
        Some("main")
    );
    let listed = store.api_keys(account).await.unwrap();
    assert_eq!(listed.iter().map(|k| k.id).collect::<Vec<_>>(), [key.id]);
    assert!(store.api_key(KeyId::new()).await.unwrap().is_none());
}

#[tokio::test]
async fn a_key_needs_an_account() {
    let (_db, store) = store().await;
    let orphan = issue_api_key(store.as_ref(), AccountId::new(), None).await;
    assert!(matches!(orphan, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn a_key_changes_until_it_is_revoked() {
    let (_db, store) = store().await;
    let id = new_key(&store).await;
    let limit = RateLimit {
        per_second: 5,
        burst: 10,
    };
    let changes = [
        KeyChange::RateLimit(Some(limit)),
        KeyChange::WebhookUrl(Some("https://example.com/hook".into())),
        KeyChange::WebhookRetries(true),
        KeyChange::Status(KeyStatus::Suspended),
    ];
    for change in changes {
        store.update_api_key(id, change).await.unwrap();
    }
    let key = store.api_key(id).await.unwrap().unwrap();
    assert_eq!(key.rate_limit, Some(limit));
    assert_eq!(key.webhook_url.as_deref(), Some("https://example.com/hook"));
    assert!(key.webhook_retries);
    assert_eq!(key.status, KeyStatus::Suspended);

    let revoked = store.update_api_key(id, KeyChange::Status(KeyStatus::Revoked));
    assert_eq!(revoked.await.unwrap().status, KeyStatus::Revoked);
    let reactivated = store.update_api_key(id, KeyChange::Status(KeyStatus::Active));
    assert!(matches!(reactivated.await, Err(StoreError::KeyRevoked)));
    assert_eq!(
        store.api_key(id).await.unwrap().unwrap().status,
        KeyStatus::Revoked
    );
    let unknown = store.update_api_key(KeyId::new(), KeyChange::WebhookRetries(false));
    assert!(matches!(unknown.await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn a_webhook_secret_is_stored_sealed() {
    let (_db, store) = store().await;
    let id = new_key(&store).await;
    let secrets = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
    let issued = issue_webhook_secret(store.as_ref(), id, &secrets)
        .await
        .unwrap();
    assert!(issued.secret.starts_with("whsec_"));
    let sealed = store
        .api_key(id)
        .await
        .unwrap()
        .unwrap()
        .webhook_secret_sealed
        .unwrap();
    assert_ne!(sealed, issued.secret);
    assert_eq!(secrets.open(&sealed).unwrap(), issued.secret);
}

#[tokio::test]
async fn a_touch_stamps_the_last_use() {
    let (_db, store) = store().await;
    let id = new_key(&store).await;
    let last_use = || async { store.api_key(id).await.unwrap().unwrap().last_used_at };
    assert!(last_use().await.is_none());
    store.touch_api_key(id).await.unwrap();
    assert!(last_use().await.is_some());
}

/// A key of a new account.
async fn new_key(store: &SharedStore) -> KeyId {
    let account = new_account(store).await.id;
    let issued = issue_api_key(store.as_ref(), account, None).await.unwrap();
    issued.record.id
}
