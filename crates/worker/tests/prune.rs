//! The hourly pruning jobs against a real store (SQLite, or PostgreSQL
//! with `BILLPAY_TEST_BACKEND=postgres`).

#[path = "../../store/tests/common/mod.rs"]
mod common;

use billpay_store::clock::{lagos_today, now_ms};
use billpay_worker::prune::PruneUsage;
use common::{raw_sql, store};

/// A pass removes usage past every limit's window (32 days ago, 3 hours
/// ago) and keeps the rest (the 31 days kept, the last 2 hours).
#[tokio::test]
async fn a_usage_pass_removes_only_what_no_limit_reads() {
    let (db, store) = store().await;
    let (account, _) = common::funded_account(&store, 1_000).await;
    let day = |n: i64| (lagos_today() - time::Duration::days(n)).to_string();
    let hour = now_ms().div_euclid(3_600_000);
    let (gone, kept) = (day(31), day(30));
    raw_sql(
        &db,
        &format!(
            "INSERT INTO limit_usage (account_id, day, value, count) VALUES
                 ('{account}', '{gone}', 100, 1), ('{account}', '{kept}', 100, 1);
             INSERT INTO recipient_usage (account_id, recipient, day, value) VALUES
                 ('{account}', '08031234567', '{gone}', 100),
                 ('{account}', '08031234567', '{kept}', 100);
             INSERT INTO hourly_usage (account_id, recipient, hour, count) VALUES
                 ('{account}', '', {}, 1), ('{account}', '', {}, 1)",
            hour - 3,
            hour - 2
        ),
    )
    .await;
    let prune = PruneUsage::new(store.clone());
    assert_eq!(prune.run_once().await.unwrap(), 3);
    assert_eq!(prune.run_once().await.unwrap(), 0);
    // What is left is all still there: a prune of everything finds it.
    let left = store.prune_usage(&day(-1), hour + 1).await.unwrap();
    assert_eq!(left, 3);
}
