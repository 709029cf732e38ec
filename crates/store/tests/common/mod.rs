//! Factories shared by the store tests.
#![allow(dead_code)]

use billpay_domain::{AccountId, KeyId, Kobo, Product};
use billpay_store::*;

/// A new account (unique email) with one API key.
pub async fn account(store: &SharedStore) -> (AccountId, KeyId) {
    let account = store
        .create_account(NewAccount {
            name: "A".into(),
            email: format!("{}@example.com", uuid::Uuid::new_v4()),
            password_hash: None,
        })
        .await
        .unwrap();
    let key = store
        .create_api_key(NewApiKey {
            account_id: account.id,
            name: None,
            key_hash: uuid::Uuid::new_v4().to_string(),
            display_prefix: "bp".into(),
        })
        .await
        .unwrap();
    (account.id, key.id)
}

/// An airtime purchase of `naira` with this reference.
pub fn purchase(account: AccountId, key: KeyId, reference: &str, naira: i64) -> NewPurchase {
    NewPurchase {
        account_id: account,
        key_id: key,
        reference: reference.into(),
        product: Product::Airtime,
        provider: "mtn".into(),
        plan_id: None,
        label: "MTN Airtime".into(),
        recipient: "08031234567".into(),
        amount: Kobo::from_naira(naira),
        details: serde_json::json!({ "n": reference }),
    }
}
