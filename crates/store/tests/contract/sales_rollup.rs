//! The hourly sales rollup: written with each finalization and reversal,
//! built by the migration's backfill, checked by the audit.

use crate::common::{finalization, funded_account, purchase, raw_sql, store};
use billpay_domain::{Kobo, TxStatus};
use billpay_store::*;
use std::collections::BTreeMap;

type Key = (
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    &'static str,
);
type Sums = (u64, i64, i64, i64, i64, u64);

/// A rollup row's key and sums.
fn keyed(b: &SalesBucket) -> (Key, Sums) {
    let key = (
        b.hour.clone(),
        b.product.service().to_owned(),
        b.provider.clone(),
        b.supplier.clone(),
        b.tier.clone(),
        b.status.as_str(),
    );
    (key, tuple(&b.sums))
}

/// The sums as a tuple, to write expected rows short.
fn tuple(s: &SalesSums) -> Sums {
    (
        s.purchases,
        s.face_value.0,
        s.charged.0,
        s.cost.0,
        s.charged_with_cost.0,
        s.cost_unknown,
    )
}

/// The rollup's rows over every hour, by key.
async fn rollup(store: &SharedStore) -> BTreeMap<Key, Sums> {
    let mut rows = BTreeMap::new();
    for bucket in store.sales_rollup(String::new(), "~".into()).await.unwrap() {
        let (key, sums) = keyed(&bucket);
        assert!(rows.insert(key, sums).is_none(), "one row per key");
    }
    rows
}

/// The purchases' groups (`PricingStore::sales`, by account) summed over
/// accounts: what the rollup must hold.
async fn from_purchases(store: &SharedStore) -> BTreeMap<Key, Sums> {
    let mut rows: BTreeMap<Key, SalesSums> = BTreeMap::new();
    for group in store.sales(String::new(), "~".into()).await.unwrap() {
        let (key, _) = keyed(&group.bucket);
        rows.entry(key).or_default().add(&group.bucket.sums);
    }
    rows.into_iter().map(|(k, s)| (k, tuple(&s))).collect()
}

fn check<'a>(outcomes: &'a [audit::CheckOutcome], name: &str) -> &'a audit::CheckOutcome {
    outcomes.iter().find(|o| o.name == name).unwrap()
}

const CHECK: &str = "sales_rollup_equals_transactions";

/// Three purchases made final (one with a known cost, one without, one
/// failed), one left processing, on an account with a tier.
async fn sales(store: &SharedStore) -> Vec<String> {
    let (account, key) = funded_account(store, 1_000).await;
    let mut codes = Vec::new();
    for (i, (status, cost)) in [
        (TxStatus::Successful, Some(9_700)),
        (TxStatus::Successful, None),
        (TxStatus::Failed, None),
    ]
    .into_iter()
    .enumerate()
    {
        let mut new = purchase(account, key, &format!("r-{i}"), 100);
        new.amount = Kobo(9_800);
        new.tier = Some("reseller".into());
        let placed = store.place_purchase(new).await.unwrap();
        store
            .mark_submitted(&placed.code, "sandbox", None)
            .await
            .unwrap();
        let mut fin = finalization(status, false);
        fin.cost = cost.map(Kobo);
        assert!(store.finalize(&placed.code, fin).await.unwrap());
        codes.push(placed.code);
    }
    store
        .place_purchase(purchase(account, key, "r-open", 100))
        .await
        .unwrap();
    codes
}

