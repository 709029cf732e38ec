//! The listings on SQLite's query planner: a page filtered by its account
//! (or a log by its subject), the needs-review list and the operator's list
//! of every purchase, each read through its index, never every row
//! (`crate::listing`).

use super::engine::Engine;
use crate::areas::{events, funding, notices, operators, purchases};
use crate::listing::Listing;
use crate::*;
use billpay_domain::{AccountId, Product, TxStatus};

/// The plan's lines that read every row of a table, or sort them all: a
/// table scanned without an index, or an `ORDER BY` sorted whole. A scan
/// through an index reads it in the page's order and stops at the page (or
/// holds few rows: the processing rows' partial index is the backlog).
async fn full_scans(engine: &Engine, listing: Listing) -> Vec<String> {
    let scans = engine.read(move |conn| {
        let plan = super::query_plan(conn, &listing.sql)?;
        let reads_all = |detail: &str| {
            let scan = detail.starts_with("SCAN ");
            (scan && !detail.contains(" USING INDEX ")) || detail == "USE TEMP B-TREE FOR ORDER BY"
        };
        Ok(plan
            .into_iter()
            .map(|(_, detail)| detail)
            .filter(|detail| reads_all(detail))
            .collect())
    });
    scans.await.unwrap()
}

#[tokio::test]
async fn a_filtered_listing_reads_through_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("listing.db")).unwrap();
    let account = Some(AccountId::new());
    let lite = crate::db::Engine::Sqlite;
    let tx = |filter| purchases::listing(lite, &filter);
    let listings = [
        tx(TxFilter {
            account_id: account,
            limit: 20,
            ..TxFilter::default()
        }),
        tx(TxFilter {
            account_id: account,
            status: Some(TxStatus::Processing),
            limit: 20,
            ..TxFilter::default()
        }),
        tx(TxFilter {
            account_id: account,
            status: Some(TxStatus::Failed),
            product: Some(Product::Data),
            search: Some("ref".into()),
            recipient: Some("0803".into()),
            created_from: Some("2026-11-01T00:00:00Z".into()),
            limit: 20,
            offset: 20,
            ..TxFilter::default()
        }),
        events::listing(&EventFilter {
            account_id: account,
            key_id: None,
            failed_only: true,
            limit: 20,
        }),
        notices::listing(&NoticeFilter {
            status: None,
            account_id: account,
            channel: None,
            kind: None,
            limit: 20,
            offset: 0,
        }),
        funding::listing(&FundingFilter {
            account_id: account,
            status: None,
            gateway: None,
            limit: 20,
            offset: 0,
        }),
        operators::log_listing(&LogFilter {
            subject: Some("BP1".into()),
            operator_id: None,
            limit: 20,
            offset: 0,
        }),
    ];
    for listing in listings {
        let sql = listing.sql.clone();
        assert_eq!(
            full_scans(&engine, listing).await,
            Vec::<String>::new(),
            "{sql}"
        );
    }
}

/// The indexes a statement's plan reads (`USING INDEX x`, `USING COVERING INDEX x`).
async fn indexes_read(engine: &Engine, sql: String) -> Vec<String> {
    let plan = engine.read(move |conn| Ok(super::query_plan(conn, &sql)?));
    let plan = plan.await.unwrap();
    plan.into_iter()
        .filter_map(|(_, detail)| {
            Some(
                detail
                    .split(" INDEX ")
                    .nth(1)?
                    .split(' ')
                    .next()?
                    .to_owned(),
            )
        })
        .collect()
}

/// The creation-time index serves the operator's list of every purchase; the processing rows stay on their own partial
/// index, which the planner would otherwise leave for it to spare a sort.
#[tokio::test]
async fn every_purchase_is_listed_by_time_and_the_backlog_by_its_own_index() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("by_time.db")).unwrap();
    let lite = crate::db::Engine::Sqlite;
    let tx = |filter| purchases::listing(lite, &filter).sql;
    let everything = tx(TxFilter {
        limit: 50,
        offset: 100,
        ..TxFilter::default()
    });
    let since = tx(TxFilter {
        created_from: Some("2026-11-01T00:00:00Z".into()),
        limit: 50,
        ..TxFilter::default()
    });
    for sql in [everything, since] {
        assert_eq!(
            indexes_read(&engine, sql.clone()).await,
            ["transactions_created"],
            "{sql}"
        );
    }
    let processing = tx(TxFilter {
        status: Some(TxStatus::Processing),
        limit: 50,
        ..TxFilter::default()
    });
    let needs_review = tx(TxFilter::needs_review("2026-11-27T00:00:00Z".into(), 500));
    let flagged = tx(TxFilter::review_requested(100));
    let count = crate::areas::fulfilment::needs_review_count_sql(lite);
    // the overview's summary: the rollup by its key, the processing ones by theirs
    let summary = crate::areas::sales_rollup::SUMMARY.sql(lite).to_owned();
    for sql in [processing, needs_review, flagged, count, summary] {
        assert_eq!(
            indexes_read(&engine, sql.clone()).await,
            ["transactions_due"],
            "{sql}"
        );
    }
}
