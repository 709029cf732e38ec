//! The operator's actions on a real SQLite store: their rules hold whoever
//! calls them (the CLI's integration tests cover the same through the binary).

use billpay_domain::{Kobo, Product, PurchaseDetails, TxStatus};
use billpay_operations::catalogue::{Sellable, set_on_sale};
use billpay_operations::keys::{self, KeyUpdate};
use billpay_operations::transactions::{Resolution, TxName, find, resolve};
use billpay_operations::{Actor, OpsError, accounts, wallets};
use billpay_store::{Account, ApiKey, NewPurchase, SharedStore, Store};

async fn store() -> (tempfile::TempDir, SharedStore) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    (dir, billpay_store::open(&url).await.unwrap())
}

/// An account funded with ₦5,000, and a key of it.
async fn customer(store: &dyn Store) -> (Account, ApiKey) {
    let account = accounts::create(store, Actor::Cli, "Ada", "ada@example.com", None)
        .await
        .unwrap();
    let five_thousand = Kobo::from_naira(5000);
    wallets::credit(
        store,
        Actor::Cli,
        account.id,
        five_thousand,
        "fund-1",
        Some("test"),
    )
    .await
    .unwrap();
    let key = keys::create(store, Actor::Cli, account.id, None)
        .await
        .unwrap();
    (account, key.record)
}

/// A processing ₦1,000 airtime purchase; its reference_code.
async fn processing(store: &dyn Store, account: &Account, key: &ApiKey, reference: &str) -> String {
    let new = NewPurchase {
        account_id: account.id,
        key_id: key.id,
        reference: reference.into(),
        product: Product::Airtime,
        provider: "mtn".into(),
        plan_id: None,
        label: "MTN Airtime".into(),
        recipient: "08031234567".into(),
        amount: Kobo::from_naira(1000),
        face_value: Kobo::from_naira(1000),
        tier: None,
        details: PurchaseDetails {
            phone: Some("08031234567".into()),
            ..PurchaseDetails::default()
        },
    };
    store.place_purchase(new).await.unwrap().code
}

fn refused(error: OpsError) -> String {
    match error {
        OpsError::Refused(why) => why,
        other => panic!("not a refusal: {other:?}"),
    }
}

fn invalid_fields(error: OpsError) -> &'static [&'static str] {
    match error {
        OpsError::Invalid(invalid) => invalid.fields,
        other => panic!("not an invalid input: {other:?}"),
    }
}

#[tokio::test]
async fn a_purchase_is_resolved_once_and_failed_refunds_once() {
    let (_dir, store) = store().await;
    let store = store.as_ref();
    let (account, key) = customer(store).await;
    let code = processing(store, &account, &key, "order-0001").await;
    assert_eq!(
        store.balance(account.id).await.unwrap(),
        Kobo::from_naira(4000)
    );

    // By the client's reference as well as by code.
    let why = Some("VTpass says it was not sold");
    let by_reference = TxName::any("order-0001");
    let failed = resolve(store, Actor::Cli, by_reference, Resolution::Failed, why).await;
    assert_eq!(failed.unwrap(), (code.clone(), TxStatus::Failed));
    assert_eq!(
        store.balance(account.id).await.unwrap(),
        Kobo::from_naira(5000)
    );

    for resolution in [Resolution::Successful, Resolution::Failed] {
        let again = resolve(store, Actor::Cli, TxName::any(&code), resolution, None).await;
        let why = refused(again.unwrap_err());
        assert!(why.contains("is already failed"), "{why}");
    }
    let balance = store.balance(account.id).await.unwrap();
    assert_eq!(balance, Kobo::from_naira(5000), "refunded once");
    assert_eq!(balance, store.ledger_sum(account.id).await.unwrap());

    let nothing = TxName::any("no-such-order");
    let nothing = resolve(store, Actor::Cli, nothing, Resolution::Failed, None).await;
    assert!(matches!(nothing, Err(OpsError::NotFound(_))));
}

