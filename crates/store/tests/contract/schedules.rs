use crate::common::account;
use billpay_domain::{Item, Kobo, Phone};
use billpay_store::cadence::Every;
use billpay_store::clock::{now_ms, rfc3339};
use billpay_store::*;
use std::time::Duration;

fn airtime(
    account: billpay_domain::AccountId,
    key: billpay_domain::KeyId,
    reference: &str,
) -> NewSchedule {
    NewSchedule {
        account_id: account,
        key_id: key,
        reference: reference.into(),
        provider: "mtn".into(),
        item: Item::Airtime {
            phone: Phone::parse("08031234567").unwrap(),
            amount: Kobo::from_naira(500),
            ported: false,
        },
        label: "MTN Airtime ₦500".into(),
        recipient: "08031234567".into(),
        amount: Kobo::from_naira(500),
        every: Every::Day,
        starts_at: rfc3339(now_ms() - 1_000),
        retry_today: false,
        verified_name: None,
    }
}

#[tokio::test]
async fn a_schedule_keeps_its_item_and_its_reference_is_the_accounts_once() {
    let (_db, store) = crate::common::store().await;
    let (account, key) = account(&store).await;
    let made = store
        .create_schedule(airtime(account, key, "mum-airtime"))
        .await
        .unwrap();
    assert_eq!(made.status, ScheduleStatus::Active);
    assert_eq!(made.next_run_at, made.starts_at);
    assert_eq!(made.runs, 0);
    assert!(matches!(made.item, Item::Airtime { ported: false, .. }));
    let again = store
        .create_schedule(airtime(account, key, "mum-airtime"))
        .await;
    assert!(matches!(
        again,
        Err(StoreError::Refused(Refusal::DuplicateReference))
    ));
    let (other, other_key) = crate::common::account(&store).await;
    store
        .create_schedule(airtime(other, other_key, "mum-airtime"))
        .await
        .unwrap();
    assert_eq!(store.schedules(account).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_due_schedule_is_claimed_once_and_a_run_settles_once() {
    let (_db, store) = crate::common::store().await;
    let (account, key) = account(&store).await;
    let made = store
        .create_schedule(airtime(account, key, "daily-airtime"))
        .await
        .unwrap();
    assert!(store.schedules_due().await.unwrap());
    let lease = Duration::from_secs(60);
    let claimed = store.claim_due_schedules(10, lease).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert!(
        store
            .claim_due_schedules(10, lease)
            .await
            .unwrap()
            .is_empty(),
        "leased"
    );
    let next = rfc3339(now_ms() + 86_400_000);
    let settled = SettledRun {
        schedule: made.clone(),
        run: ScheduleRun {
            n: 1,
            due_at: made.starts_at.clone(),
            at: rfc3339(now_ms()),
            outcome: RunOutcome::Skipped,
            transaction_code: None,
            reason: Some("Insufficient wallet balance".into()),
            missed: 0,
        },
        next_run_at: next.clone(),
        notify: true,
    };
    assert!(store.settle_schedule_run(settled.clone()).await.unwrap());
    assert!(!store.settle_schedule_run(settled).await.unwrap(), "once");
    let after = store
        .schedule(account, "daily-airtime")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((after.runs, after.next_run_at), (1, next));
    assert!(!store.schedules_due().await.unwrap());
    let runs = store.schedule_runs(&made.id, 10).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].outcome, RunOutcome::Skipped);
    let told = store
        .notices(NoticeFilter {
            account_id: Some(account),
            kind: Some("schedule_skipped".into()),
            limit: 10,
            ..NoticeFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(told.len(), 1, "the customer is told once");
}

#[tokio::test]
async fn a_stopped_schedule_stays_stopped_and_an_operator_pauses_the_rest() {
    let (_db, store) = crate::common::store().await;
    let (account, key) = account(&store).await;
    store
        .create_schedule(airtime(account, key, "first-sched"))
        .await
        .unwrap();
    store
        .create_schedule(airtime(account, key, "second-sched"))
        .await
        .unwrap();
    let stop = StatusChange {
        status: ScheduleStatus::Stopped,
        reason: Some("stopped by you".into()),
        next_run_at: None,
    };
    let stopped = store
        .set_schedule_status(account, "first-sched", stop)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stopped.status, ScheduleStatus::Stopped);
    let resume = StatusChange {
        status: ScheduleStatus::Active,
        reason: None,
        next_run_at: None,
    };
    let still = store
        .set_schedule_status(account, "first-sched", resume)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(still.status, ScheduleStatus::Stopped, "a stop is for good");
    let log = NewLogEntry {
        actor: "cli".into(),
        action: "schedules.pause".into(),
        subject: account.to_string(),
        ..NewLogEntry::default()
    };
    let paused = store
        .write((account, log), |tx, (account, log)| {
            Box::pin(work::pause_schedules_logged(
                tx,
                *account,
                "paused by the operator",
                log,
            ))
        })
        .await
        .unwrap();
    assert_eq!(paused, 1);
    let second = store
        .schedule(account, "second-sched")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.status, ScheduleStatus::Paused);
    assert!(!store.schedules_due().await.unwrap());
}
