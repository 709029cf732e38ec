//! KYC levels, limits and the blocklist (issue 32): enforced inside the
//! purchase's own transaction, so concurrent purchases never pass a limit by
//! one kobo, on either backend.

use crate::common::{assert_invariant, funded_account, join_all, purchase, raw_sql, store};
use billpay_domain::{AccountId, KeyId, Kobo};
use billpay_store::limits::*;
use billpay_store::work;
use billpay_store::*;

pub(crate) fn line(action: &str) -> NewLogEntry {
    NewLogEntry {
        actor: "cli".into(),
        action: action.into(),
        subject: "test".into(),
        ..NewLogEntry::default()
    }
}

pub(crate) async fn own_limits(store: &SharedStore, account: AccountId, limits: Limits) {
    store
        .write(
            (account, limits, line("limits.account")),
            |tx, (account, limits, log)| {
                Box::pin(work::set_account_limits_logged(tx, *account, limits, log))
            },
        )
        .await
        .unwrap();
}

pub(crate) async fn set_level(store: &SharedStore, account: AccountId, level: u8) {
    let change = KycChange {
        level,
        method: "operator".into(),
        last4: None,
        reason: "test".into(),
        set_by: "cli".into(),
    };
    store
        .write(
            (account, change, line("account.kyc_level")),
            |tx, (account, change, log)| Box::pin(work::set_kyc_logged(tx, *account, change, log)),
        )
        .await
        .unwrap();
}

/// `count` purchases of `naira` each at once, to `recipient`; the refusals.
/// `count` purchases of ₦`naira` at once to `recipient`: the placed ones
/// and the refusals.
pub(crate) async fn at_once(
    store: &SharedStore,
    (account, key): (AccountId, KeyId),
    count: usize,
    naira: i64,
    recipient: &'static str,
) -> (Vec<Transaction>, Vec<Refusal>) {
    let tasks: Vec<_> = (0..count)
        .map(|i| {
            let store = store.clone();
            let mut new = purchase(account, key, &format!("race-{recipient}-{i:03}"), naira);
            new.recipient = recipient.into();
            tokio::spawn(async move { store.place_purchase(new).await })
        })
        .collect();
    let (mut placed, mut refused) = (Vec::new(), Vec::new());
    for answer in join_all(tasks).await {
        match answer {
            Ok(tx) => placed.push(tx),
            Err(StoreError::Refused(refusal)) => refused.push(refusal),
            Err(other) => panic!("unexpected error {other}"),
        }
    }
    (placed, refused)
}

/// The limit a refusal names.
pub(crate) fn kind_of(refusal: &Refusal) -> LimitKind {
    match refusal {
        Refusal::LimitExceeded(limit) => limit.kind,
        other => panic!("not a limit: {other}"),
    }
}

fn limit_kinds(refusals: &[Refusal]) -> Vec<LimitKind> {
    refusals.iter().map(kind_of).collect()
}

#[tokio::test]
async fn fifty_concurrent_purchases_never_pass_a_daily_value_limit() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 100_000).await;
    let daily = Limits {
        daily_value: Some(Kobo::from_naira(1_000)),
        ..Limits::default()
    };
    own_limits(&store, account, daily).await;
    // 50 × ₦41 = ₦2,050 tried against ₦1,000: 24 fit (₦984), the 25th would be ₦1,025.
    let (_, refused) = at_once(&store, (account, key), 50, 41, "08031234567").await;
    assert_eq!(refused.len(), 26);
    assert!(
        limit_kinds(&refused)
            .iter()
            .all(|k| *k == LimitKind::DailyValue)
    );
    let view = store.account_limits(account).await.unwrap();
    assert_eq!(view.usage.daily_value, Kobo::from_naira(984));
    assert_eq!(view.usage.daily_count, 24);
    assert_eq!(view.usage.monthly_value, Kobo::from_naira(984));
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(100_000 - 984)
    );
    // ₦16 is left: exactly that passes, one kobo more does not.
    let mut over = purchase(account, key, "over", 16);
    over.amount = Kobo(1_601);
    let Err(StoreError::Refused(Refusal::LimitExceeded(limit))) = store.place_purchase(over).await
    else {
        panic!("a kobo over the limit was placed");
    };
    assert_eq!((limit.limit, limit.used), (100_000, 98_400));
    assert_eq!(
        limit.to_string(),
        "This purchase is over the daily spending limit of 1000.00 Naira: 16.00 Naira left"
    );
    store
        .place_purchase(purchase(account, key, "exact", 16))
        .await
        .unwrap();
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn fifty_concurrent_purchases_never_pass_a_daily_count() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 100_000).await;
    let count = Limits {
        daily_count: Some(7),
        ..Limits::default()
    };
    own_limits(&store, account, count).await;
    let (_, refused) = at_once(&store, (account, key), 50, 10, "08031234567").await;
    assert_eq!(refused.len(), 43);
    assert!(
        limit_kinds(&refused)
            .iter()
            .all(|k| *k == LimitKind::DailyCount)
    );
    assert_eq!(
        store
            .account_limits(account)
            .await
            .unwrap()
            .usage
            .daily_count,
        7
    );
    assert_invariant(&store, account).await;
}

