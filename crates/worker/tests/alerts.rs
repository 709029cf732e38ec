//! The operators' alerts against a real store (SQLite, or PostgreSQL with
//! `BILLPAY_TEST_BACKEND=postgres`): one notice per operator and period
//! however often the check runs, another in a later period, none for an
//! operator who turned the alert off.

#[path = "../../store/tests/common/mod.rs"]
mod common;

use billpay_domain::Kobo;
use billpay_store::work;
use billpay_store::*;
use billpay_supplier::{
    Order, Supplier, SupplierError, SupplierStatus, Verification, VerifyRequest,
};
use billpay_worker::alerts::{AlertSettings, Alerts};
use common::{Db, raw_sql, store};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use time::macros::datetime;

/// A supplier whose float is whatever the test sets.
struct Float(AtomicI64);

#[async_trait::async_trait]
impl Supplier for Float {
    fn name(&self) -> &'static str {
        "vtpass"
    }
    async fn balance(&self) -> Option<Result<Kobo, SupplierError>> {
        Some(Ok(Kobo(self.0.load(Ordering::SeqCst))))
    }
    async fn verify(&self, _: &VerifyRequest) -> Result<Verification, SupplierError> {
        unreachable!("alerts only read the float")
    }
    async fn purchase(&self, _: &Order) -> Result<SupplierStatus, SupplierError> {
        unreachable!("alerts only read the float")
    }
    async fn requery(&self, _: &Order) -> Result<SupplierStatus, SupplierError> {
        unreachable!("alerts only read the float")
    }
}

async fn operator(store: &SharedStore, email: &str, role: OperatorRole) -> Operator {
    let new = NewOperator {
        email: email.into(),
        role,
        password_hash: "hash".into(),
    };
    let log = NewLogEntry {
        actor: "cli".into(),
        action: "operator.create".into(),
        ..NewLogEntry::default()
    };
    store
        .write((new, log), |tx, (new, log)| {
            Box::pin(work::create_operator(tx, new, log))
        })
        .await
        .unwrap()
}

async fn notices_of(store: &SharedStore, kind: &str) -> Vec<Notice> {
    let filter = NoticeFilter {
        limit: 100,
        ..NoticeFilter::default()
    };
    let all = store.notices(filter).await.unwrap();
    all.into_iter().filter(|n| n.kind == kind).collect()
}

struct World {
    db: Db,
    store: SharedStore,
    float: Arc<Float>,
    alerts: Alerts,
}

/// Float level ₦5,000 (the float starts at ₦1,000: low); the daily summary
/// from 23:00 Lagos, so that the checks at other hours see none.
async fn world() -> World {
    let (db, store) = store().await;
    let float = Arc::new(Float(AtomicI64::new(100_000)));
    let settings = AlertSettings {
        float_low: Some(Kobo(500_000)),
        summary_hour: 23,
        ..AlertSettings::default()
    };
    let suppliers: Vec<Arc<dyn Supplier>> = vec![float.clone()];
    let alerts = Alerts::new(store.clone(), suppliers, Arc::default(), settings);
    World {
        db,
        store,
        float,
        alerts,
    }
}

#[tokio::test]
async fn a_float_low_twice_in_an_hour_sends_one_notice_and_low_again_next_hour_another() {
    let w = world().await;
    let owner = operator(&w.store, "owner@example.com", OperatorRole::Owner).await;

    let ten = datetime!(2026-11-25 09:05 UTC); // 10:05 in Lagos
    assert_eq!(w.alerts.run_once(ten).await.unwrap(), 1);
    let later = datetime!(2026-11-25 09:50 UTC);
    assert_eq!(
        w.alerts.run_once(later).await.unwrap(),
        0,
        "same hour: nothing new"
    );
    let sent = notices_of(&w.store, "operator_float_low").await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].recipient, "owner@example.com");
    assert_eq!(sent[0].channel, "email");
    assert_eq!(sent[0].operator_id, Some(owner.id.to_string()));
    let cause = format!("float_low:vtpass:2026-11-25T10:op{}", owner.id);
    assert_eq!(sent[0].cause, cause);

    // Recovered: nothing while it is high, even in a new hour.
    w.float.0.store(900_000, Ordering::SeqCst);
    let eleven = datetime!(2026-11-25 10:10 UTC);
    assert_eq!(w.alerts.run_once(eleven).await.unwrap(), 0);
    // Low again in a later hour: another notice.
    w.float.0.store(200_000, Ordering::SeqCst);
    let noon = datetime!(2026-11-25 11:20 UTC);
    assert_eq!(w.alerts.run_once(noon).await.unwrap(), 1);
    assert_eq!(notices_of(&w.store, "operator_float_low").await.len(), 2);
}

