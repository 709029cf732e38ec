//! `billpay audit`: proves the money invariants on the database (see
//! `billpay_store::audit`); exit 1 with the offending rows on any violation.

use super::Output;
use super::output::action_error;
use billpay_operations::{Actor, audit};
use billpay_store::SharedStore;
use billpay_store::audit::CheckOutcome;
use serde_json::json;
use std::process::ExitCode;

pub async fn run(store: &SharedStore, out: &Output) -> anyhow::Result<ExitCode> {
    let outcomes = audit::run(store.as_ref(), &Actor::Cli)
        .await
        .map_err(action_error)?;
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    out.emit(
        json!({ "ok": failed == 0, "checks": outcomes }),
        report(&outcomes, failed),
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn report(outcomes: &[CheckOutcome], failed: usize) -> String {
    let mut text = String::new();
    for outcome in outcomes {
        let mark = if outcome.passed() { "ok  " } else { "FAIL" };
        text += &format!("{mark} {}: {}\n", outcome.name, outcome.rule);
        for row in &outcome.violations {
            let fields: Vec<String> = row
                .iter()
                .map(|(column, value)| format!("{column}={}", value.as_deref().unwrap_or("NULL")))
                .collect();
            text += &format!("     {}\n", fields.join(" "));
        }
    }
    text += &if failed == 0 {
        format!("Audit passed: {} checks, no violations.", outcomes.len())
    } else {
        format!(
            "Audit FAILED: {failed} of {} checks violated.",
            outcomes.len()
        )
    };
    text
}
