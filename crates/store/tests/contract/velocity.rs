//! Velocity rules and purchases held for review (issue 32, docs/limits.md):
//! checked in the purchase's own transaction on either backend, so
//! concurrent purchases to one recipient never pass its hourly count by one;
//! a held purchase is debited but never claimed until an owner releases it
//! (then claimed as any) or rejects it (failed and refunded exactly once).

use crate::common::{assert_invariant, finalization, funded_account, purchase, store};
use crate::limits::{at_once, kind_of, line, own_limits};
use billpay_domain::{Kobo, TxStatus};
use billpay_store::limits::*;
use billpay_store::work;
use billpay_store::*;
use std::time::Duration;

/// Claims everything due (a long lease), the codes.
async fn claimed(store: &SharedStore) -> Vec<String> {
    let claimed = store
        .claim_fulfilments(1_000, Duration::from_secs(600))
        .await
        .unwrap();
    claimed.into_iter().map(|tx| tx.code).collect()
}

#[tokio::test]
async fn fifty_concurrent_purchases_to_one_recipient_never_pass_its_hourly_count() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 100_000).await;
    let rule = Limits {
        recipient_hourly_count: Some(10),
        recipient_hourly_action: Some(RuleAction::Refuse),
        ..Limits::default()
    };
    own_limits(&store, account, rule).await;
    let (placed, refused) = at_once(&store, (account, key), 50, 10, "08031234567").await;
    assert_eq!((placed.len(), refused.len()), (10, 40));
    assert!(
        refused
            .iter()
            .all(|r| kind_of(r) == LimitKind::RecipientHourlyCount)
    );
    assert!(placed.iter().all(|tx| tx.held_for.is_none()));
    assert_eq!(
        refused[0].to_string(),
        "This purchase is over the hourly limit on purchases to one recipient of 10 purchases: 0 left"
    );
    // Another recipient is not counted against this one.
    let mut other = purchase(account, key, "other-recipient", 10);
    other.recipient = "08039999999".into();
    store.place_purchase(other).await.unwrap();
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(100_000 - 110)
    );
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn over_an_hourly_count_that_holds_purchases_are_placed_but_held() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 100_000).await;
    let rule = Limits {
        recipient_hourly_count: Some(10),
        recipient_hourly_action: Some(RuleAction::Hold),
        ..Limits::default()
    };
    own_limits(&store, account, rule).await;
    let (placed, refused) = at_once(&store, (account, key), 50, 10, "08031234567").await;
    assert!(refused.is_empty(), "{refused:?}");
    let held: Vec<_> = placed.iter().filter(|tx| tx.held_for.is_some()).collect();
    assert_eq!(held.len(), 40);
    assert!(held.iter().all(
        |tx| tx.held_for.as_deref() == Some("recipient_hourly_count")
            && tx.status == TxStatus::Processing
    ));
    // Every one is debited; only the 10 not held are claimed.
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(100_000 - 500)
    );
    assert_eq!(claimed(&store).await.len(), 10);
    assert_eq!(store.held_purchases(100).await.unwrap().len(), 40);
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn the_account_hourly_count_and_a_new_accounts_first_day_cap() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 100_000).await;
    let rules = Limits {
        account_hourly_count: Some(3),
        account_hourly_action: Some(RuleAction::Refuse),
        first_day_value: Some(Kobo::from_naira(1_000)),
        first_day_action: Some(RuleAction::Hold),
        ..Limits::default()
    };
    own_limits(&store, account, rules).await;
    let mut first = purchase(account, key, "a-1", 600);
    first.recipient = "08030000001".into();
    assert_eq!(store.place_purchase(first).await.unwrap().held_for, None);
    // ₦600 + ₦500 passes the first day's ₦1,000: held, not refused.
    let mut second = purchase(account, key, "a-2", 500);
    second.recipient = "08030000002".into();
    let second = store.place_purchase(second).await.unwrap();
    assert_eq!(second.held_for.as_deref(), Some("first_day_value"));
    let mut third = purchase(account, key, "a-3", 1);
    third.recipient = "08030000003".into();
    store.place_purchase(third).await.unwrap();
    // The fourth this hour, to anyone: refused (a refusing rule wins over a holding one).
    let mut fourth = purchase(account, key, "a-4", 1);
    fourth.recipient = "08030000004".into();
    let Err(StoreError::Refused(refusal)) = store.place_purchase(fourth).await else {
        panic!("the fourth purchase of the hour was placed");
    };
    assert_eq!(kind_of(&refusal), LimitKind::AccountHourlyCount);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(100_000 - 1_101)
    );
    // The test twin answers as the purchase would: refused.
    let checked = store
        .check_purchase(account, "a-5", "08030000005", Kobo::from_naira(1))
        .await;
    assert!(matches!(
        checked,
        Err(StoreError::Refused(Refusal::LimitExceeded(_)))
    ));
}