/// The 30-day sums are read only when a 30-day limit applies: they must
/// still hold under concurrency, and count what was placed before.
#[tokio::test]
async fn fifty_concurrent_purchases_never_pass_a_30_day_value_limit() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 100_000).await;
    // Placed while no 30-day limit applied (level 2): still counted.
    store
        .place_purchase(purchase(account, key, "before", 30))
        .await
        .unwrap();
    let monthly = Limits {
        monthly_value: Some(Kobo::from_naira(100)),
        ..Limits::default()
    };
    own_limits(&store, account, monthly).await;
    let (_, refused) = at_once(&store, (account, key), 50, 10, "08031234567").await;
    assert_eq!(refused.len(), 43, "₦30 + 7 × ₦10 fit in ₦100");
    assert!(
        limit_kinds(&refused)
            .iter()
            .all(|k| *k == LimitKind::MonthlyValue)
    );
    let usage = store.account_limits(account).await.unwrap().usage;
    assert_eq!(
        (usage.monthly_value, usage.monthly_count),
        (Kobo::from_naira(100), 8)
    );
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(100_000 - 100)
    );
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn concurrent_purchases_to_one_recipient_stop_at_its_daily_limit() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 100_000).await;
    let per_recipient = Limits {
        per_recipient_daily: Some(Kobo::from_naira(100)),
        ..Limits::default()
    };
    own_limits(&store, account, per_recipient).await;
    let (_, refused) = at_once(&store, (account, key), 50, 10, "08031234567").await;
    assert_eq!(refused.len(), 40);
    assert!(
        limit_kinds(&refused)
            .iter()
            .all(|k| *k == LimitKind::PerRecipientDaily)
    );
    // Another recipient has its own allowance.
    let (_, other) = at_once(&store, (account, key), 5, 10, "08039999999").await;
    assert!(other.is_empty());
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(100_000 - 150)
    );
}

#[tokio::test]
async fn a_level_change_applies_to_the_next_purchase() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 200_000).await;
    store
        .place_purchase(purchase(account, key, "at-2", 20_000))
        .await
        .unwrap();
    set_level(&store, account, 0).await;
    let refused = store
        .place_purchase(purchase(account, key, "at-0", 20_000))
        .await;
    let Err(StoreError::Refused(Refusal::LimitExceeded(limit))) = refused else {
        panic!("level 0 let ₦20,000 through: {refused:?}");
    };
    assert_eq!(limit.kind, LimitKind::MaxPurchase);
    assert_eq!(
        limit.to_string(),
        "This purchase is over the largest single purchase of 10000.00 Naira"
    );
    // The test-mode check says the same and changes nothing.
    let checked = store
        .check_purchase(account, "at-0", "08031234567", Kobo::from_naira(20_000))
        .await;
    assert!(matches!(
        checked,
        Err(StoreError::Refused(Refusal::LimitExceeded(_)))
    ));
    set_level(&store, account, 1).await;
    store
        .place_purchase(purchase(account, key, "at-1", 20_000))
        .await
        .unwrap();
    let view = store.account_limits(account).await.unwrap();
    assert_eq!(view.kyc.level, 1);
    assert_eq!(view.kyc.method.as_deref(), Some("operator"));
    assert_eq!(view.usage.daily_count, 2);
}

