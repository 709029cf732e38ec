//! `billpay catalogue sync --supplier NAME [--apply]` (and the aliases that
//! name a supplier, `catalogue.rs`): the differences of
//! `billpay_operations::sync` printed; `--apply` applies them.

use super::Output;
use billpay_operations::Actor;
use billpay_operations::sync::{Difference, sync};
use billpay_store::SharedStore;
use serde_json::{Value, json};

/// `theirs` is written under the supplier's name (`"acme": 650.0`).
fn to_json(difference: &Difference, supplier: &str) -> Value {
    let mut value = json!(difference);
    if let Some(theirs) = value.as_object_mut().and_then(|o| o.remove("theirs")) {
        value[supplier] = theirs;
    }
    value
}

/// `name`: the supplier to compare with (an alias names it; `sync` takes
/// `--supplier`, else BILLPAY_SUPPLIER).
pub async fn run(
    name: Option<&str>,
    apply_changes: bool,
    settings: &super::Settings,
    store: &SharedStore,
    out: &Output,
) -> anyhow::Result<()> {
    let name = name.unwrap_or(&settings.supplier);
    let supplier = super::supplier::real(settings, name)?
        .ok_or_else(|| anyhow::anyhow!("the {name} supplier publishes no plan list"))?;
    let synced = sync(store.as_ref(), Actor::Cli, supplier.as_ref(), apply_changes)
        .await
        .map_err(super::output::action_error)?;
    let differences = synced.differences;
    let text = differences
        .iter()
        .map(|d| describe(d, name))
        .collect::<Vec<_>>()
        .join("\n");
    let footer = match (differences.is_empty(), apply_changes) {
        (true, _) => format!("The catalogue matches {name}"),
        (false, true) => "Applied: prices (or a site's codes and expected costs) taken, missing plans disabled; add new plans to the catalogue TOML yourself".to_owned(),
        (false, false) => format!("Nothing changed: run again with --apply to take {name}'s prices and disable missing plans"),
    };
    let listed: Vec<Value> = differences.iter().map(|d| to_json(d, name)).collect();
    out.emit(
        json!({ "differences": listed, "applied": synced.applied }),
        format!("{text}\n{footer}").trim_start().to_owned(),
    );
    Ok(())
}

fn describe(difference: &Difference, supplier: &str) -> String {
    match difference {
        Difference::Price {
            provider,
            plan_id,
            ours,
            theirs,
        } => {
            format!("price    {provider} {plan_id}: ours {ours}, {supplier} {theirs}")
        }
        Difference::Missing { provider, plan_id } => {
            format!("missing  {provider} {plan_id}: not sold by {supplier}")
        }
        Difference::New {
            provider,
            variation_code,
            name,
            price,
        } => {
            format!("new      {provider} {variation_code} \"{name}\" at {price}")
        }
        Difference::Matched {
            provider,
            plan_id,
            code,
            name,
            cost,
        } => format!(
            "matched  {provider} {plan_id}: {supplier}'s plan {code} \"{name}\", expected cost {cost}"
        ),
        Difference::Cost {
            provider,
            plan_id,
            expected,
            theirs,
        } => format!(
            "cost     {provider} {plan_id}: expected {}, {supplier} lists {theirs}",
            expected.map_or_else(|| "unknown".to_owned(), |e| e.to_string())
        ),
        Difference::Unmatched { provider, plan_id } => {
            format!("unmatched {provider} {plan_id}: no plan of {supplier}'s list (not sold there)")
        }
    }
}
