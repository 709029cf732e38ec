//! The limits' usage after the purchase (issue 32, docs/limits.md): a
//! refund gives back its day's and its recipient's usage once, in its own
//! transaction, whatever path refunds it (the hourly counts are kept);
//! held purchases wait for an owner, not in the fulfilment backlog or the
//! needs-review listing; usage past every limit's window is pruned.

use crate::bank_transfers::assert_audit_clean;
use crate::common::{Db, assert_invariant, finalization, funded_account, purchase, raw_sql, store};
use crate::limits::{kind_of, line, own_limits};
use billpay_domain::{AccountId, KeyId, Kobo, TxStatus};
use billpay_store::clock::{lagos_today, now_ms, rfc3339};
use billpay_store::limits::*;
use billpay_store::work;
use billpay_store::*;

/// Places a purchase of ₦`naira` to `recipient`.
async fn place(
    store: &SharedStore,
    (account, key): (AccountId, KeyId),
    reference: &str,
    naira: i64,
    recipient: &str,
) -> StoreResult<Transaction> {
    let mut new = purchase(account, key, reference, naira);
    new.recipient = recipient.into();
    store.place_purchase(new).await
}

/// The limit a purchase was refused by.
fn refused_by(placed: StoreResult<Transaction>) -> LimitKind {
    match placed {
        Err(StoreError::Refused(refusal)) => kind_of(&refusal),
        other => panic!("not refused: {other:?}"),
    }
}

async fn usage(store: &SharedStore, account: AccountId) -> Usage {
    store.account_limits(account).await.unwrap().usage
}

/// Two finalizes of one purchase at once: how many changed it.
async fn finalized_at_once(store: &SharedStore, code: &str, fin: fn() -> Finalization) -> usize {
    let (first, second) = tokio::join!(store.finalize(code, fin()), store.finalize(code, fin()));
    [first.unwrap(), second.unwrap()]
        .iter()
        .filter(|changed| **changed)
        .count()
}

fn failed() -> Finalization {
    finalization(TxStatus::Failed, false)
}

#[tokio::test]
async fn a_refund_gives_back_its_days_count_once_so_another_purchase_fits() {
    let (_db, store) = store().await;
    let wallet = funded_account(&store, 10_000).await;
    let account = wallet.0;
    let two_a_day = Limits {
        daily_count: Some(2),
        ..Limits::default()
    };
    own_limits(&store, account, two_a_day).await;
    let first = place(&store, wallet, "c-1", 100, "08031234567")
        .await
        .unwrap();
    let second = place(&store, wallet, "c-2", 30, "08031234567")
        .await
        .unwrap();
    let third = place(&store, wallet, "c-3", 40, "08031234567").await;
    assert_eq!(refused_by(third), LimitKind::DailyCount);

    // The supplier failed the first: refunded, and its count given back.
    assert_eq!(finalized_at_once(&store, &first.code, failed).await, 1);
    let given_back = usage(&store, account).await;
    assert_eq!(
        (given_back.daily_value, given_back.daily_count),
        (Kobo::from_naira(30), 1)
    );
    assert_eq!(
        (given_back.monthly_value, given_back.monthly_count),
        (Kobo::from_naira(30), 1)
    );
    place(&store, wallet, "c-3", 40, "08031234567")
        .await
        .unwrap();
    let fourth = place(&store, wallet, "c-4", 40, "08031234567").await;
    assert_eq!(refused_by(fourth), LimitKind::DailyCount);

    // Two finalizes of the second at once: refunded and given back once.
    assert_eq!(finalized_at_once(&store, &second.code, failed).await, 1);
    let after = usage(&store, account).await;
    assert_eq!(
        (after.daily_value, after.daily_count),
        (Kobo::from_naira(40), 1)
    );
    place(&store, wallet, "c-4", 40, "08031234567")
        .await
        .unwrap();
    let fifth = place(&store, wallet, "c-5", 40, "08031234567").await;
    assert_eq!(refused_by(fifth), LimitKind::DailyCount);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(10_000 - 80)
    );
    assert_invariant(&store, account).await;
    assert_audit_clean(&store).await;
}

