//! What the writer runs for purchases with the workers: no statement but the
//! workers' claim (one per batch of purchases) builds a temporary B-tree
//! (docs/decisions.md, "No temporary B-tree on a purchase's path").

use super::SqliteStore;
use crate::*;
use billpay_domain::{Kobo, Product, PurchaseDetails, TxStatus};
use rusqlite::Connection;
use rusqlite::trace::{TraceEvent, TraceEventCodes};
use std::sync::Mutex;
use std::time::Duration;

/// The statements the writer ran while traced.
static RAN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn record(event: TraceEvent<'_>) {
    if let TraceEvent::Stmt(statement, _) = event {
        RAN.lock().unwrap().push(statement.sql().into_owned());
    }
}

/// How many temporary B-trees `sql`'s program opens (`OpenEphemeral`: for
/// `RETURNING`, for a stored subquery, for an `IN` list of more than two
/// values, a CHECK's among them).
fn temporary_btrees(conn: &Connection, sql: &str) -> usize {
    let mut program = conn.prepare(&format!("EXPLAIN {sql}")).unwrap();
    // Its parameters left unbound: the program is the same whatever they are.
    let mut rows = program.raw_query();
    let mut count = 0;
    while let Some(row) = rows.next().unwrap() {
        count += usize::from(row.get::<_, String>(1).unwrap() == "OpenEphemeral");
    }
    count
}

/// A ₦100 MTN airtime purchase by `account`'s `key`, reference `path-{n}`.
pub(crate) fn purchase(
    account: billpay_domain::AccountId,
    key: billpay_domain::KeyId,
    n: u32,
) -> NewPurchase {
    NewPurchase {
        account_id: account,
        key_id: key,
        reference: format!("path-{n}"),
        product: Product::Airtime,
        provider: "mtn".into(),
        plan_id: None,
        label: "MTN Airtime".into(),
        recipient: "08031234567".into(),
        amount: Kobo::from_naira(100),
        face_value: Kobo::from_naira(100),
        tier: None,
        details: PurchaseDetails {
            phone: Some("08031234567".into()),
            ..PurchaseDetails::default()
        },
    }
}

fn finalization(status: TxStatus) -> Finalization {
    Finalization {
        status,
        message: status.to_string(),
        result: serde_json::json!({}),
        completed_at_ms: clock::now_ms(),
        event_payload: "{}".into(),
        reversal: false,
        cost: None,
        watch_at_ms: None,
    }
}

#[tokio::test]
async fn a_purchase_with_the_workers_builds_no_temporary_btree_but_its_claim() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("path.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    let account = store
        .create_account(NewAccount {
            name: "A".into(),
            email: "path@example.com".into(),
            password_hash: None,
            kyc_level: limits::OPERATOR_CREATED_LEVEL,
        })
        .await
        .unwrap();
    let key = store
        .create_api_key(NewApiKey {
            account_id: account.id,
            name: None,
            key_hash: "path".into(),
            display_prefix: "bp".into(),
            announce: true,
        })
        .await
        .unwrap();
    store
        .credit(account.id, Kobo::from_naira(1_000), "fund")
        .await
        .unwrap();
    let trace = |on: bool| {
        store.engine.write(move |conn| {
            conn.trace_v2(TraceEventCodes::SQLITE_TRACE_STMT, on.then_some(record));
            Ok(())
        })
    };
    trace(true).await.unwrap();
    // One delivered (its event skipped: the key has no webhook URL), one
    // failed (refunded, its usage given back).
    for (n, status) in [(1, TxStatus::Successful), (2, TxStatus::Failed)] {
        let placed = store
            .place_purchase(purchase(account.id, key.id, n))
            .await
            .unwrap();
        let claimed = store
            .claim_fulfilments(10, Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(claimed.len(), 1);
        store
            .mark_submitted(&placed.code, "sandbox", None)
            .await
            .unwrap();
        let changed = store
            .finalize(&placed.code, finalization(status))
            .await
            .unwrap();
        assert!(changed);
    }
    trace(false).await.unwrap();
    let ran = std::mem::take(&mut *RAN.lock().unwrap());
    let claim = |sql: &str| {
        sql.trim_start()
            .starts_with("UPDATE transactions SET lease_until")
    };
    assert!(ran.iter().any(|sql| claim(sql)), "the claim ran: {ran:#?}");
    assert!(ran.len() > 20, "the whole path was traced: {ran:#?}");
    let building = store
        .engine
        .read(move |conn| {
            Ok(ran
                .into_iter()
                .filter(|sql| !claim(sql))
                .map(|sql| (temporary_btrees(conn, &sql), sql))
                .filter(|(btrees, _)| *btrees > 0)
                .collect::<Vec<_>>())
        })
        .await
        .unwrap();
    assert!(building.is_empty(), "temporary B-trees: {building:#?}");
}

/// The checks the migration turned into comparisons still refuse what they
/// refused.
#[tokio::test]
async fn a_check_written_as_comparisons_still_refuses_an_unknown_value() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("checks.db").display());
    let store = SqliteStore::open(&url).await.unwrap();
    let refused = store
        .engine
        .write(|conn| {
            let insert = "INSERT INTO ledger (account_id, amount, kind, balance_after, created_at)
                          VALUES ('a', 1, 'gift', 1, 'now')";
            Ok(conn.execute(insert, []).map_err(|e| e.to_string()))
        })
        .await
        .unwrap();
    let error = refused.expect_err("a ledger kind outside the list");
    assert!(error.contains("CHECK constraint failed"), "{error}");
    let tables = store
        .engine
        .read(|conn| {
            let mut stmt = conn.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table'")?;
            let sql = stmt.query_map([], |row| row.get::<_, String>(0))?;
            Ok(sql.collect::<Result<Vec<_>, _>>()?)
        })
        .await
        .unwrap();
    let lists: Vec<&String> = tables
        .iter()
        .filter(|sql| sql.contains("', '") && sql.matches("IN (").count() > 0)
        .filter(|sql| {
            sql.split("IN (")
                .skip(1)
                .any(|list| list.split(')').next().unwrap_or("").matches(',').count() >= 2)
        })
        .collect();
    assert!(
        lists.is_empty(),
        "a CHECK with an IN list of three or more: {lists:#?}"
    );
}
