//! Suppliers' health and last known costs (issue 47), one row per supplier
//! every node shares: failures in a row back it off once (one "down" per
//! episode however many record at once), one probe at a time after the
//! back-off, a delivery brings it back; costs kept per supplier, product,
//! provider and plan, the newest winning.

use crate::common::{join_all, raw_sql, store};
use billpay_domain::Kobo;
use billpay_domain::supplier_health::{Answer, HealthRules, HealthState, Transition};
use billpay_store::clock::now_ms;
use billpay_store::*;

fn failure(supplier: &str, message: &str) -> HealthOutcome {
    HealthOutcome {
        supplier: supplier.to_owned(),
        answer: Some(Answer::Failure(message.to_owned())),
        cost: None,
    }
}

#[tokio::test]
async fn failures_at_once_back_off_once_and_one_probe_at_a_time_brings_it_back() {
    let (db, store) = store().await;
    let rules = HealthRules::default();
    assert!(store.supplier_health().await.unwrap().is_empty());
    // Ten failures at once (as several nodes would record them): one transition.
    let at_once = (0..10).map(|n| {
        let store = store.clone();
        tokio::spawn(async move {
            let outcome = failure("acme", &format!("refused {n}"));
            store.record_supplier_outcome(outcome, rules).await.unwrap()
        })
    });
    let recorded = join_all(at_once.collect()).await;
    let downs: Vec<_> = recorded.iter().filter_map(|(_, t)| *t).collect();
    assert_eq!(downs, [Transition::Down { episode: 1 }]);
    let all = store.supplier_health().await.unwrap();
    assert_eq!(all.len(), 1);
    let acme = &all[0];
    assert_eq!(
        (acme.supplier.as_str(), acme.failures, acme.episodes),
        ("acme", 10, 1)
    );
    assert_eq!(acme.last_errors.len(), 5, "the last five kept");
    let now = now_ms();
    assert!(
        matches!(acme.state(now), HealthState::BackingOff { until_ms } if until_ms > now + 50_000)
    );
    assert!(
        !store.take_supplier_probe("acme", rules).await.unwrap(),
        "still backing off"
    );

    // The back-off over (moved back in the row): one probe of twenty tries.
    raw_sql(&db, "UPDATE supplier_health SET backoff_until_ms = 1").await;
    let tries = (0..20).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.take_supplier_probe("acme", rules).await.unwrap() })
    });
    let taken = join_all(tries.collect()).await;
    assert_eq!(taken.iter().filter(|t| **t).count(), 1, "{taken:?}");
    let acme = &store.supplier_health().await.unwrap()[0];
    assert!(matches!(acme.state(now_ms()), HealthState::Probing { .. }));

    // The probe delivers: healthy again, told once.
    let delivered = HealthOutcome {
        supplier: "acme".into(),
        answer: Some(Answer::Delivered),
        cost: None,
    };
    let (acme, back) = store
        .record_supplier_outcome(delivered.clone(), rules)
        .await
        .unwrap();
    assert_eq!(back, Some(Transition::Back { episode: 1 }));
    assert_eq!(
        (acme.failures, acme.state(now_ms())),
        (0, HealthState::Healthy)
    );
    assert!(acme.back_at_ms.is_some());
    let (_, again) = store
        .record_supplier_outcome(delivered, rules)
        .await
        .unwrap();
    assert_eq!(again, None);
    // Another supplier has its own row.
    let (other, _) = store
        .record_supplier_outcome(failure("zeta", "no answer within 60 s"), rules)
        .await
        .unwrap();
    assert_eq!((other.failures, other.episodes), (1, 0));
    let names: Vec<_> = store
        .supplier_health()
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.supplier)
        .collect();
    assert_eq!(names, ["acme", "zeta"]);
}

#[tokio::test]
async fn the_newest_cost_of_each_supplier_and_plan_is_kept() {
    let (_db, store) = store().await;
    let rules = HealthRules::default();
    let cost = |supplier: &str, plan: &str, kobo: i64, at_ms: i64| HealthOutcome {
        supplier: supplier.to_owned(),
        answer: None,
        cost: Some(SupplierCost {
            supplier: supplier.to_owned(),
            product: "data".into(),
            provider: "mtn".into(),
            plan: plan.to_owned(),
            cost: Kobo(kobo),
            face_value: Kobo(60_000),
            at_ms,
        }),
    };
    for outcome in [
        cost("acme", "mtn-1gb", 25_000, 2),
        cost("acme", "mtn-1gb", 24_000, 3),
        cost("acme", "mtn-1gb", 99_999, 1), // older: ignored
        cost("zeta", "mtn-1gb", 30_000, 2),
        cost("acme", "", 9_800, 2),
    ] {
        let (health, transition) = store.record_supplier_outcome(outcome, rules).await.unwrap();
        assert_eq!(
            (health.failures, transition),
            (0, None),
            "a cost alone changes no health"
        );
    }
    let costs = store.supplier_costs().await.unwrap();
    let listed: Vec<_> = costs
        .iter()
        .map(|c| (c.supplier.as_str(), c.plan.as_str(), c.cost.0, c.at_ms))
        .collect();
    assert_eq!(
        listed,
        [
            ("acme", "", 9_800, 2),
            ("acme", "mtn-1gb", 24_000, 3),
            ("zeta", "mtn-1gb", 30_000, 2)
        ]
    );
}
