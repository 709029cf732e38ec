//! The audit's checks on SQLite's query planner: none may be quadratic.
//! (The audit itself is `areas/audit.rs`.)

use super::engine::Engine;
use crate::audit::sql_checks;
use rusqlite::Connection;

/// The loops of a query plan that read a whole table (or build a
/// throw-away index, a whole read per run) once per row of an outer loop:
/// what makes a check quadratic. SQLite lists a join's loops as siblings,
/// outermost first, so every loop after the first must be an index search.
fn nested_scans(conn: &Connection, sql: &str) -> Vec<String> {
    let mut seen_parents = std::collections::HashSet::new();
    let mut nested = Vec::new();
    for (parent, detail) in super::query_plan(conn, sql).unwrap() {
        let is_loop = detail.starts_with("SCAN ") || detail.starts_with("SEARCH ");
        let inner = is_loop && !seen_parents.insert(parent);
        if inner && (detail.starts_with("SCAN ") || detail.contains("AUTOMATIC")) {
            nested.push(detail);
        }
    }
    nested
}

#[tokio::test]
async fn no_check_scans_a_table_inside_a_loop() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("plans.db")).unwrap();
    let nested = engine
        .read(|conn| {
            Ok(sql_checks()
                .map(|check| (check.name, nested_scans(conn, check.sql)))
                .filter(|(_, scans)| !scans.is_empty())
                .collect::<Vec<_>>())
        })
        .await
        .unwrap();
    assert!(nested.is_empty(), "quadratic checks: {nested:?}");
}