/// The operator's finalize (`finalize_logged`) and a late reversal of a
/// delivered purchase refund too: each gives back the day's value and the
/// recipient's, once.
#[tokio::test]
async fn an_operators_finalize_and_a_reversal_give_back_the_recipients_value() {
    let (_db, store) = store().await;
    let wallet = funded_account(&store, 10_000).await;
    let account = wallet.0;
    let limits = Limits {
        daily_value: Some(Kobo::from_naira(150)),
        per_recipient_daily: Some(Kobo::from_naira(100)),
        ..Limits::default()
    };
    own_limits(&store, account, limits).await;
    let delivered = place(&store, wallet, "r-1", 60, "08031234567")
        .await
        .unwrap();
    let over = place(&store, wallet, "r-2", 60, "08031234567").await;
    assert_eq!(refused_by(over), LimitKind::PerRecipientDaily);
    let fin = finalization(TxStatus::Successful, false);
    assert!(store.finalize(&delivered.code, fin).await.unwrap());
    // The supplier reversed it later: failed, refunded, given back.
    let reversal = || finalization(TxStatus::Failed, true);
    assert_eq!(
        finalized_at_once(&store, &delivered.code, reversal).await,
        1
    );
    assert_eq!(usage(&store, account).await.daily_value, Kobo(0));
    let resolved = place(&store, wallet, "r-2", 60, "08031234567")
        .await
        .unwrap();
    // An operator's answer for the second: failed.
    let log = NewLogEntry {
        subject: resolved.code.clone(),
        ..line("transaction.resolve")
    };
    let resolve = || {
        store.write(
            (resolved.code.to_string(), failed(), log.clone()),
            |tx, (code, fin, log)| Box::pin(work::finalize_logged(tx, code, fin, log)),
        )
    };
    let (first, second) = tokio::join!(resolve(), resolve());
    assert_eq!(u8::from(first.unwrap()) + u8::from(second.unwrap()), 1);
    assert_eq!(usage(&store, account).await, Usage::default());
    // The recipient's whole ₦100 is there again, and no more.
    place(&store, wallet, "r-3", 100, "08031234567")
        .await
        .unwrap();
    let more = place(&store, wallet, "r-4", 1, "08031234567").await;
    assert_eq!(refused_by(more), LimitKind::PerRecipientDaily);
    assert_eq!(
        store.balance(account).await.unwrap(),
        Kobo::from_naira(10_000 - 100)
    );
    assert_invariant(&store, account).await;
    assert_audit_clean(&store).await;
}

/// A held purchase rejected by two owners at once gives its day's count
/// back once; its hourly count is kept (attempts are what velocity rules
/// watch).
#[tokio::test]
async fn a_rejected_held_purchase_gives_back_its_day_but_not_its_hour() {
    let (_db, store) = store().await;
    let wallet = funded_account(&store, 10_000).await;
    let account = wallet.0;
    let limits = Limits {
        daily_count: Some(1),
        recipient_hourly_count: Some(1),
        recipient_hourly_action: Some(RuleAction::Refuse),
        // every purchase is held
        account_hourly_count: Some(0),
        account_hourly_action: Some(RuleAction::Hold),
        ..Limits::default()
    };
    own_limits(&store, account, limits).await;
    let held = place(&store, wallet, "h-1", 50, "08031234567")
        .await
        .unwrap();
    assert!(held.held_for.is_some());
    let next = place(&store, wallet, "h-2", 50, "08039999999").await;
    assert_eq!(refused_by(next), LimitKind::DailyCount);
    let reject = || {
        let log = NewLogEntry {
            subject: held.code.clone(),
            ..line("transaction.reject")
        };
        store.write(
            (held.code.to_string(), failed(), log),
            |tx, (code, fin, log)| Box::pin(work::reject_held_logged(tx, code, fin, log)),
        )
    };
    let (first, second) = tokio::join!(reject(), reject());
    assert_eq!(u8::from(first.unwrap()) + u8::from(second.unwrap()), 1);
    assert_eq!(usage(&store, account).await.daily_count, 0);
    // The day allows one again; the recipient's hour still counts the first.
    let same = place(&store, wallet, "h-2", 50, "08031234567").await;
    assert_eq!(refused_by(same), LimitKind::RecipientHourlyCount);
    let other = place(&store, wallet, "h-3", 50, "08039999999")
        .await
        .unwrap();
    assert!(other.held_for.is_some());
    assert_invariant(&store, account).await;
    assert_audit_clean(&store).await;
}

