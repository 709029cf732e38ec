use crate::common::{join_all, new_account, raw_sql, store};
use billpay_domain::AccountId;
use billpay_domain::transaction_pin::MAX_FAILURES;
use billpay_store::work;
use billpay_store::{NewApiKey, PinTry, SharedStore};

fn shop_key(account: AccountId) -> NewApiKey {
    NewApiKey {
        account_id: account,
        name: Some("Shop".into()),
        key_hash: uuid::Uuid::new_v4().to_string(),
        display_prefix: "bp_live_shop".into(),
        announce: false,
    }
}

async fn with_pin(store: &SharedStore) -> AccountId {
    let account = new_account(store).await.id;
    store
        .set_transaction_pin(account, "hash-1".into(), shop_key(account))
        .await
        .unwrap();
    account
}

/// (turns given, busy answers) among `taken`.
fn tries(taken: &[PinTry]) -> (usize, usize) {
    let checks = taken
        .iter()
        .filter(|t| matches!(t, PinTry::Check { .. }))
        .count();
    let busy = taken.iter().filter(|t| matches!(t, PinTry::Busy)).count();
    (checks, busy)
}

/// One wrong PIN: a turn taken and answered as a failure.
async fn wrong(store: &SharedStore, account: AccountId) -> PinTry {
    let taken = store.take_pin_try(account).await.unwrap();
    if matches!(taken, PinTry::Check { .. }) {
        store.pin_failed(account).await.unwrap();
    }
    taken
}

#[tokio::test]
async fn the_first_pin_creates_the_shop_key_and_a_new_pin_keeps_it() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    assert_eq!(store.take_pin_try(account).await.unwrap(), PinTry::NotSet);
    assert_eq!(store.transaction_pin(account).await.unwrap(), None);
    let key = store
        .set_transaction_pin(account, "hash-1".into(), shop_key(account))
        .await
        .unwrap();
    let stored = store.api_key(key).await.unwrap().expect("the shop key");
    assert_eq!(stored.account_id, account);
    let again = store
        .set_transaction_pin(account, "hash-2".into(), shop_key(account))
        .await
        .unwrap();
    assert_eq!(again, key, "a new PIN keeps the key");
    assert_eq!(store.api_keys(account).await.unwrap().len(), 1);
    match store.take_pin_try(account).await.unwrap() {
        PinTry::Check { pin_hash, shop_key } => {
            assert_eq!((pin_hash.as_str(), shop_key), ("hash-2", key));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn five_wrong_pins_in_a_row_lock_and_a_right_pin_ends_the_run() {
    let (_db, store) = store().await;
    let account = with_pin(&store).await;
    for _ in 0..MAX_FAILURES - 1 {
        wrong(&store, account).await;
    }
    store.take_pin_try(account).await.unwrap();
    store.pin_matched(account).await.unwrap();
    let state = store.transaction_pin(account).await.unwrap().unwrap();
    assert_eq!((state.failures, state.locked_until_ms), (0, 0));
    for n in 1..=MAX_FAILURES {
        assert!(matches!(
            store.take_pin_try(account).await.unwrap(),
            PinTry::Check { .. }
        ));
        let failure = store.pin_failed(account).await.unwrap();
        assert_eq!(failure.failures, n);
        assert_eq!(failure.locked_until_ms > 0, n == MAX_FAILURES, "try {n}");
    }
    let now = billpay_store::clock::now_ms();
    match store.take_pin_try(account).await.unwrap() {
        PinTry::Locked { until_ms } => {
            let minutes = (until_ms - now) / 60_000;
            assert!((29..=30).contains(&minutes), "{minutes} minutes");
        }
        other => panic!("{other:?}"),
    }
    // a new PIN (set with the password) ends the lock
    store
        .set_transaction_pin(account, "hash-3".into(), shop_key(account))
        .await
        .unwrap();
    assert!(matches!(
        store.take_pin_try(account).await.unwrap(),
        PinTry::Check { .. }
    ));
}

/// Right PINs are never counted as wrong, however many are checked in a row
/// or at once (issue 45: five right PINs in flight used to set the lock).
#[tokio::test]
async fn right_pins_in_flight_at_once_never_lock() {
    let (_db, store) = store().await;
    let account = with_pin(&store).await;
    for _round in 0..4 {
        let tasks = (0..MAX_FAILURES)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { store.take_pin_try(account).await.unwrap() })
            })
            .collect();
        let taken = join_all(tasks).await;
        assert_eq!(tries(&taken), (MAX_FAILURES as usize, 0), "{taken:?}");
        // a sixth at once waits its turn: it is neither checked nor locked
        assert_eq!(store.take_pin_try(account).await.unwrap(), PinTry::Busy);
        for _ in 0..MAX_FAILURES {
            store.pin_matched(account).await.unwrap();
        }
    }
    let state = store.transaction_pin(account).await.unwrap().unwrap();
    assert_eq!((state.failures, state.locked_until_ms), (0, 0));
}

#[tokio::test]
async fn an_expired_lock_starts_a_new_run() {
    let (db, store) = store().await;
    let account = with_pin(&store).await;
    for _ in 0..MAX_FAILURES {
        wrong(&store, account).await;
    }
    assert!(matches!(
        store.take_pin_try(account).await.unwrap(),
        PinTry::Locked { .. }
    ));
    raw_sql(&db, "UPDATE transaction_pins SET locked_until = 1").await;
    assert!(matches!(wrong(&store, account).await, PinTry::Check { .. }));
    let state = store.transaction_pin(account).await.unwrap().unwrap();
    assert_eq!(state.failures, 1, "a new run: one wrong PIN so far");
}

