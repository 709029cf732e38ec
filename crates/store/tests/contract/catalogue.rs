use crate::common::store;
use billpay_store::*;

#[tokio::test]
async fn a_new_database_has_the_default_catalogue_at_version_1() {
    let (_db, store) = store().await;
    let (version, catalogue) = store.catalogue().await.unwrap();
    assert_eq!((version, store.catalogue_version().await.unwrap()), (1, 1));
    assert!(!catalogue.providers.is_empty());
}

#[tokio::test]
async fn activation_toggles_one_provider_and_bumps_the_version() {
    let (_db, store) = store().await;
    let (_, before) = store.catalogue().await.unwrap();
    let slug = before.providers[0].slug.clone();
    let what = store.set_catalogue_active(&slug, false).await.unwrap();
    assert_eq!(what, format!("provider {slug}"));
    let (version, after) = store.catalogue().await.unwrap();
    assert_eq!(version, 2);
    assert!(!after.providers[0].active);
    assert_eq!(
        after.providers[1..]
            .iter()
            .map(|p| p.active)
            .collect::<Vec<_>>(),
        before.providers[1..]
            .iter()
            .map(|p| p.active)
            .collect::<Vec<_>>()
    );
    let unknown = store.set_catalogue_active("no-such-thing", true).await;
    assert!(matches!(unknown, Err(StoreError::NotFound(_))));
    assert_eq!(store.catalogue_version().await.unwrap(), 2);
}

#[tokio::test]
async fn a_replaced_catalogue_is_read_back_whole() {
    let (_db, store) = store().await;
    let (_, mut catalogue) = store.catalogue().await.unwrap();
    catalogue.providers[0].name = "Renamed".into();
    store.replace_catalogue(&catalogue).await.unwrap();
    let (version, read) = store.catalogue().await.unwrap();
    assert_eq!(version, 2);
    assert_eq!(
        serde_json::to_value(read).unwrap(),
        serde_json::to_value(&catalogue).unwrap()
    );
}