/// The usage given back is the day the purchase was placed in (Lagos),
/// and never goes below zero.
#[tokio::test]
async fn a_refund_gives_back_to_the_day_it_was_placed_in_and_never_below_zero() {
    let (db, store) = store().await;
    let wallet = funded_account(&store, 10_000).await;
    let account = wallet.0;
    let old = place(&store, wallet, "d-1", 70, "08031234567")
        .await
        .unwrap();
    // Placed yesterday (Lagos): its row is yesterday's.
    let yesterday = (lagos_today() - time::Duration::days(1)).to_string();
    let placed_at = rfc3339(now_ms() - 86_400_000);
    raw_sql(
        &db,
        &format!(
            "UPDATE transactions SET created_at = '{placed_at}' WHERE code = '{}';
             UPDATE limit_usage SET day = '{yesterday}' WHERE account_id = '{account}'",
            old.code
        ),
    )
    .await;
    let today = place(&store, wallet, "d-2", 20, "08031234567")
        .await
        .unwrap();
    assert!(store.finalize(&old.code, failed()).await.unwrap());
    let after = usage(&store, account).await;
    assert_eq!(
        (after.daily_value, after.daily_count),
        (Kobo::from_naira(20), 1),
        "today's row is untouched"
    );
    assert_eq!(
        (after.monthly_value, after.monthly_count),
        (Kobo::from_naira(20), 1),
        "yesterday's row is given back"
    );
    // A row that holds less than the refund (kept before this release, or
    // counted from mid-day): down to zero, not below.
    raw_sql(
        &db,
        &format!(
            "UPDATE limit_usage SET value = 500, count = 0
             WHERE account_id = '{account}' AND day = '{}'",
            lagos_today()
        ),
    )
    .await;
    assert!(store.finalize(&today.code, failed()).await.unwrap());
    assert_eq!(usage(&store, account).await, Usage::default());
    assert_invariant(&store, account).await;
}

#[tokio::test]
async fn held_purchases_are_neither_backlog_nor_needing_review() {
    let (db, store) = store().await;
    let wallet = funded_account(&store, 10_000).await;
    let account = wallet.0;
    let waiting = place(&store, wallet, "b-1", 10, "08031234567")
        .await
        .unwrap();
    let hold_all = Limits {
        account_hourly_count: Some(0),
        account_hourly_action: Some(RuleAction::Hold),
        ..Limits::default()
    };
    own_limits(&store, account, hold_all).await;
    let held = place(&store, wallet, "b-2", 10, "08031234567")
        .await
        .unwrap();
    assert!(held.held_for.is_some());
    // Both placed long ago: the held one first.
    raw_sql(
        &db,
        &format!(
            "UPDATE transactions SET created_at = '2000-01-01T00:00:00.000+00:00' WHERE code = '{}';
             UPDATE transactions SET created_at = '2000-01-02T00:00:00.000+00:00' WHERE code = '{}'",
            held.code, waiting.code
        ),
    )
    .await;
    let backlog = store.fulfilment_backlog().await.unwrap();
    assert_eq!(backlog.processing, 1);
    assert_eq!(
        backlog.oldest_created_at.as_deref(),
        Some("2000-01-02T00:00:00.000+00:00")
    );
    let review = TxFilter::needs_review(rfc3339(now_ms()), 100);
    let listed = store.transactions(review.clone()).await.unwrap();
    let codes: Vec<&str> = listed.iter().map(|tx| tx.code.as_str()).collect();
    assert_eq!(codes, [waiting.code.as_str()]);
    // The alerts' count agrees: held aside, only before the bound, capped.
    let now = rfc3339(now_ms());
    assert_eq!(store.needs_review_count(&now, 100).await.unwrap(), 1);
    let between = "2000-01-01T12:00:00.000+00:00";
    assert_eq!(store.needs_review_count(between, 100).await.unwrap(), 0);
    // Listed apart, and back in both once released.
    assert_eq!(store.held_purchases(10).await.unwrap().len(), 1);
    let release = line("transaction.release");
    assert!(
        store
            .write((held.code.to_string(), release), |tx, (code, log)| {
                Box::pin(work::release_held_logged(tx, code, log))
            })
            .await
            .unwrap()
    );
    assert_eq!(store.fulfilment_backlog().await.unwrap().processing, 2);
    assert_eq!(store.transactions(review).await.unwrap().len(), 2);
    assert_eq!(store.needs_review_count(&now, 100).await.unwrap(), 2);
    assert_eq!(store.needs_review_count(&now, 1).await.unwrap(), 1);
    assert_eq!(store.needs_review_count(between, 100).await.unwrap(), 1);
    // The ordinary listing still shows every purchase.
    let all = TxFilter {
        account_id: Some(account),
        limit: 100,
        ..TxFilter::default()
    };
    assert_eq!(store.transactions(all).await.unwrap().len(), 2);
}

