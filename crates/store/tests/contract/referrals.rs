//! Referrals: a commission earned in the finalize that makes a referee's
//! purchase successful, taken back by its reversal, the bonus balance moved
//! to the wallet once per reference, the self-referral checks and the audit.

use crate::common::{account, finalization, join_all, purchase, store};
use billpay_domain::{AccountId, KeyId, Kobo, Product, TxStatus};
use billpay_store::*;

fn line(action: &str) -> NewLogEntry {
    NewLogEntry {
        actor: "cli".into(),
        action: action.into(),
        subject: "referrals".into(),
        ..NewLogEntry::default()
    }
}

async fn set_rate(store: &SharedStore, product: Product, rate: Option<(i64, Option<i64>)>) {
    store
        .write(
            (product, rate, line("referrals.set")),
            |tx, (product, rate, line)| {
                Box::pin(work::set_referral_rate_logged(tx, *product, *rate, line))
            },
        )
        .await
        .unwrap();
}

async fn code_of(store: &SharedStore, account: AccountId) -> String {
    store
        .write(account, |tx, account| {
            Box::pin(work::ensure_referral_code(tx, *account))
        })
        .await
        .unwrap()
}

async fn refer(store: &SharedStore, referee: AccountId, code: &str) -> Option<Referral> {
    store
        .write((referee, code.to_owned()), |tx, (referee, code)| {
            Box::pin(work::refer(tx, *referee, code))
        })
        .await
        .unwrap()
}

async fn withdraw(
    store: &SharedStore,
    account: AccountId,
    amount: i64,
    reference: &str,
) -> Withdrawal {
    store
        .write(
            (account, reference.to_owned()),
            move |tx, (account, reference)| {
                Box::pin(work::withdraw_bonus(tx, *account, Kobo(amount), reference))
            },
        )
        .await
        .unwrap()
}

/// A referrer and a funded referee (with a key) through the referrer's code.
async fn pair(store: &SharedStore) -> (AccountId, AccountId, KeyId) {
    let (referrer, _) = account(store).await;
    let (referee, key) = account(store).await;
    store
        .credit(referee, Kobo::from_naira(1_000), "fund")
        .await
        .unwrap();
    let code = code_of(store, referrer).await;
    let referral = refer(store, referee, &code.to_lowercase()).await.unwrap();
    assert_eq!(referral.referrer_id, referrer);
    assert!(referral.earns(), "{referral:?}");
    (referrer, referee, key)
}

async fn bought(
    store: &SharedStore,
    account: AccountId,
    key: KeyId,
    reference: &str,
    status: TxStatus,
) -> String {
    let placed = store
        .place_purchase(purchase(account, key, reference, 100))
        .await
        .unwrap();
    assert!(
        store
            .finalize(&placed.code, finalization(status, false))
            .await
            .unwrap()
    );
    placed.code
}