#[tokio::test]
async fn a_released_purchase_is_claimed_and_logged() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 10_000).await;
    let hold_all = Limits {
        account_hourly_count: Some(0),
        ..Limits::default()
    };
    // Unset at the account, the level's action applies (level 2's: hold).
    own_limits(&store, account, hold_all).await;
    let tx = store
        .place_purchase(purchase(account, key, "held-1", 100))
        .await
        .unwrap();
    assert_eq!(tx.held_for.as_deref(), Some("account_hourly_count"));
    assert!(claimed(&store).await.is_empty());
    let log = NewLogEntry {
        subject: tx.code.clone(),
        ..line("transaction.release")
    };
    assert!(
        store
            .write((tx.code.to_string(), log.clone()), |tx, (code, log)| {
                Box::pin(work::release_held_logged(tx, code, log))
            })
            .await
            .unwrap()
    );
    assert!(
        !store
            .write((tx.code.to_string(), log), |tx, (code, log)| Box::pin(
                work::release_held_logged(tx, code, log)
            ))
            .await
            .unwrap()
    );
    assert_eq!(claimed(&store).await, vec![tx.code.clone()]);
    assert!(store.held_purchases(10).await.unwrap().is_empty());
    let logged = store
        .operator_log(LogFilter {
            limit: 50,
            ..LogFilter::default()
        })
        .await
        .unwrap();
    let released: Vec<_> = logged
        .iter()
        .filter(|l| l.action == "transaction.release")
        .collect();
    assert_eq!(released.len(), 1);
    assert_eq!(released[0].before.as_deref(), Some("account_hourly_count"));
}

#[tokio::test]
async fn a_rejected_purchase_is_refunded_exactly_once() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 10_000).await;
    let hold_all = Limits {
        recipient_hourly_count: Some(0),
        recipient_hourly_action: Some(RuleAction::Hold),
        ..Limits::default()
    };
    own_limits(&store, account, hold_all).await;
    let tx = store
        .place_purchase(purchase(account, key, "held-2", 300))
        .await
        .unwrap();
    assert!(tx.held_for.is_some());
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(9_700)
    );
    let reject = || NewLogEntry {
        subject: tx.code.clone(),
        ..line("transaction.reject")
    };
    let fin = || finalization(TxStatus::Failed, false);
    let (first, second) = tokio::join!(
        store.write(
            (tx.code.to_string(), fin(), reject()),
            |tx, (code, fin, log)| Box::pin(work::reject_held_logged(tx, code, fin, log))
        ),
        store.write(
            (tx.code.to_string(), fin(), reject()),
            |tx, (code, fin, log)| Box::pin(work::reject_held_logged(tx, code, fin, log))
        ),
    );
    assert_eq!(
        [first.unwrap(), second.unwrap()]
            .iter()
            .filter(|r| **r)
            .count(),
        1
    );
    // Neither a release nor the worker's claim takes it now.
    let release = line("transaction.release");
    assert!(
        !store
            .write((tx.code.to_string(), release), |tx, (code, log)| Box::pin(
                work::release_held_logged(tx, code, log)
            ))
            .await
            .unwrap()
    );
    assert!(claimed(&store).await.is_empty());
    let after = store
        .transaction(None, TxLookup::Code(tx.code.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.status, TxStatus::Failed);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(10_000)
    );
    let entries = store.ledger_for_transaction(&tx.code).await.unwrap();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_invariant(&store, account).await;
    for outcome in store.audit().await.unwrap() {
        assert!(
            outcome.passed(),
            "{}: {:?}",
            outcome.name,
            outcome.violations
        );
    }
}

