use crate::common::{account, assert_invariant, join_all, store};
use billpay_domain::{AccountId, Kobo};
use billpay_store::clock::now_ms;
use billpay_store::work;
use billpay_store::*;
use std::time::Duration;

fn assign_line(subject: &str) -> NewLogEntry {
    NewLogEntry {
        actor: "cli".into(),
        action: "funding.assign".into(),
        subject: subject.into(),
        reason: Some("payer named the account".into()),
        ..NewLogEntry::default()
    }
}

fn payment(reference: &str, status: FundingStatus, account: Option<AccountId>) -> NewFunding {
    NewFunding {
        gateway: "monnify".into(),
        gateway_reference: reference.into(),
        status,
        account_id: account,
        amount: Kobo(500_000),
        fee: Kobo(7_500),
        currency: Some("NGN".into()),
        customer_ref: None,
        account_number: Some("9900000001".into()),
        payer: None,
        note: "test".into(),
    }
}

/// Every audit check passes (the usage tests call it too).
pub(crate) async fn assert_audit_clean(store: &SharedStore) {
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
async fn a_payment_is_credited_once_as_payment_then_fee() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    let new = payment("MNFY|1", FundingStatus::Credited, Some(account));
    let first = store.record_funding(new.clone()).await.unwrap();
    assert!(first.credited_now);
    assert_eq!(first.event.credited, Kobo(492_500));
    let again = store.record_funding(new).await.unwrap();
    assert!(!again.credited_now);
    assert_eq!(again.before, Some(FundingStatus::Credited));
    assert_eq!(store.balance(account).await.unwrap(), Kobo(492_500));
    let ledger = store.ledger(account, 10).await.unwrap();
    let kinds: Vec<_> = ledger.iter().rev().map(|e| (e.kind, e.amount)).collect();
    assert_eq!(
        kinds,
        [
            (LedgerKind::Credit, Kobo(500_000)),
            (LedgerKind::Fee, Kobo(-7_500))
        ]
    );
    assert_eq!(ledger[1].credit_source, CreditSource::gateway("monnify"));
    assert_invariant(&store, account).await;
    assert_audit_clean(&store).await;
}

#[tokio::test]
async fn concurrent_duplicates_credit_once() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    let tasks = (0..16)
        .map(|_| {
            let store = store.clone();
            let new = payment("MNFY|race", FundingStatus::Credited, Some(account));
            tokio::spawn(async move { store.record_funding(new).await.unwrap() })
        })
        .collect();
    let results = join_all(tasks).await;
    assert_eq!(results.iter().filter(|r| r.credited_now).count(), 1);
    assert_eq!(store.balance(account).await.unwrap(), Kobo(492_500));
    assert_audit_clean(&store).await;
}

#[tokio::test]
async fn a_failed_verify_never_overwrites_an_answer_and_pending_can_be_credited_later() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    let pending = payment("MNFY|p", FundingStatus::PendingVerification, None);
    let recorded = store.record_funding(pending.clone()).await.unwrap();
    assert_eq!(recorded.event.status, FundingStatus::PendingVerification);
    assert_eq!(recorded.event.credited, Kobo::ZERO);
    let credited = payment("MNFY|p", FundingStatus::Credited, Some(account));
    assert!(store.record_funding(credited).await.unwrap().credited_now);
    let late = store.record_funding(pending).await.unwrap();
    assert_eq!(late.event.status, FundingStatus::Credited);
    assert_eq!(store.balance(account).await.unwrap(), Kobo(492_500));
    assert_audit_clean(&store).await;
}

