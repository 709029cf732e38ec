//! The transaction listing on SQLite's query planner: a filtered list reads
//! through an index, never every purchase (`areas/purchases.rs`,
//! `list_statement`).

use super::engine::Engine;
use crate::TxFilter;
use crate::areas::purchases::{ListValues, list_statement};
use billpay_domain::{AccountId, Product, TxStatus};

/// The plan's lines that read every purchase.
async fn full_scans(engine: &Engine, filter: TxFilter) -> Vec<String> {
    let scans = engine.read(move |conn| {
        let values = ListValues::of(&filter);
        let (sql, _) = list_statement(crate::db::Engine::Sqlite, &filter, &values);
        let mut plan = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
        // Its parameters left unbound: the plan is the same whatever they are.
        let mut rows = plan.raw_query();
        let mut scans = Vec::new();
        while let Some(row) = rows.next()? {
            let detail: String = row.get(3)?;
            // The processing rows' partial index holds the backlog only.
            let backlog = detail.ends_with("USING INDEX transactions_due");
            if detail.starts_with("SCAN transactions") && !backlog {
                scans.push(detail);
            }
        }
        Ok(scans)
    });
    scans.await.unwrap()
}

#[tokio::test]
async fn an_accounts_list_and_the_needs_review_list_read_through_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("listing.db")).unwrap();
    let account = Some(AccountId::new());
    let filters = [
        TxFilter {
            account_id: account,
            limit: 20,
            ..TxFilter::default()
        },
        TxFilter {
            account_id: account,
            status: Some(TxStatus::Failed),
            product: Some(Product::Data),
            search: Some("ref".into()),
            recipient: Some("0803".into()),
            created_from: Some("2026-11-01T00:00:00Z".into()),
            limit: 20,
            offset: 20,
            ..TxFilter::default()
        },
        TxFilter::needs_review("2026-11-27T00:00:00Z".into(), 500),
    ];
    for filter in filters {
        let shown = format!("{filter:?}");
        assert_eq!(
            full_scans(&engine, filter).await,
            Vec::<String>::new(),
            "{shown}"
        );
    }
    // The operator's unfiltered list has no index to read in its order (one
    // on `created_at` would be written by every purchase): it scans.
    let everything = TxFilter {
        limit: 50,
        ..TxFilter::default()
    };
    assert_eq!(full_scans(&engine, everything).await.len(), 1);
}