#[tokio::test]
async fn each_finalization_is_counted_in_its_hour_and_a_reversal_moves_it_to_failed() {
    let (_db, store) = store().await;
    let codes = sales(&store).await;
    let rows = rollup(&store).await;
    assert_eq!(rows, from_purchases(&store).await);
    let hour = &store
        .transaction(None, TxLookup::Code(codes[0].clone()))
        .await
        .unwrap()
        .unwrap()
        .created_at[..13];
    let key = |status: TxStatus| {
        (
            hour.to_owned(),
            "airtime".to_owned(),
            "mtn".to_owned(),
            Some("sandbox".to_owned()),
            Some("reseller".to_owned()),
            status.as_str(),
        )
    };
    assert_eq!(
        rows[&key(TxStatus::Successful)],
        (2, 20_000, 19_600, 9_700, 9_800, 1)
    );
    assert_eq!(rows[&key(TxStatus::Failed)], (1, 10_000, 9_800, 0, 0, 1));
    assert_eq!(rows.len(), 2, "the processing one is in no row: {rows:?}");

    // The supplier reverses the one with a known cost: out of successful, into failed.
    assert!(
        store
            .finalize(&codes[0], finalization(TxStatus::Failed, true))
            .await
            .unwrap()
    );
    // Reversing it again changes nothing.
    assert!(
        !store
            .finalize(&codes[0], finalization(TxStatus::Failed, true))
            .await
            .unwrap()
    );
    let rows = rollup(&store).await;
    assert_eq!(
        rows[&key(TxStatus::Successful)],
        (1, 10_000, 9_800, 0, 0, 1)
    );
    assert_eq!(rows[&key(TxStatus::Failed)], (2, 20_000, 19_600, 0, 0, 2));
    assert_eq!(rows, from_purchases(&store).await);
    assert!(check(&store.audit().await.unwrap(), CHECK).passed());

    // A row whose only purchase was reversed is not read.
    let last = rows[&key(TxStatus::Successful)];
    assert_eq!(last.0, 1);
    assert!(
        store
            .finalize(&codes[1], finalization(TxStatus::Failed, true))
            .await
            .unwrap()
    );
    let rows = rollup(&store).await;
    assert!(!rows.contains_key(&key(TxStatus::Successful)), "{rows:?}");
    assert!(check(&store.audit().await.unwrap(), CHECK).passed());
}

#[tokio::test]
async fn the_rollup_is_read_by_hour_and_the_overview_summary_from_it() {
    let (_db, store) = store().await;
    sales(&store).await;
    let rows = rollup(&store).await;
    let hour = rows.keys().next().unwrap().0.clone();
    let start = format!("{hour}:00:00.000+00:00");
    let next = |h: &str| store.sales_rollup(h.to_owned(), "~".into());
    assert_eq!(
        next(&start).await.unwrap().len(),
        2,
        "from its hour's start"
    );
    let after = format!("{hour}:59:59.999+00:00");
    assert_eq!(
        store
            .sales_rollup(String::new(), start.clone())
            .await
            .unwrap()
            .len(),
        0,
        "until its hour's start"
    );
    assert_eq!(
        store
            .sales_rollup(String::new(), "2000".into())
            .await
            .unwrap(),
        vec![]
    );
    let summary = store.sales_summary(&start).await.unwrap();
    assert_eq!(
        (
            summary.successful_count,
            summary.successful_value,
            summary.failed_count,
            summary.refunded_value,
            summary.processing_count
        ),
        (2, 19_600, 1, 9_800, 1)
    );
    let later = store.sales_summary(&after).await.unwrap();
    assert_eq!(later.processing_count, 0, "placed before {after}");
}

#[tokio::test]
async fn a_keys_rows_in_several_shards_are_read_as_one() {
    let (db, store) = store().await;
    let start = {
        sales(&store).await;
        let rows = rollup(&store).await;
        format!("{}:00:00.000+00:00", rows.keys().next().unwrap().0)
    };
    let written = rollup(&store).await;
    let summary = |s: SalesSummary| (s.successful_count, s.successful_value, s.failed_count);
    let summarised = summary(store.sales_summary(&start).await.unwrap());
    // The successful row split as concurrent transactions would have
    // written it: the face value in another shard, the rest in its own.
    raw_sql(
        &db,
        "INSERT INTO sales_rollup_shards (hour, product, provider, supplier, tier, status, shard,
           purchases, face_value, charged, cost, charged_with_cost, cost_unknown)
         SELECT hour, product, provider, supplier, tier, status, shard + 1, 0, face_value, 0, 0,
           0, 0
         FROM sales_rollup_shards WHERE status = 'successful';
         UPDATE sales_rollup_shards SET face_value = 0
         WHERE status = 'successful' AND purchases > 0;",
    )
    .await;
    assert_eq!(
        rollup(&store).await,
        written,
        "one row a key, its shards summed"
    );
    assert_eq!(
        summary(store.sales_summary(&start).await.unwrap()),
        summarised
    );
    assert!(check(&store.audit().await.unwrap(), CHECK).passed());
}