#[tokio::test]
async fn an_alert_goes_to_each_operator_who_wants_it_and_the_summary_to_owners_only() {
    let w = world().await;
    let owner = operator(&w.store, "owner@example.com", OperatorRole::Owner).await;
    operator(&w.store, "help@example.com", OperatorRole::Support).await;
    let quiet = operator(&w.store, "quiet@example.com", OperatorRole::Support).await;
    let off = vec!["operator_float_low".to_owned()];
    w.store.set_alert_opt_outs(quiet.id, off).await.unwrap();

    // 23:30 in Lagos: the float is low and the summary is due.
    let night = datetime!(2026-11-25 22:30 UTC);
    assert_eq!(w.alerts.run_once(night).await.unwrap(), 3);
    let floats = notices_of(&w.store, "operator_float_low").await;
    let mut to: Vec<&str> = floats.iter().map(|n| n.recipient.as_str()).collect();
    to.sort();
    assert_eq!(to, ["help@example.com", "owner@example.com"]);
    let summaries = notices_of(&w.store, "operator_daily_summary").await;
    assert_eq!(summaries.len(), 1, "support gets no summary");
    assert_eq!(summaries[0].recipient, "owner@example.com");
    let cause = format!("daily_summary:2026-11-24:op{}", owner.id);
    assert_eq!(summaries[0].cause, cause);
    // The next check that night adds nothing: once a day.
    let later = datetime!(2026-11-25 22:45 UTC);
    assert_eq!(w.alerts.run_once(later).await.unwrap(), 0);
}

#[tokio::test]
async fn an_unmatched_payment_is_alerted_once() {
    let w = world().await;
    w.float.0.store(900_000, Ordering::SeqCst);
    operator(&w.store, "owner@example.com", OperatorRole::Owner).await;
    let new = NewFunding {
        gateway: "monnify".into(),
        gateway_reference: "MNFY|20261125|000001".into(),
        status: FundingStatus::Unmatched,
        account_id: None,
        amount: Kobo(500_000),
        fee: Kobo::ZERO,
        currency: Some("NGN".into()),
        customer_ref: None,
        account_number: Some("9900000001".into()),
        payer: Some("Bola Ade".into()),
        note: "no reserved account".into(),
    };
    w.store.record_funding(new).await.unwrap();
    // Before the summary hour (real time is now, so pin the hour to 10:00 Lagos today).
    let now = time::OffsetDateTime::now_utc().replace_time(time::macros::time!(09:00));
    assert_eq!(w.alerts.run_once(now).await.unwrap(), 1);
    assert_eq!(w.alerts.run_once(now).await.unwrap(), 0);
    assert_eq!(notices_of(&w.store, "operator_payment").await.len(), 1);
}

#[tokio::test]
async fn a_purchase_processing_too_long_is_a_backlog_alert() {
    let w = world().await;
    w.float.0.store(900_000, Ordering::SeqCst);
    operator(&w.store, "owner@example.com", OperatorRole::Owner).await;
    let (account, key) = common::funded_account(&w.store, 1_000).await;
    let purchase = common::purchase(account, key, "REF-OLD", 100);
    let placed = w.store.place_purchase(purchase).await.unwrap();
    let ten = datetime!(2026-11-25 09:05 UTC);
    assert_eq!(w.alerts.run_once(ten).await.unwrap(), 0, "just placed");
    // Placed long ago (the default alert is after 30 minutes processing).
    let sql = format!(
        "UPDATE transactions SET created_at = '2000-01-01T00:00:00.000Z' WHERE code = '{}'",
        placed.code
    );
    raw_sql(&w.db, &sql).await;
    assert_eq!(w.alerts.run_once(ten).await.unwrap(), 1);
    assert_eq!(w.alerts.run_once(ten).await.unwrap(), 0, "once an hour");
    assert_eq!(notices_of(&w.store, "operator_backlog").await.len(), 1);
}