#[tokio::test]
async fn blocked_recipients_and_accounts_are_refused_and_nothing_moves() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 1_000).await;
    let entry = |kind, value: &str| BlockEntry {
        kind,
        value: value.into(),
        reason: "stolen card".into(),
        added_by: "cli".into(),
        added_at: String::new(),
    };
    let recipient = entry(BlockKind::Recipient, "08031234567");
    assert!(
        store
            .write(
                (recipient.clone(), line("blocklist.add")),
                |tx, (entry, log)| Box::pin(work::block_logged(tx, entry, log))
            )
            .await
            .unwrap()
    );
    assert!(
        !store
            .write((recipient, line("blocklist.add")), |tx, (entry, log)| {
                Box::pin(work::block_logged(tx, entry, log))
            })
            .await
            .unwrap()
    );
    let refused = store
        .place_purchase(purchase(account, key, "b-1", 100))
        .await;
    assert!(matches!(
        refused,
        Err(StoreError::Refused(Refusal::Blocked))
    ));
    let checked = store
        .check_purchase(account, "b-1", "08031234567", Kobo::from_naira(100))
        .await;
    assert!(matches!(
        checked,
        Err(StoreError::Refused(Refusal::Blocked))
    ));
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(1_000)
    );
    assert!(
        store
            .write(
                (
                    BlockKind::Recipient,
                    "08031234567".to_string(),
                    line("blocklist.remove")
                ),
                |tx, (kind, value, log)| Box::pin(work::unblock_logged(tx, *kind, value, log))
            )
            .await
            .unwrap()
    );
    store
        .place_purchase(purchase(account, key, "b-2", 100))
        .await
        .unwrap();
    let whole_account = entry(BlockKind::Account, &account.to_string());
    store
        .write(
            (whole_account, line("blocklist.add")),
            |tx, (entry, log)| Box::pin(work::block_logged(tx, entry, log)),
        )
        .await
        .unwrap();
    let refused = store
        .place_purchase(purchase(account, key, "b-3", 100))
        .await;
    assert!(matches!(
        refused,
        Err(StoreError::Refused(Refusal::Blocked))
    ));
    let listed = store.blocklist().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].reason, "stolen card");
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn a_wallet_over_its_largest_balance_is_held_to_level_0s_limits() {
    let (_db, store) = store().await;
    let (account, key) = funded_account(&store, 600_000).await;
    // Level 1's largest balance is ₦500,000: the credit above it arrived anyway.
    set_level(&store, account, 1).await;
    // Above level 0's limits, a purchase waits for review (the shipped
    // over_balance_action; tests/contract/velocity.rs has `refuse`).
    let held = store
        .place_purchase(purchase(account, key, "h-1", 20_000))
        .await
        .unwrap();
    assert_eq!(held.held_for.as_deref(), Some(OVER_BALANCE));
    assert!(store.account_limits(account).await.unwrap().held_to_level0);
    store
        .place_purchase(purchase(account, key, "h-2", 5_000))
        .await
        .unwrap();
    // The owner's review: a larger balance for this account.
    let reviewed = Limits {
        max_balance: Some(Kobo::from_naira(1_000_000)),
        ..Limits::default()
    };
    own_limits(&store, account, reviewed).await;
    store
        .place_purchase(purchase(account, key, "h-3", 20_000))
        .await
        .unwrap();
}