#[tokio::test]
async fn an_unmatched_payment_is_assigned_once() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    let unmatched = payment("MNFY|u", FundingStatus::Unmatched, None);
    let event = store.record_funding(unmatched).await.unwrap().event;
    let listed = store
        .funding_events(FundingFilter {
            status: Some(FundingStatus::Unmatched),
            limit: 10,
            ..FundingFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(listed, std::slice::from_ref(&event));
    let assigned = store
        .write(
            (
                event.id.to_string(),
                account,
                Kobo(0),
                "by cli".to_string(),
                assign_line(&event.id),
            ),
            |tx, (id, account, fee, note, log)| {
                Box::pin(work::assign_funding(tx, id, *account, *fee, note, log))
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (assigned.status, assigned.credited),
        (FundingStatus::Credited, Kobo(500_000))
    );
    let again = store
        .write(
            (
                event.id.to_string(),
                account,
                Kobo(0),
                "by cli".to_string(),
                assign_line(&event.id),
            ),
            |tx, (id, account, fee, note, log)| {
                Box::pin(work::assign_funding(tx, id, *account, *fee, note, log))
            },
        )
        .await;
    assert!(matches!(again, Err(StoreError::Invalid(_))), "{again:?}");
    assert_eq!(store.balance(account).await.unwrap(), Kobo(500_000));
    // The log line went in with the credit, and not with the refused second try.
    let filter = LogFilter {
        subject: Some(event.id.clone()),
        limit: 10,
        ..LogFilter::default()
    };
    let log = store.operator_log(filter).await.unwrap();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].action, "funding.assign");
    let by_reference = store.funding_event("MNFY|u").await.unwrap().unwrap();
    assert_eq!(by_reference.id, event.id);
    assert_audit_clean(&store).await;
}

#[tokio::test]
async fn reservations_name_their_owner() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    let accounts = vec![(
        "Wema Bank".into(),
        "9900000001".into(),
        "BILLPAY/TEST CO".into(),
    )];
    let reservation = NewReservation {
        account_id: account,
        gateway: "paystack".into(),
        customer_ref: "CUS_1".into(),
        accounts,
    };
    store.save_reservation(reservation.clone()).await.unwrap();
    store.save_reservation(reservation).await.unwrap();
    let held = store.reserved_accounts(Some(account)).await.unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].bank_name, "Wema Bank");
    let customer = store.funding_customer(account, "paystack").await.unwrap();
    assert_eq!(customer.as_deref(), Some("CUS_1"));
    let by_customer = store
        .funding_owner("paystack", Some("CUS_1"), None)
        .await
        .unwrap();
    let by_number = store
        .funding_owner("paystack", None, Some("9900000001"))
        .await
        .unwrap();
    let other_gateway = store
        .funding_owner("monnify", Some("CUS_1"), None)
        .await
        .unwrap();
    assert_eq!(
        (by_customer, by_number, other_gateway),
        (Some(account), Some(account), None)
    );
    assert_eq!(
        store.funding_customers("paystack").await.unwrap(),
        ["CUS_1"]
    );
}

#[tokio::test]
async fn a_job_lease_is_held_by_one_holder_until_it_expires() {
    let (_db, store) = store().await;
    let lease = Duration::from_millis(300);
    assert!(
        store
            .take_job_lease("reconcile", "node-a", lease)
            .await
            .unwrap()
    );
    assert!(
        !store
            .take_job_lease("reconcile", "node-b", lease)
            .await
            .unwrap()
    );
    assert!(
        store
            .take_job_lease("reconcile", "node-a", lease)
            .await
            .unwrap()
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        store
            .take_job_lease("reconcile", "node-b", lease)
            .await
            .unwrap()
    );
}

/// The funding checks catch a credit whose ledger entries do not match its
/// event, and a fee with no payment (possible only behind the store's back).
#[tokio::test]
async fn the_audit_names_a_funding_whose_entries_do_not_match() {
    let (db, store) = store().await;
    let (account, _) = account(&store).await;
    let new = payment("MNFY|audited", FundingStatus::Credited, Some(account));
    let event = store.record_funding(new).await.unwrap().event;
    assert_audit_clean(&store).await;
    let sql = format!(
        "UPDATE funding_events SET fee = 0 WHERE id = '{}'",
        event.id
    );
    crate::common::raw_sql(&db, &sql).await;
    let failed: Vec<_> = store
        .audit()
        .await
        .unwrap()
        .into_iter()
        .filter(|o| !o.passed())
        .collect();
    let names: Vec<_> = failed.iter().map(|o| o.name).collect();
    assert_eq!(names, ["funding_credited_exactly"], "{failed:?}");
    assert_eq!(
        failed[0].violations[0]["funding_id"].as_deref(),
        Some(event.id.as_str())
    );
    let sql = format!(
        "UPDATE funding_events SET status = 'unmatched' WHERE id = '{}'",
        event.id
    );
    crate::common::raw_sql(&db, &sql).await;
    let failed: Vec<_> = store
        .audit()
        .await
        .unwrap()
        .into_iter()
        .filter(|o| !o.passed())
        .map(|o| o.name)
        .collect();
    assert_eq!(
        failed,
        ["funding_credited_exactly", "funding_entries_have_a_payment"]
    );
}