/// Migration 046's statements, as they run on a database upgraded from a
/// release that wrote the unsharded `sales_rollup` of migration 038.
const FOLD: &str = include_str!("../../migrations/046_sales_rollup_folded/both.sql");

#[tokio::test]
async fn the_unsharded_rollup_is_folded_into_shard_0_once() {
    let (db, store) = store().await;
    sales(&store).await;
    let written = rollup(&store).await;
    // The rollup as a node of release 038 wrote it, in `sales_rollup`; the
    // shards keep the successful key's rows at zero (the fold adds to shard
    // 0 where it has the key) and lose the failed key's (it inserts them).
    raw_sql(
        &db,
        "INSERT INTO sales_rollup (hour, product, provider, supplier, tier, status, purchases,
           face_value, charged, cost, charged_with_cost, cost_unknown)
         SELECT hour, product, provider, supplier, tier, status, SUM(purchases),
           SUM(face_value), SUM(charged), SUM(cost), SUM(charged_with_cost), SUM(cost_unknown)
         FROM sales_rollup_shards GROUP BY hour, product, provider, supplier, tier, status;
         UPDATE sales_rollup_shards SET purchases = 0, face_value = 0, charged = 0, cost = 0,
           charged_with_cost = 0, cost_unknown = 0
         WHERE status = 'successful';
         DELETE FROM sales_rollup_shards WHERE status = 'failed';",
    )
    .await;
    assert_ne!(rollup(&store).await, written, "the shards alone are short");
    raw_sql(&db, FOLD).await;
    assert_eq!(rollup(&store).await, written, "folded into shard 0");
    // Folded again: the table is empty, so nothing is counted twice.
    raw_sql(&db, FOLD).await;
    assert_eq!(rollup(&store).await, written);
    assert!(check(&store.audit().await.unwrap(), CHECK).passed());
}

#[tokio::test]
async fn the_backfill_builds_the_rollup_the_finalizations_wrote() {
    let (db, store) = store().await;
    let codes = sales(&store).await;
    assert!(
        store
            .finalize(&codes[0], finalization(TxStatus::Failed, true))
            .await
            .unwrap()
    );
    let written = rollup(&store).await;
    raw_sql(
        &db,
        &format!(
            "DELETE FROM sales_rollup; DELETE FROM sales_rollup_shards; {};",
            sales_rollup_backfill()
        ),
    )
    .await;
    assert_eq!(rollup(&store).await, written);
    assert!(check(&store.audit().await.unwrap(), CHECK).passed());
}

#[tokio::test]
async fn a_rollup_that_is_not_the_purchases_fails_the_audit() {
    let (db, store) = store().await;
    sales(&store).await;
    raw_sql(
        &db,
        "UPDATE sales_rollup_shards SET charged = charged + 1 WHERE status = 'successful';
         DELETE FROM sales_rollup_shards WHERE status = 'failed';",
    )
    .await;
    let outcomes = store.audit().await.unwrap();
    for outcome in &outcomes {
        assert_eq!(outcome.passed(), outcome.name != CHECK, "{outcome:?}");
    }
    let mut violations = check(&outcomes, CHECK).violations.clone();
    violations.sort_by(|a, b| a["status"].cmp(&b["status"]));
    let text = |row: usize, column: &str| violations[row][column].clone();
    assert_eq!(violations.len(), 2, "{violations:?}");
    assert_eq!(text(0, "status").as_deref(), Some("failed"));
    assert_eq!(
        text(0, "purchases").as_deref(),
        Some("1"),
        "a purchase not in it"
    );
    assert_eq!(text(1, "status").as_deref(), Some("successful"));
    assert_eq!(
        text(1, "charged").as_deref(),
        Some("-1"),
        "a kobo more than the purchases"
    );
    assert_eq!(text(1, "purchases").as_deref(), Some("0"));
}
