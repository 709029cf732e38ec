//! The one throttle (the hardening issue's "throttles are per process"): a
//! counter per (scope, key) in the database, taken by one conditional
//! UPSERT, so tries at once (on any node) never pass the bound; a success
//! clears it; a window ended lets in again and is pruned. (The identity
//! checks count in it too: `limits.rs`.)

use crate::common::{join_all, raw_sql, store};
use billpay_domain::throttle::{ACCOUNT_SECRETS, Bound, OPERATOR_SECRETS, Who};
use billpay_store::clock::now_ms;
use billpay_store::*;
use std::time::Duration;

#[tokio::test]
async fn twenty_tries_at_once_take_only_the_bounds_five() {
    let (_db, store) = store().await;
    let key = Who::account("ada@example.com").key();
    let tries = (0..20).map(|_| {
        let (store, key) = (store.clone(), key.clone());
        tokio::spawn(async move { store.take_throttle(ACCOUNT_SECRETS, &key).await.unwrap() })
    });
    let taken = join_all(tries.collect()).await;
    let mut counted: Vec<u32> = taken
        .iter()
        .filter_map(|t| match t {
            Taken::Counted { tries } => Some(*tries),
            Taken::Locked { .. } => None,
        })
        .collect();
    counted.sort_unstable();
    assert_eq!(counted, [1, 2, 3, 4, 5], "{taken:?}");
    let Taken::Locked { until_ms } = store.take_throttle(ACCOUNT_SECRETS, &key).await.unwrap()
    else {
        panic!("locked");
    };
    let left = until_ms - now_ms();
    assert!(left > 14 * 60_000 && left <= 15 * 60_000, "{left} ms left");
    let other = Who::operator("ada@example.com");
    assert_eq!(
        store
            .take_throttle(OPERATOR_SECRETS, &other.key())
            .await
            .unwrap(),
        Taken::Counted { tries: 1 },
        "an operator of the same email counts apart"
    );
}

#[tokio::test]
async fn a_success_clears_and_an_ended_window_starts_afresh_and_is_pruned() {
    let (db, store) = store().await;
    let who = Who::account("ada@example.com");
    for _ in 0..4 {
        assert!(secret_try(store.as_ref(), who).await.unwrap().is_ok());
    }
    secret_right(store.as_ref(), who).await.unwrap();
    for _ in 0..5 {
        assert!(secret_try(store.as_ref(), who).await.unwrap().is_ok());
    }
    let locked = secret_try(store.as_ref(), who).await.unwrap();
    assert!(locked.is_err_and(|l| l.minutes() == 15), "{locked:?}");

    let short = Bound {
        scope: "test-short",
        most: 1,
        window: Duration::from_secs(3600),
    };
    assert_eq!(
        store.take_throttle(short, "k").await.unwrap(),
        Taken::Counted { tries: 1 }
    );
    assert!(matches!(
        store.take_throttle(short, "k").await.unwrap(),
        Taken::Locked { .. }
    ));
    raw_sql(
        &db,
        "UPDATE throttles SET until_ms = 1 WHERE scope = 'test-short'",
    )
    .await;
    assert_eq!(
        store.take_throttle(short, "k").await.unwrap(),
        Taken::Counted { tries: 1 },
        "the window ended: afresh"
    );
    raw_sql(
        &db,
        "UPDATE throttles SET until_ms = 1 WHERE scope = 'test-short'",
    )
    .await;
    assert_eq!(
        store.prune_throttles(now_ms()).await.unwrap(),
        1,
        "only the ended one"
    );
    assert!(
        secret_try(store.as_ref(), who).await.unwrap().is_err(),
        "kept"
    );
}