/// A turn taken by a process that died before its answer is forgotten
/// after a minute: it does not hold the account's tries for good.
#[tokio::test]
async fn a_turn_never_answered_is_forgotten_after_a_minute() {
    let (db, store) = store().await;
    let account = with_pin(&store).await;
    for _ in 0..MAX_FAILURES {
        store.take_pin_try(account).await.unwrap();
    }
    assert_eq!(store.take_pin_try(account).await.unwrap(), PinTry::Busy);
    let old = billpay_store::clock::now_ms() - 61_000;
    raw_sql(
        &db,
        &format!("UPDATE transaction_pins SET checking_since = {old}"),
    )
    .await;
    assert!(matches!(
        store.take_pin_try(account).await.unwrap(),
        PinTry::Check { .. }
    ));
}

#[tokio::test]
async fn concurrent_wrong_pins_check_at_most_five_then_lock() {
    let (_db, store) = store().await;
    let account = with_pin(&store).await;
    let tasks = (0..20)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.take_pin_try(account).await.unwrap() })
        })
        .collect();
    let taken = join_all(tasks).await;
    assert_eq!(
        tries(&taken),
        (MAX_FAILURES as usize, 20 - MAX_FAILURES as usize)
    );
    for _ in 0..MAX_FAILURES {
        store.pin_failed(account).await.unwrap();
    }
    let state = store.transaction_pin(account).await.unwrap().unwrap();
    assert_eq!(state.failures, MAX_FAILURES);
    assert!(state.locked_until_ms > 0);
    assert!(matches!(
        store.take_pin_try(account).await.unwrap(),
        PinTry::Locked { .. }
    ));
}

#[tokio::test]
async fn one_accounts_tries_do_not_lock_another() {
    let (_db, store) = store().await;
    let (a, b) = (with_pin(&store).await, with_pin(&store).await);
    for _ in 0..=MAX_FAILURES {
        wrong(&store, a).await;
    }
    assert!(matches!(
        store.take_pin_try(b).await.unwrap(),
        PinTry::Check { .. }
    ));
}

#[tokio::test]
async fn a_revoked_shop_key_is_replaced_by_the_next_pin() {
    let (_db, store) = store().await;
    let account = new_account(&store).await.id;
    let key = store
        .set_transaction_pin(account, "hash-1".into(), shop_key(account))
        .await
        .unwrap();
    let revoked = billpay_store::KeyChange::Status(billpay_store::KeyStatus::Revoked);
    store.update_api_key(key, revoked).await.unwrap();
    let new = store
        .set_transaction_pin(account, "hash-2".into(), shop_key(account))
        .await
        .unwrap();
    assert_ne!(new, key, "a new shop key");
    let state = store.transaction_pin(account).await.unwrap().unwrap();
    assert_eq!(state.shop_key, new);
    let stored = store.api_key(new).await.unwrap().unwrap();
    assert_eq!(stored.status, billpay_store::KeyStatus::Active);
    // a suspended one is the operator's pause: kept
    let suspended = billpay_store::KeyChange::Status(billpay_store::KeyStatus::Suspended);
    store.update_api_key(new, suspended).await.unwrap();
    let kept = store
        .set_transaction_pin(account, "hash-3".into(), shop_key(account))
        .await
        .unwrap();
    assert_eq!(kept, new);
}

fn clear_line(account: AccountId) -> billpay_store::NewLogEntry {
    billpay_store::NewLogEntry {
        actor: "cli".into(),
        action: "account.pin_lock_cleared".into(),
        subject: account.to_string(),
        ..billpay_store::NewLogEntry::default()
    }
}

async fn cleared_lines(store: &SharedStore, account: AccountId) -> usize {
    let filter = billpay_store::LogFilter {
        subject: Some(account.to_string()),
        limit: 50,
        ..billpay_store::LogFilter::default()
    };
    let log = store.operator_log(filter).await.unwrap();
    log.iter()
        .filter(|l| l.action == "account.pin_lock_cleared")
        .count()
}

#[tokio::test]
async fn an_operator_clears_a_lock_once_with_its_log_line() {
    let (_db, store) = store().await;
    let account = with_pin(&store).await;
    let not_locked = store
        .write((account, clear_line(account)), |tx, (account, log)| {
            Box::pin(work::clear_pin_lock_logged(tx, *account, log))
        })
        .await
        .unwrap();
    assert!(!not_locked, "no lock on: nothing to clear");
    assert_eq!(cleared_lines(&store, account).await, 0, "and no line");
    for _ in 0..MAX_FAILURES {
        wrong(&store, account).await;
    }
    assert!(matches!(
        store.take_pin_try(account).await.unwrap(),
        PinTry::Locked { .. }
    ));
    let cleared = store
        .write((account, clear_line(account)), |tx, (account, log)| {
            Box::pin(work::clear_pin_lock_logged(tx, *account, log))
        })
        .await
        .unwrap();
    assert!(cleared);
    assert_eq!(cleared_lines(&store, account).await, 1);
    let state = store.transaction_pin(account).await.unwrap().unwrap();
    assert_eq!((state.failures, state.locked_until_ms), (0, 0));
    assert!(matches!(
        store.take_pin_try(account).await.unwrap(),
        PinTry::Check { .. }
    ));
}
