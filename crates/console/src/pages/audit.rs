//! The money audit (any operator): each invariant of `billpay audit`,
//! passed or failed with the rows that break it. It reads the whole
//! database, so it runs when the page is asked for, never in the background.

use super::{Chrome, Done, PageResult, actor, refused, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use billpay_operations::audit;

pub struct CheckRow {
    pub name: &'static str,
    pub rule: &'static str,
    pub passed: bool,
    /// Each offending row as `column=value` pairs (at most [`SHOWN`]).
    pub violations: Vec<String>,
    /// Offending rows beyond those shown.
    pub more: usize,
}

/// Offending rows shown per check: enough to find the cause.
const SHOWN: usize = 50;

#[derive(Template)]
#[template(path = "audit.html")]
struct AuditPage {
    chrome: Chrome,
    checks: Vec<CheckRow>,
    failed: usize,
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    let outcomes = audit::run(state.store.as_ref(), &actor(&signed_in))
        .await
        .map_err(refused)?;
    let checks: Vec<CheckRow> = outcomes
        .iter()
        .map(|o| CheckRow {
            name: o.name,
            rule: o.rule,
            passed: o.passed(),
            violations: o.violations.iter().take(SHOWN).map(row_text).collect(),
            more: o.violations.len().saturating_sub(SHOWN),
        })
        .collect();
    Ok(render(&AuditPage {
        chrome: Chrome::new(&signed_in, "audit", &done),
        failed: checks.iter().filter(|c| !c.passed).count(),
        checks,
    }))
}

/// As `billpay audit` prints an offending row.
fn row_text(row: &billpay_store::audit::AuditRow) -> String {
    let fields: Vec<String> = row
        .iter()
        .map(|(column, value)| format!("{column}={}", value.as_deref().unwrap_or("NULL")))
        .collect();
    fields.join(" ")
}