/// Rows as old as `day` for `account`: the day's, a recipient's, and an
/// hourly count of `hour`.
async fn old_rows(db: &Db, account: AccountId, day: &str, value: i64, hour: i64) {
    raw_sql(
        db,
        &format!(
            "INSERT INTO limit_usage (account_id, day, value, count)
                 VALUES ('{account}', '{day}', {value}, 1);
             INSERT INTO recipient_usage (account_id, recipient, day, value)
                 VALUES ('{account}', '08031234567', '{day}', {value});
             INSERT INTO hourly_usage (account_id, recipient, hour, count)
                 VALUES ('{account}', '08031234567', {hour}, 1)"
        ),
    )
    .await;
}

#[tokio::test]
async fn usage_past_every_window_is_pruned_and_the_limits_still_refuse() {
    let (db, store) = store().await;
    let wallet = funded_account(&store, 10_000).await;
    let account = wallet.0;
    let limits = Limits {
        monthly_value: Some(Kobo::from_naira(100)),
        per_recipient_daily: Some(Kobo::from_naira(80)),
        recipient_hourly_count: Some(2),
        recipient_hourly_action: Some(RuleAction::Refuse),
        ..Limits::default()
    };
    own_limits(&store, account, limits).await;
    let today = lagos_today();
    let day = |n: i64| (today - time::Duration::days(n)).to_string();
    let hour = now_ms().div_euclid(3_600_000);
    // Gone: 31 days ago, 3 hours ago. Kept: 30 days ago (outside the
    // window, the day before it), 29 days ago (its first day), 2 hours ago.
    old_rows(&db, account, &day(31), 500_000, hour - 3).await;
    old_rows(&db, account, &day(30), 500_000, hour - 2).await;
    old_rows(&db, account, &day(29), 6_000, hour - 1).await;
    // Today: ₦30 to the recipient (this hour's count and the day's row).
    place(&store, wallet, "p-1", 30, "08031234567")
        .await
        .unwrap();
    let before = usage(&store, account).await;
    assert_eq!(before.monthly_value, Kobo::from_naira(90));
    let refusals = || async {
        let over_month = place(&store, wallet, "p-2", 11, "08039999999").await;
        let over_hour = {
            place(&store, wallet, "p-3", 5, "08031234567")
                .await
                .unwrap();
            place(&store, wallet, "p-4", 1, "08031234567").await
        };
        (refused_by(over_month), refused_by(over_hour))
    };

    let (first_day, first_hour) = usage_prune_bounds(today, now_ms());
    assert_eq!(
        (first_day.as_str(), first_hour),
        (day(30).as_str(), hour - 2)
    );
    assert_eq!(store.prune_usage(&first_day, first_hour).await.unwrap(), 3);
    assert_eq!(store.prune_usage(&first_day, first_hour).await.unwrap(), 0);
    assert_eq!(usage(&store, account).await, before);
    assert_eq!(
        refusals().await,
        (LimitKind::MonthlyValue, LimitKind::RecipientHourlyCount)
    );

    // What stayed: 30 and 29 days ago (3 rows each: day, recipient, and
    // the hours 2 and 1 ago), today's day and recipient rows and this
    // hour's count (the purchases' own).
    let tomorrow = day(-1);
    let everything = store.prune_usage(&tomorrow, hour + 1).await.unwrap();
    assert_eq!(everything, 3 + 3 + 3);
    assert_invariant(&store, account).await;
}
