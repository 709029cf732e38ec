//! Every table holding a customer's personal data is in the list erasure
//! and "Download my data" go by (`billpay_store::PERSONAL_DATA`), read from
//! the schema of a freshly migrated database of the backend under test.
//!
//! **The rule.** A table holds personal data when one of its columns ties
//! it to an account or names a person — a column named `account_id`,
//! `email`, `phone`, `recipient`, `payer`, `account_name` or `last4`, or
//! ending in `_email` or `_phone` — or when it has a foreign key to such a
//! table (a webhook attempt is its event's, an operator's session is the
//! operator's). Such a table must be in `PERSONAL_DATA` (with what erasure
//! does with it — deleted, masked, or kept and why — and whether the
//! download holds it, or why not) or in `STAFF_DATA` (the business's own
//! operators, not customers).

use crate::common::*;
use billpay_store::{Erased, Exported, OWN_ROWS, PERSONAL_DATA, PRUNABLE, STAFF_DATA};
use std::collections::{BTreeMap, BTreeSet};

/// Column names that tie a row to an account or name a person.
const PERSONAL_COLUMNS: &[&str] = &[
    "account_id",
    "email",
    "phone",
    "recipient",
    "payer",
    "account_name",
    "last4",
];

fn names_a_person(column: &str) -> bool {
    PERSONAL_COLUMNS.contains(&column) || column.ends_with("_email") || column.ends_with("_phone")
}

/// The schema's tables, each with its columns and the tables its foreign
/// keys reference.
async fn schema(db: &Db) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let (columns, references) = match db {
        Db::Sqlite(_) => (
            "SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'",
            "SELECT m.name, f.\"table\" FROM sqlite_master m, pragma_foreign_key_list(m.name) f
             WHERE m.type = 'table'",
        ),
        Db::Postgres(_) => (
            "SELECT c.table_name, c.column_name FROM information_schema.columns c
             JOIN information_schema.tables t
               ON t.table_schema = c.table_schema AND t.table_name = c.table_name
             WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'",
            "SELECT k.table_name, u.table_name FROM information_schema.table_constraints k
             JOIN information_schema.constraint_column_usage u
               ON u.constraint_schema = k.constraint_schema
              AND u.constraint_name = k.constraint_name
             WHERE k.constraint_type = 'FOREIGN KEY' AND k.table_schema = current_schema()",
        ),
    };
    let mut tables: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for row in raw_rows(db, columns).await {
        let (table, column) = (row[0].clone().unwrap(), row[1].clone().unwrap());
        tables.entry(table).or_default().0.push(column);
    }
    for row in raw_rows(db, references).await {
        let (table, referenced) = (row[0].clone().unwrap(), row[1].clone().unwrap());
        tables.entry(table).or_default().1.push(referenced);
    }
    tables
}

/// The tables the rule finds: by a column, then by a foreign key to one
/// found, until no more are.
fn personal_tables(schema: &BTreeMap<String, (Vec<String>, Vec<String>)>) -> BTreeSet<String> {
    let mut found: BTreeSet<String> = schema
        .iter()
        .filter(|(_, (columns, _))| columns.iter().any(|c| names_a_person(c)))
        .map(|(table, _)| table.clone())
        .collect();
    loop {
        let more: Vec<String> = schema
            .iter()
            .filter(|(table, (_, references))| {
                !found.contains(*table) && references.iter().any(|r| found.contains(r))
            })
            .map(|(table, _)| table.clone())
            .collect();
        if more.is_empty() {
            return found;
        }
        found.extend(more);
    }
}