#[tokio::test]
async fn a_reference_two_accounts_used_is_refused_listing_both_until_the_account_is_named() {
    let (_dir, store) = store().await;
    let store = store.as_ref();
    let (ada, ada_key) = customer(store).await;
    let bola = accounts::create(store, Actor::Cli, "Bola", "bola@example.com", None)
        .await
        .unwrap();
    wallets::credit(
        store,
        Actor::Cli,
        bola.id,
        Kobo::from_naira(5000),
        "f",
        None,
    )
    .await
    .unwrap();
    let bola_key = keys::create(store, Actor::Cli, bola.id, None)
        .await
        .unwrap();
    let ada_code = processing(store, &ada, &ada_key, "shared-7").await;
    let bola_code = processing(store, &bola, &bola_key.record, "shared-7").await;

    for attempt in [
        find(store, TxName::any("shared-7")).await.map(|tx| tx.code),
        resolve(
            store,
            Actor::Cli,
            TxName::any("shared-7"),
            Resolution::Failed,
            None,
        )
        .await
        .map(|(code, _)| code),
    ] {
        let why = refused(attempt.unwrap_err());
        assert!(why.contains("more than one account"), "{why}");
        for named in [&ada_code, &bola_code, "Ada", "Bola"] {
            assert!(why.contains(named), "{named} not in: {why}");
        }
    }
    assert_eq!(
        store.balance(bola.id).await.unwrap(),
        Kobo::from_naira(4000),
        "nothing changed"
    );

    let bolas = TxName {
        reference_or_code: "shared-7",
        account: Some(bola.id),
    };
    assert_eq!(find(store, bolas).await.unwrap().code, bola_code);
    let (code, status) = resolve(store, Actor::Cli, bolas, Resolution::Failed, None)
        .await
        .unwrap();
    assert_eq!((code, status), (bola_code.clone(), TxStatus::Failed));
    assert_eq!(
        store.balance(bola.id).await.unwrap(),
        Kobo::from_naira(5000)
    );
    assert_eq!(
        store.balance(ada.id).await.unwrap(),
        Kobo::from_naira(4000),
        "Ada's is untouched"
    );
    // A code is always one transaction; another account's code is not found.
    assert_eq!(
        find(store, TxName::any(&ada_code)).await.unwrap().code,
        ada_code
    );
    let wrong_owner = TxName {
        reference_or_code: &ada_code,
        account: Some(bola.id),
    };
    assert!(matches!(
        find(store, wrong_owner).await,
        Err(OpsError::NotFound(_))
    ));
}

#[tokio::test]
async fn bad_input_is_refused_naming_it_and_changes_nothing() {
    let (_dir, store) = store().await;
    let store = store.as_ref();
    let (account, key) = customer(store).await;
    let credit = |amount: i64, reference: &'static str| {
        wallets::credit(store, Actor::Cli, account.id, Kobo(amount), reference, None)
    };
    assert_eq!(
        invalid_fields(credit(0, "fund-2").await.unwrap_err()),
        ["amount"]
    );
    assert_eq!(
        invalid_fields(credit(-100, "fund-2").await.unwrap_err()),
        ["amount"]
    );
    assert_eq!(
        invalid_fields(credit(100, "  ").await.unwrap_err()),
        ["reference"]
    );
    let repeat = credit(100, "fund-1").await.unwrap();
    assert!(!repeat.applied, "a reference counts once");
    assert_eq!(
        store.balance(account.id).await.unwrap(),
        Kobo::from_naira(5000)
    );

    let no_limit = KeyUpdate::RateLimit {
        per_second: 0,
        burst: 10,
    };
    let error = keys::update(store, Actor::Cli, key.id, no_limit)
        .await
        .unwrap_err();
    assert_eq!(invalid_fields(error), ["per_second", "burst"]);
    let ftp = KeyUpdate::WebhookUrl("ftp://example.com/hook".into());
    let error = keys::update(store, Actor::Cli, key.id, ftp)
        .await
        .unwrap_err();
    assert!(matches!(error, OpsError::WebhookUrl(_)), "{error:?}");
    let email = accounts::create(store, Actor::Cli, "B", "not-an-email", None).await;
    assert_eq!(invalid_fields(email.unwrap_err()), ["email"]);

    let (version, _) = store.catalogue().await.unwrap();
    let plan_named_mtn = set_on_sale(store, Actor::Cli, Sellable::Plan, "mtn", false).await;
    assert!(matches!(plan_named_mtn, Err(OpsError::NotFound(_))));
    let now = store.catalogue().await.unwrap().0;
    assert_eq!(now, version, "the catalogue is as it was");
}