/// A purchase held for review waits for an owner, not the supplier: however
/// old, it is no backlog alert (nor counted in one).
#[tokio::test]
async fn a_purchase_held_for_review_is_no_backlog_alert_but_a_held_one() {
    let w = world().await;
    w.float.0.store(900_000, Ordering::SeqCst);
    operator(&w.store, "owner@example.com", OperatorRole::Owner).await;
    let (account, key) = common::funded_account(&w.store, 1_000).await;
    let hold_all = billpay_store::limits::Limits {
        account_hourly_count: Some(0),
        account_hourly_action: Some(billpay_store::limits::RuleAction::Hold),
        ..Default::default()
    };
    let log = NewLogEntry {
        actor: "cli".into(),
        action: "limits.account".into(),
        subject: account.to_string(),
        ..NewLogEntry::default()
    };
    w.store
        .write((account, hold_all, log), |tx, (account, limits, log)| {
            Box::pin(work::set_account_limits_logged(tx, *account, limits, log))
        })
        .await
        .unwrap();
    let purchase = common::purchase(account, key, "REF-HELD", 100);
    let held = w.store.place_purchase(purchase).await.unwrap();
    assert!(held.held_for.is_some());
    let sql = format!(
        "UPDATE transactions SET created_at = '2000-01-01T00:00:00.000Z' WHERE code = '{}'",
        held.code
    );
    raw_sql(&w.db, &sql).await;
    let ten = datetime!(2026-11-25 09:05 UTC);
    // the one alert is that it waits for an owner (once), not a backlog
    assert_eq!(w.alerts.run_once(ten).await.unwrap(), 1);
    assert!(notices_of(&w.store, "operator_backlog").await.is_empty());
    let waiting = notices_of(&w.store, "operator_held").await;
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(waiting[0].data["code"], held.code.as_str());
    assert_eq!(w.alerts.run_once(ten).await.unwrap(), 0, "told once");
    assert_eq!(w.store.fulfilment_backlog().await.unwrap().processing, 0);
}

/// A purchase whose supplier's books cannot say whether it was bought is
/// flagged for review: each operator is told at once (not only once it is
/// old, nor only above the backlog's count), once, with the supplier and the
/// evidence; one merely pending at its supplier is no alert.
#[tokio::test]
async fn a_purchase_flagged_for_review_is_alerted_once() {
    let w = world().await;
    w.float.0.store(900_000, Ordering::SeqCst);
    let owner = operator(&w.store, "owner@example.com", OperatorRole::Owner).await;
    operator(&w.store, "help@example.com", OperatorRole::Support).await;
    let (account, key) = common::funded_account(&w.store, 1_000).await;
    let mut placed = Vec::new();
    for reference in ["REF-LOST", "REF-PENDING"] {
        let purchase = common::purchase(account, key, reference, 100);
        placed.push(w.store.place_purchase(purchase).await.unwrap());
    }
    let (lost, pending) = (&placed[0], &placed[1]);
    let lease = Duration::from_secs(30);
    assert_eq!(w.store.claim_fulfilments(10, lease).await.unwrap().len(), 2);
    for tx in &placed {
        let submitted = w.store.mark_submitted(&tx.code, "husmodata", None);
        submitted.await.unwrap();
    }
    let later = Duration::from_secs(60);
    w.store
        .reschedule(&pending.code, later, "supplier pending")
        .await
        .unwrap();
    w.store
        .reschedule(&lost.code, later, "supplier timed out")
        .await
        .unwrap();
    let ten = datetime!(2026-11-25 09:05 UTC);
    assert_eq!(
        w.alerts.run_once(ten).await.unwrap(),
        0,
        "unknown, not flagged"
    );

    let evidence = "needs the operator's review: no order found at husmodata for \
                    08000000500 (plan 6) in 1 page(s) of its data listing";
    w.store
        .request_review(&lost.code, later, evidence)
        .await
        .unwrap();
    assert_eq!(w.alerts.run_once(ten).await.unwrap(), 2, "one per operator");
    let told = notices_of(&w.store, "operator_review_requested").await;
    assert_eq!(told.len(), 2, "{told:?}");
    let to_owner = told.iter().find(|n| n.recipient == "owner@example.com");
    let to_owner = to_owner.expect("the owner is told");
    let cause = format!("review_requested:{}:op{}", lost.code, owner.id);
    assert_eq!(to_owner.cause, cause);
    let data = &to_owner.data;
    assert_eq!(data["code"], lost.code.as_str());
    assert_eq!(data["label"], lost.label.as_str());
    assert_eq!(data["recipient"], lost.recipient.as_str());
    assert_eq!(data["amount"], lost.amount.to_string());
    assert_eq!(data["supplier"], "husmodata");
    assert_eq!(data["evidence"], evidence);
    for time in ["placed", "asked"] {
        let at = data[time].as_str().unwrap_or_default();
        assert!(at.ends_with(" WAT"), "{time} in Lagos time: {data}");
    }
    assert!(
        notices_of(&w.store, "operator_backlog").await.is_empty(),
        "one needing review is under the backlog's count"
    );

    // The next checks, and the supplier's books asked again: still once.
    assert_eq!(w.alerts.run_once(ten).await.unwrap(), 0, "told once");
    w.store
        .request_review(&lost.code, later, "2 orders at husmodata match")
        .await
        .unwrap();
    let next_hour = datetime!(2026-11-25 10:05 UTC);
    assert_eq!(w.alerts.run_once(next_hour).await.unwrap(), 0, "still once");
    assert_eq!(
        notices_of(&w.store, "operator_review_requested")
            .await
            .len(),
        2
    );
}