#[tokio::test]
async fn every_table_naming_a_customer_is_erased_and_exported_or_says_why_not() {
    let (db, _store) = store().await;
    let schema = schema(&db).await;
    assert!(
        schema.contains_key("accounts"),
        "the schema was read: {schema:?}"
    );
    let listed: BTreeSet<&str> = PERSONAL_DATA.iter().map(|p| p.table).collect();
    let staff: BTreeSet<&str> = STAFF_DATA.iter().copied().collect();

    let missing: Vec<String> = personal_tables(&schema)
        .into_iter()
        .filter(|t| !listed.contains(t.as_str()) && !staff.contains(t.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "tables holding personal data that erasure and the data download do not know: \
         {missing:?}; give each a line in PERSONAL_DATA (areas/privacy.rs): deleted, masked \
         or kept (and why) by erasure, read by the download or left out (and why)"
    );

    assert_eq!(listed.len(), PERSONAL_DATA.len(), "a table listed twice");
    for table in listed.iter().chain(&staff) {
        assert!(
            schema.contains_key(*table),
            "{table} is listed but the schema has no such table"
        );
    }
    assert!(
        listed.is_disjoint(&staff),
        "a table both a customer's and staff's"
    );
    for personal in PERSONAL_DATA {
        let table = personal.table;
        if personal.erased == Erased::Deleted {
            assert!(
                schema[table].0.iter().any(|c| c == "account_id"),
                "{table}: erasure deletes by account_id, which it does not have"
            );
        }
        if let Erased::Kept(why) = personal.erased {
            assert!(!why.trim().is_empty(), "{table}: say why erasure keeps it");
        }
        let (Exported::By(what) | Exported::Left(what)) = personal.exported;
        assert!(
            !what.trim().is_empty(),
            "{table}: say what reads it, or why not"
        );
    }
}

/// Each (table, column) whose foreign key references `accounts`.
async fn references_to_accounts(db: &Db) -> BTreeSet<(String, String)> {
    let sql = match db {
        Db::Sqlite(_) => {
            "SELECT m.name, f.\"from\" FROM sqlite_master m, pragma_foreign_key_list(m.name) f
             WHERE m.type = 'table' AND f.\"table\" = 'accounts'"
        }
        Db::Postgres(_) => {
            "SELECT k.table_name, k.column_name FROM information_schema.table_constraints c
             JOIN information_schema.key_column_usage k
               ON k.constraint_schema = c.constraint_schema AND k.constraint_name = c.constraint_name
             JOIN information_schema.constraint_column_usage u
               ON u.constraint_schema = c.constraint_schema AND u.constraint_name = c.constraint_name
             WHERE c.constraint_type = 'FOREIGN KEY' AND c.table_schema = current_schema()
               AND u.table_name = 'accounts'"
        }
    };
    raw_rows(db, sql)
        .await
        .into_iter()
        .map(|row| (row[0].clone().unwrap(), row[1].clone().unwrap()))
        .filter(|(table, _)| table != "accounts")
        .collect()
}

/// Whether `PRUNABLE` keeps an account that has a row in `table` by `column`:
/// a clause `NOT EXISTS (SELECT 1 FROM table x WHERE x.column = a.id)`.
fn kept_by_prunable(table: &str, column: &str) -> bool {
    PRUNABLE.split("SELECT 1 FROM ").skip(1).any(|clause| {
        let mut words = clause.split_whitespace();
        let (Some(named), Some(alias)) = (words.next(), words.next()) else {
            return false;
        };
        named == table && clause.contains(&format!("{alias}.{column} = a.id"))
    })
}

/// Pruning a never-verified self sign-up deletes the account: every row
/// that references it must be deleted first (`OWN_ROWS`) or keep the account
/// (`PRUNABLE`), or the prune fails on the foreign key, or leaves rows of
/// an account that is gone.
#[tokio::test]
async fn every_table_referencing_an_account_is_pruned_with_it_or_keeps_it() {
    let (db, _store) = store().await;
    let references = references_to_accounts(&db).await;
    assert!(
        references.contains(&("sessions".to_owned(), "account_id".to_owned())),
        "the foreign keys were read: {references:?}"
    );
    let missing: Vec<String> = references
        .iter()
        .filter(|(table, column)| {
            let deleted = format!("DELETE FROM {table} WHERE {column} = ?1");
            !OWN_ROWS.contains(&deleted.as_str()) && !kept_by_prunable(table, column)
        })
        .map(|(table, column)| format!("{table}.{column}"))
        .collect();
    assert!(
        missing.is_empty(),
        "columns referencing accounts that the prune of unverified sign-ups neither \
         deletes (OWN_ROWS) nor keeps the account for (PRUNABLE), in areas/account_care.rs: \
         {missing:?}"
    );
}
