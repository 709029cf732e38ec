//! Addresses stored before every address was canonical: the accounts whose
//! addresses reach one mailbox are reported, never merged; a lone one is
//! rewritten in its canonical form.

use crate::common::store;
use billpay_domain::AccountId;
use billpay_store::audit::ONE_ACCOUNT_PER_ADDRESS;
use billpay_store::*;
use std::collections::BTreeSet;

async fn stored_as(store: &SharedStore, email: &str) -> AccountId {
    let new = NewAccount {
        name: "Older".into(),
        email: email.into(),
        password_hash: None,
        kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
    };
    store.create_account(new).await.unwrap().id
}

#[tokio::test]
async fn addresses_that_reach_one_mailbox_are_reported_and_never_merged() {
    let (_db, store) = store().await;
    let mut one_mailbox = BTreeSet::new();
    for email in [
        "ada@example.com",
        "x<ada@example.com>",
        "\"ada\"@example.com",
        "ada@example.com\u{200B}",
    ] {
        one_mailbox.insert(stored_as(&store, email).await.to_string());
    }
    let lone = stored_as(&store, "Émile@Example.com").await;
    stored_as(&store, "bola@example.com").await;
    stored_as(&store, "erased-account").await;

    let collisions = store.email_collisions().await.unwrap();
    assert_eq!(collisions.len(), 1, "{collisions:?}");
    assert_eq!(collisions[0].canonical, "ada@example.com");
    let named: BTreeSet<String> = collisions[0].accounts.iter().map(|a| a.0.clone()).collect();
    assert_eq!(named, one_mailbox);

    let audit = store.audit().await.unwrap();
    let check = audit
        .iter()
        .find(|o| o.name == ONE_ACCOUNT_PER_ADDRESS)
        .unwrap();
    assert_eq!(check.violations.len(), 4, "{check:?}");
    let row = &check.violations[0];
    assert_eq!(row["canonical"].as_deref(), Some("ada@example.com"));
    assert!(row["resolve"].as_deref().unwrap().contains("never merged"));

    // The lone one is stored canonical (found by its small letter on both
    // engines); the four are left to the operator.
    assert_eq!(store.canonicalize_emails().await.unwrap(), 1);
    let found = store.account_by_email("émile@example.com").await.unwrap();
    assert_eq!(
        found.map(|a| (a.id, a.email)),
        Some((lone, "émile@example.com".into()))
    );
    assert_eq!(store.canonicalize_emails().await.unwrap(), 0, "done once");
    let again = store.email_collisions().await.unwrap();
    assert_eq!(again, collisions, "nothing merged");
}

#[tokio::test]
async fn a_clean_database_has_no_shared_address() {
    let (_db, store) = store().await;
    stored_as(&store, "ada@example.com").await;
    stored_as(&store, "bola@example.com").await;
    assert!(store.email_collisions().await.unwrap().is_empty());
    let audit = store.audit().await.unwrap();
    let check = audit.iter().find(|o| o.name == ONE_ACCOUNT_PER_ADDRESS);
    assert!(check.unwrap().passed());
}
