//! The listings on SQLite's query planner: a page filtered by its account
//! (or a log by its subject), and the needs-review list, read through an
//! index, never every row (`crate::listing`).

use super::engine::Engine;
use crate::areas::{events, funding, notices, operators, purchases};
use crate::listing::Listing;
use crate::*;
use billpay_domain::{AccountId, Product, TxStatus};

/// The plan's lines that read every row of a table. The processing rows'
/// partial index holds the backlog only.
async fn full_scans(engine: &Engine, listing: Listing) -> Vec<String> {
    let scans = engine.read(move |conn| {
        let plan = super::query_plan(conn, &listing.sql)?;
        let backlog = |detail: &str| detail.ends_with("USING INDEX transactions_due");
        Ok(plan
            .into_iter()
            .map(|(_, detail)| detail)
            .filter(|detail| detail.starts_with("SCAN ") && !backlog(detail))
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
            status: Some(TxStatus::Failed),
            product: Some(Product::Data),
            search: Some("ref".into()),
            recipient: Some("0803".into()),
            created_from: Some("2026-11-01T00:00:00Z".into()),
            limit: 20,
            offset: 20,
            ..TxFilter::default()
        }),
        tx(TxFilter::needs_review("2026-11-27T00:00:00Z".into(), 500)),
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
    // The operator's unfiltered list has no index to read in its order (one
    // on `created_at` would be written by every purchase): it scans.
    let everything = tx(TxFilter {
        limit: 50,
        ..TxFilter::default()
    });
    assert_eq!(full_scans(&engine, everything).await.len(), 1);
}