async fn audit_passes(store: &SharedStore) {
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
async fn a_successful_purchase_earns_the_exact_percent_once_and_a_reversal_takes_it_back() {
    let (_db, store) = store().await;
    let (referrer, referee, key) = pair(&store).await;

    // Off by default: nothing earned.
    let code = bought(&store, referee, key, "before-rate", TxStatus::Successful).await;
    assert_eq!(store.commission_of(&code).await.unwrap(), None);

    set_rate(&store, Product::Airtime, Some((150, None))).await;
    let code = bought(&store, referee, key, "ok", TxStatus::Successful).await;
    let commission = store.commission_of(&code).await.unwrap().unwrap();
    // 1.5 % of ₦100 (10 000 kobo).
    assert_eq!(commission.amount, Kobo(150));
    assert_eq!(commission.referrer_id, referrer);
    assert_eq!(store.bonus_balance(referrer).await.unwrap(), Kobo(150));
    // The finalize again changes nothing, earns nothing again.
    assert!(
        !store
            .finalize(&code, finalization(TxStatus::Successful, false))
            .await
            .unwrap()
    );
    assert_eq!(store.bonus_balance(referrer).await.unwrap(), Kobo(150));

    // A failed purchase earns nothing.
    let failed = bought(&store, referee, key, "failed", TxStatus::Failed).await;
    assert_eq!(store.commission_of(&failed).await.unwrap(), None);

    // Another product without a rate earns nothing.
    assert_eq!(
        store.referral_totals(referrer).await.unwrap().earned,
        Kobo(150)
    );
    audit_passes(&store).await;

    // The supplier reverses it: taken back in the same finalize.
    assert!(
        store
            .finalize(&code, finalization(TxStatus::Failed, true))
            .await
            .unwrap()
    );
    assert_eq!(store.bonus_balance(referrer).await.unwrap(), Kobo::ZERO);
    let commission = store.commission_of(&code).await.unwrap().unwrap();
    assert!(commission.reversed_at.is_some());
    let entries = store.bonus_entries(referrer, 10).await.unwrap();
    let kinds: Vec<_> = entries
        .iter()
        .map(|e| (e.kind.as_str(), e.amount.0, e.balance_after.0))
        .collect();
    assert_eq!(kinds, [("reversal", -150, 0), ("commission", 150, 150)]);
    audit_passes(&store).await;
    // The referee's own bonus balance never moved.
    assert_eq!(store.bonus_balance(referee).await.unwrap(), Kobo::ZERO);
}

#[tokio::test]
async fn a_take_back_after_the_bonus_was_moved_is_owed_and_the_wallet_is_not_touched() {
    let (_db, store) = store().await;
    let (referrer, referee, key) = pair(&store).await;
    set_rate(&store, Product::Airtime, Some((1_000, None))).await;
    let code = bought(&store, referee, key, "ten", TxStatus::Successful).await;
    assert_eq!(store.bonus_balance(referrer).await.unwrap(), Kobo(1_000));
    let moved = withdraw(&store, referrer, 1_000, "w-1").await;
    assert_eq!(
        moved,
        Withdrawal::Moved {
            bonus: Kobo::ZERO,
            wallet: Kobo(1_000)
        }
    );
    assert!(
        store
            .finalize(&code, finalization(TxStatus::Failed, true))
            .await
            .unwrap()
    );
    assert_eq!(store.bonus_balance(referrer).await.unwrap(), Kobo(-1_000));
    assert_eq!(
        store.balance(referrer).await.unwrap(),
        Kobo(1_000),
        "the wallet keeps it"
    );
    // Nothing more can be moved while it is owed.
    assert_eq!(
        withdraw(&store, referrer, 1, "w-2").await,
        Withdrawal::MoreThanBalance {
            balance: Kobo(-1_000)
        }
    );
    audit_passes(&store).await;
}

#[tokio::test]
async fn concurrent_moves_with_one_reference_move_once_and_another_amount_is_refused() {
    let (_db, store) = store().await;
    let (referrer, referee, key) = pair(&store).await;
    set_rate(&store, Product::Airtime, Some((10_000, None))).await;
    bought(&store, referee, key, "all", TxStatus::Successful).await;
    assert_eq!(store.bonus_balance(referrer).await.unwrap(), Kobo(10_000));
    let tasks = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { withdraw(&store, referrer, 4_000, "same").await })
        })
        .collect();
    let outcomes = join_all(tasks).await;
    let moved = outcomes
        .iter()
        .filter(|o| matches!(o, Withdrawal::Moved { .. }))
        .count();
    assert_eq!(moved, 1, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Withdrawal::Moved { .. } | Withdrawal::Repeated { .. }))
    );
    assert_eq!(store.bonus_balance(referrer).await.unwrap(), Kobo(6_000));
    assert_eq!(store.balance(referrer).await.unwrap(), Kobo(4_000));
    assert_eq!(
        withdraw(&store, referrer, 5_000, "same").await,
        Withdrawal::OtherAmount { moved: Kobo(4_000) }
    );
    assert_eq!(
        withdraw(&store, referrer, 7_000, "more").await,
        Withdrawal::MoreThanBalance {
            balance: Kobo(6_000)
        }
    );
    let settings = ReferralSettings {
        first_funding_bonus: None,
        min_withdrawal: Kobo(5_000),
    };
    store
        .write(
            (settings, line("referrals.settings")),
            |tx, (settings, line)| Box::pin(work::set_referral_settings_logged(tx, settings, line)),
        )
        .await
        .unwrap();
    assert_eq!(
        withdraw(&store, referrer, 4_999, "small").await,
        Withdrawal::BelowMinimum {
            minimum: Kobo(5_000)
        }
    );
    let nothing = store
        .write(referrer, |tx, referrer| {
            Box::pin(work::withdraw_bonus(tx, *referrer, Kobo(0), "nothing"))
        })
        .await;
    assert!(
        matches!(nothing, Err(StoreError::Invalid(_))),
        "{nothing:?}"
    );
    audit_passes(&store).await;
}