#[tokio::test]
async fn funding_totals_sum_the_payments_and_fees_credited_in_the_range() {
    let (_db, store) = store().await;
    let (account, _) = account(&store).await;
    let before = billpay_store::clock::now_rfc3339();
    for reference in ["MNFY|T1", "MNFY|T2"] {
        let new = payment(reference, FundingStatus::Credited, Some(account));
        store.record_funding(new).await.unwrap();
    }
    let unmatched = payment("MNFY|T3", FundingStatus::Unmatched, None);
    store.record_funding(unmatched).await.unwrap();
    store
        .credit(account, Kobo(99), "not-funding")
        .await
        .unwrap();
    let everything = store.funding_totals("", "~").await.unwrap();
    assert_eq!(
        everything,
        FundingTotals {
            received: Kobo(1_000_000),
            payments: 2,
            fees: Kobo(15_000),
            by_card: Kobo::ZERO,
        },
        "credited payments and their fees only: not the unmatched one, not an operator credit"
    );
    let earlier = store.funding_totals("2000-01-01", &before).await.unwrap();
    assert_eq!(earlier, FundingTotals::default(), "until is exclusive");
    let later = store.funding_totals(&before, "~").await.unwrap();
    assert_eq!(later, everything);
}

#[tokio::test]
async fn funding_events_page_newest_first() {
    let (_db, store) = store().await;
    for n in 1..=3 {
        let reference = format!("MNFY|P{n}");
        let new = payment(&reference, FundingStatus::Unmatched, None);
        store.record_funding(new).await.unwrap();
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let page = |offset| {
        let store = store.clone();
        async move {
            let filter = FundingFilter {
                limit: 2,
                offset,
                ..FundingFilter::default()
            };
            let events = store.funding_events(filter).await.unwrap();
            events
                .into_iter()
                .map(|e| e.gateway_reference)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(page(0).await, ["MNFY|P3", "MNFY|P2"]);
    assert_eq!(page(2).await, ["MNFY|P1"]);
}

#[tokio::test]
async fn the_session_home_has_the_account_balance_latest_purchases_and_own_accounts() {
    let (_db, store) = store().await;
    let (buyer, key) = crate::common::funded_account(&store, 5_000).await;
    let (other, _) = account(&store).await;
    for (owner, number) in [(buyer, "9900000011"), (other, "9900000022")] {
        let reservation = NewReservation {
            account_id: owner,
            gateway: "paystack".into(),
            customer_ref: format!("CUS_{number}"),
            accounts: vec![("Wema Bank".into(), number.into(), "BILLPAY/X".into())],
        };
        store.save_reservation(reservation).await.unwrap();
    }
    for i in 0..3 {
        let new = crate::common::purchase(buyer, key, &format!("view-{i}"), 100);
        store.place_purchase(new).await.unwrap();
        // distinct creation times: the order below is theirs
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    store
        .create_session("home-session", buyer, now_ms() + 60_000)
        .await
        .unwrap();
    let home = store
        .session_home("home-session", 2)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(home.account.id, buyer);
    assert_eq!(home.account.balance, store.balance(buyer).await.unwrap());
    assert_eq!(home.account.balance, Kobo::from_naira(4_700));
    let view = home.wallet;
    let references: Vec<_> = view.recent.iter().map(|t| t.reference.as_str()).collect();
    assert_eq!(references, ["view-2", "view-1"], "the latest, newest first");
    let numbers: Vec<_> = view
        .reserved
        .iter()
        .map(|a| a.account_number.as_str())
        .collect();
    assert_eq!(numbers, ["9900000011"], "its own accounts only");
    store
        .create_session("home-expired", buyer, now_ms() - 1)
        .await
        .unwrap();
    assert!(
        store
            .session_home("home-expired", 2)
            .await
            .unwrap()
            .is_none()
    );
}