#[tokio::test]
async fn level_limits_are_listed_changed_and_logged() {
    let (_db, store) = store().await;
    let levels = store.level_limits().await.unwrap();
    assert_eq!(
        levels.iter().map(|l| l.level).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(
        levels[0].limits.max_purchase,
        Some(Kobo::from_naira(10_000))
    );
    let mut limits = levels[0].limits;
    limits.daily_count = None;
    let changed = store
        .write(
            (0, limits, line("limits.level")),
            |tx, (level, limits, log)| {
                Box::pin(work::set_level_limits_logged(tx, *level, limits, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(changed.limits.daily_count, None);
    assert_eq!(store.level_limits().await.unwrap()[0].limits, limits);
    let logged = store
        .operator_log(LogFilter {
            limit: 50,
            ..LogFilter::default()
        })
        .await
        .unwrap();
    assert!(logged.iter().any(|l| l.action == "limits.level"));
}

/// An owner renames a level: the new name is read back, the line (old name
/// before, in the same transaction) is written; an unknown level is not
/// found, a blank or over-long name is refused, and neither changes a thing.
#[tokio::test]
async fn a_level_is_renamed_and_logged_and_a_bad_name_changes_nothing() {
    let (_db, store) = store().await;
    let before = store.level_limits().await.unwrap();
    let mut rename = line("limits.level_name");
    rename.subject = "level 1".into();
    rename.after = Some("Verified by BVN".into());
    let renamed = store
        .write(
            (1, "Verified by BVN".to_string(), rename),
            |tx, (level, name, log)| Box::pin(work::rename_level_logged(tx, *level, name, log)),
        )
        .await
        .unwrap();
    assert_eq!(
        (renamed.level, renamed.name.as_str()),
        (1, "Verified by BVN")
    );
    assert_eq!(renamed.limits, before[1].limits, "the limits are kept");
    let after = store.level_limits().await.unwrap();
    assert_eq!(after[1].name, "Verified by BVN");
    assert_eq!((&after[0], &after[2]), (&before[0], &before[2]));
    let logged = store
        .operator_log(LogFilter {
            subject: Some("level 1".into()),
            limit: 50,
            ..LogFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0].action, "limits.level_name");
    assert_eq!(logged[0].before.as_deref(), Some(before[1].name.as_str()));
    assert_eq!(logged[0].after.as_deref(), Some("Verified by BVN"));

    let unknown = store
        .write(
            (3, "Level three".to_string(), line("limits.level_name")),
            |tx, (level, name, log)| Box::pin(work::rename_level_logged(tx, *level, name, log)),
        )
        .await;
    assert!(
        matches!(unknown, Err(StoreError::NotFound(_))),
        "{unknown:?}"
    );
    let longest = "n".repeat(LEVEL_NAME_MAX);
    let too_long = format!("{longest}x");
    for bad in ["", "   ", too_long.as_str()] {
        let refused = store
            .write(
                (0, bad.to_string(), line("limits.level_name")),
                |tx, (level, name, log)| Box::pin(work::rename_level_logged(tx, *level, name, log)),
            )
            .await;
        assert!(
            matches!(refused, Err(StoreError::Invalid(_))),
            "{bad:?}: {refused:?}"
        );
    }
    // a name of the longest length, in any script, is taken whole
    let ok = store
        .write(
            (2, longest.to_string(), line("limits.level_name")),
            |tx, (level, name, log)| Box::pin(work::rename_level_logged(tx, *level, name, log)),
        )
        .await
        .unwrap();
    assert_eq!(ok.name, longest);
    let naira = "Ọ̀gá ₦".repeat(5);
    let named = store
        .write(
            (0, naira.to_string(), line("limits.level_name")),
            |tx, (level, name, log)| Box::pin(work::rename_level_logged(tx, *level, name, log)),
        )
        .await
        .unwrap();
    assert_eq!(named.name, naira);
    let all = store.level_limits().await.unwrap();
    assert_eq!(all[0].name, naira);
    let lines = store
        .operator_log(LogFilter {
            limit: 50,
            ..LogFilter::default()
        })
        .await
        .unwrap();
    let renames = lines.iter().filter(|l| l.action == "limits.level_name");
    assert_eq!(renames.count(), 3, "a refusal writes no line");
}

/// The level line of `account`.
fn about(account: AccountId) -> NewLogEntry {
    NewLogEntry {
        subject: account.to_string(),
        ..line("account.kyc_level")
    }
}

/// A customer's check that passed raises the level only from level 0: once
/// an owner has set another level, it changes nothing and writes no line.
#[tokio::test]
async fn a_passed_check_never_lowers_a_level_an_owner_set() {
    let (_db, store) = store().await;
    let (account, _) = funded_account(&store, 1).await;
    let (raised, _) = funded_account(&store, 1).await;
    set_level(&store, account, 0).await;
    set_level(&store, raised, 2).await;
    let change = KycChange {
        level: 1,
        method: "bvn".into(),
        last4: Some("2226".into()),
        reason: "BVN matched".into(),
        set_by: "self".into(),
    };
    let kyc = store
        .write(
            (account, 0, change.clone(), about(account)),
            |tx, (account, from, change, log)| {
                Box::pin(work::raise_kyc_logged(tx, *account, *from, change, log))
            },
        )
        .await
        .unwrap()
        .expect("raised from level 0");
    assert_eq!(
        (kyc.level, kyc.method.as_deref(), kyc.last4.as_deref()),
        (1, Some("bvn"), Some("2226"))
    );
    let again = store
        .write(
            (account, 0, change.clone(), about(account)),
            |tx, (account, from, change, log)| {
                Box::pin(work::raise_kyc_logged(tx, *account, *from, change, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(again, None, "at level 1 now: not from level 0");
    let kept = store
        .write(
            (raised, 0, change, about(raised)),
            |tx, (account, from, change, log)| {
                Box::pin(work::raise_kyc_logged(tx, *account, *from, change, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(kept, None);
    let view = store.account_limits(raised).await.unwrap();
    assert_eq!(
        (view.kyc.level, view.kyc.method.as_deref()),
        (2, Some("operator"))
    );
    let log_of = |subject: AccountId| {
        let store = store.clone();
        async move {
            let filter = LogFilter {
                subject: Some(subject.to_string()),
                limit: 100,
                ..LogFilter::default()
            };
            store.operator_log(filter).await.unwrap()
        }
    };
    let lines = log_of(account).await;
    assert_eq!(lines.len(), 1, "one line, of the raise that changed it");
    assert_eq!(lines[0].before.as_deref(), Some("0"));
    assert!(log_of(raised).await.is_empty(), "no line without a change");
}

/// A customer's identity checks are counted per day before the gateway is
/// asked: ten at once on an account with 3 a day start exactly 3, each
/// with its line; another account and an earlier day are counted apart.
#[tokio::test]
async fn ten_identity_checks_at_once_start_only_the_days_three() {
    let (_db, store) = store().await;
    let (account, _) = funded_account(&store, 1).await;
    let (other, _) = funded_account(&store, 1).await;
    let today = billpay_store::clock::lagos_day_start(billpay_store::clock::lagos_today());
    let check = |account: AccountId| {
        let store = store.clone();
        let since = today.clone();
        tokio::spawn(async move {
            store
                .write(
                    (account, since, IDENTITY_CHECKS_PER_DAY, line("ignored")),
                    |tx, (account, since, most, log)| {
                        Box::pin(work::start_identity_check(tx, *account, since, *most, log))
                    },
                )
                .await
                .unwrap()
        })
    };
    let started = join_all((0..10).map(|_| check(account)).collect()).await;
    let mut left: Vec<u32> = started.into_iter().flatten().collect();
    left.sort_unstable();
    assert_eq!(left, [0, 1, 2], "exactly 3 started, each told what is left");
    let lines = store
        .operator_log(LogFilter {
            subject: Some(account.to_string()),
            limit: 100,
            ..LogFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|l| l.action == IDENTITY_CHECK));
    assert_eq!(
        join_all(vec![check(other)]).await,
        [Some(2)],
        "another account counts apart"
    );
    let tomorrow = billpay_store::clock::lagos_day_start(
        billpay_store::clock::lagos_today().next_day().unwrap(),
    );
    let later = store
        .write(
            (account, tomorrow, IDENTITY_CHECKS_PER_DAY, line("x")),
            |tx, (account, since, most, log)| {
                Box::pin(work::start_identity_check(tx, *account, since, *most, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(later, Some(2), "a new day, 3 again");
    let missing = store
        .write(
            (AccountId::new(), today, 3, line("x")),
            |tx, (account, since, most, log)| {
                Box::pin(work::start_identity_check(tx, *account, since, *most, log))
            },
        )
        .await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );
}

/// The identity checks count in the throttles' table, per Lagos day: the
/// day's 3, then none, then 3 again once the day's window has ended.
#[tokio::test]
async fn identity_checks_count_in_the_throttle_and_start_again_after_the_day() {
    let (db, store) = store().await;
    let (account, _) = funded_account(&store, 1).await;
    let today = billpay_store::clock::lagos_day_start(billpay_store::clock::lagos_today());
    let start = || {
        store.write(
            (account, today.clone(), IDENTITY_CHECKS_PER_DAY, line("x")),
            |tx, (account, since, most, log)| {
                Box::pin(work::start_identity_check(tx, *account, since, *most, log))
            },
        )
    };
    for left in [2, 1, 0] {
        assert_eq!(start().await.unwrap(), Some(left));
    }
    assert_eq!(start().await.unwrap(), None);
    let sql = "UPDATE throttles SET until_ms = 0 WHERE scope = 'identity-checks'";
    raw_sql(&db, sql).await;
    assert_eq!(start().await.unwrap(), Some(2), "the day's window ended");
}