#[tokio::test]
async fn a_referee_with_the_referrers_phone_or_mailbox_earns_nothing() {
    let (_db, store) = store().await;
    set_rate(&store, Product::Airtime, Some((150, None))).await;
    let (referrer, _) = account(&store).await;
    let (referee, key) = account(&store).await;
    store
        .credit(referee, Kobo::from_naira(1_000), "fund")
        .await
        .unwrap();
    store
        .update_profile(referrer, "A".into(), Some("2348031234567".into()))
        .await
        .unwrap();
    let code = code_of(&store, referrer).await;
    let referral = refer(&store, referee, &code).await.unwrap();
    assert!(referral.earns(), "no match yet: {referral:?}");
    // The referee adds the referrer's phone after signing up.
    store
        .update_profile(referee, "B".into(), Some("08031234567".into()))
        .await
        .unwrap();
    let bought = bought(&store, referee, key, "self", TxStatus::Successful).await;
    assert_eq!(store.commission_of(&bought).await.unwrap(), None);
    let referral = store.referral_of(referee).await.unwrap().unwrap();
    assert!(
        referral
            .matched
            .as_deref()
            .unwrap()
            .contains("the same phone"),
        "the owner sees why: {referral:?}"
    );
    assert_eq!(store.bonus_balance(referrer).await.unwrap(), Kobo::ZERO);
    // A referral once recorded is for good: another code changes nothing.
    let (other, _) = account(&store).await;
    let other_code = code_of(&store, other).await;
    assert_eq!(
        refer(&store, referee, &other_code)
            .await
            .unwrap()
            .referrer_id,
        referrer
    );
    // Unknown and own codes are nothing.
    let (loner, _) = account(&store).await;
    assert_eq!(refer(&store, loner, "ZZZZZZZ").await, None);
    let own = code_of(&store, loner).await;
    assert_eq!(refer(&store, loner, &own).await, None);
    audit_passes(&store).await;
}

#[tokio::test]
async fn a_voided_referral_and_a_purchase_outside_the_window_earn_nothing() {
    let (_db, store) = store().await;
    let (referrer, referee, key) = pair(&store).await;
    set_rate(&store, Product::Airtime, Some((150, Some(30)))).await;
    let code = bought(&store, referee, key, "in", TxStatus::Successful).await;
    assert!(store.commission_of(&code).await.unwrap().is_some());
    let voided = store
        .write((referee, line("referrals.void")), |tx, (referee, line)| {
            Box::pin(work::void_referral_logged(
                tx,
                *referee,
                "same household",
                line,
            ))
        })
        .await
        .unwrap();
    assert!(voided);
    let code = bought(&store, referee, key, "after-void", TxStatus::Successful).await;
    assert_eq!(store.commission_of(&code).await.unwrap(), None);
    let referral = store.referral_of(referee).await.unwrap().unwrap();
    assert_eq!(referral.void_reason.as_deref(), Some("same household"));
    assert_eq!(referral.earned, Kobo(150), "what it earned before stays");
    let top = store.top_referrers("", "~", 10).await.unwrap();
    assert_eq!(top.len(), 1);
    assert_eq!((top[0].referrer_id, top[0].cost), (referrer, Kobo(150)));
    audit_passes(&store).await;
}

#[tokio::test]
async fn the_audit_names_a_commission_for_a_purchase_that_is_not_successful() {
    let (db, store) = store().await;
    let (_, referee, key) = pair(&store).await;
    set_rate(&store, Product::Airtime, Some((150, None))).await;
    let code = bought(&store, referee, key, "ok", TxStatus::Successful).await;
    crate::common::raw_sql(
        &db,
        &format!("UPDATE transactions SET status = 'processing' WHERE code = '{code}'"),
    )
    .await;
    let outcomes = store.audit().await.unwrap();
    let check = outcomes
        .iter()
        .find(|o| o.name == "commission_only_for_a_successful_purchase")
        .unwrap();
    assert_eq!(check.violations.len(), 1, "{check:?}");
    crate::common::raw_sql(&db, "UPDATE bonus_balances SET balance = balance + 1").await;
    let outcomes = store.audit().await.unwrap();
    let check = outcomes
        .iter()
        .find(|o| o.name == "bonus_balance_equals_entries")
        .unwrap();
    assert_eq!(check.violations.len(), 1, "{check:?}");
}