#[tokio::test]
async fn over_the_largest_balance_a_purchase_above_level_0s_limits_waits_for_review() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 600_000).await;
    // Over its own largest balance; its own limits allow ₦20,000, level 0's do not.
    let capped = Limits {
        max_balance: Some(Kobo::from_naira(500_000)),
        max_purchase: Some(Kobo::from_naira(50_000)),
        ..Limits::default()
    };
    own_limits(&store, account, capped).await;
    // Within level 0's limits it goes through.
    let within = store
        .place_purchase(purchase(account, key, "ob-0", 5_000))
        .await
        .unwrap();
    assert_eq!(within.held_for, None);
    let held = store
        .place_purchase(purchase(account, key, "ob-1", 20_000))
        .await
        .unwrap();
    assert_eq!(held.held_for.as_deref(), Some(OVER_BALANCE));
    // Above the account's own limits it is refused.
    let refused = store
        .place_purchase(purchase(account, key, "ob-3", 60_000))
        .await;
    let Err(StoreError::Refused(Refusal::LimitExceeded(limit))) = refused else {
        panic!("a purchase over the account's own limit was placed: {refused:?}");
    };
    assert_eq!(limit.kind, LimitKind::MaxPurchase);
    // Set to refuse, the same purchase is refused as before velocity rules.
    let refusing = Limits {
        over_balance_action: Some(RuleAction::Refuse),
        ..capped
    };
    own_limits(&store, account, refusing).await;
    let refused = store
        .place_purchase(purchase(account, key, "ob-4", 20_000))
        .await;
    assert!(
        matches!(&refused, Err(StoreError::Refused(Refusal::LimitExceeded(l))) if l.held_to_level0),
        "{refused:?}"
    );
}

#[tokio::test]
async fn velocity_settings_are_stored_for_levels_and_accounts() {
    let (_db, store) = store().await;
    let levels = store.level_limits().await.unwrap();
    assert_eq!(levels[0].limits.recipient_hourly_count, Some(10));
    assert_eq!(levels[0].limits.account_hourly_count, Some(30));
    assert_eq!(
        levels[0].limits.first_day_value,
        Some(Kobo::from_naira(20_000))
    );
    assert_eq!(
        levels[0].limits.recipient_hourly_action,
        Some(RuleAction::Hold)
    );
    assert_eq!(levels[2].limits.recipient_hourly_count, None);
    let mut limits = levels[1].limits;
    limits.account_hourly_count = Some(7);
    limits.account_hourly_action = Some(RuleAction::Refuse);
    let changed = store
        .write(
            (1, limits, line("limits.level")),
            |tx, (level, limits, log)| {
                Box::pin(work::set_level_limits_logged(tx, *level, limits, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(changed.limits, limits);
    let (account, _) = funded_account(&store, 10).await;
    let own = Limits {
        first_day_value: Some(Kobo::from_naira(5)),
        first_day_action: Some(RuleAction::Refuse),
        ..Limits::default()
    };
    let view = store
        .write(
            (account, own, line("limits.account")),
            |tx, (account, limits, log)| {
                Box::pin(work::set_account_limits_logged(tx, *account, limits, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(view.overrides, own);
    assert_eq!(view.limits.first_day_value, Some(Kobo::from_naira(5)));
}
