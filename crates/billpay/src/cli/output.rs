//! CLI output: one JSON object with `--json`, friendly text without.

use serde_json::{Value, json};

pub struct Output {
    pub json: bool,
}

impl Output {
    pub fn emit(&self, value: Value, text: impl Into<String>) {
        if self.json {
            println!("{value}");
        } else {
            println!("{}", text.into());
        }
    }

    pub fn error(&self, error: &anyhow::Error) {
        let message = format!("{error:#}");
        if self.json {
            println!("{}", json!({ "error": message }));
        }
        eprintln!("error: {message}");
    }
}

/// An operator action's error as the CLI words it: an input is named by its
/// flag (`--per-second and --burst must be at least 1`).
pub fn action_error(error: billpay_operations::OpsError) -> anyhow::Error {
    match error {
        billpay_operations::OpsError::Invalid(invalid) => {
            let flags: Vec<String> = invalid
                .fields
                .iter()
                .map(|field| format!("--{}", field.replace('_', "-")))
                .collect();
            anyhow::anyhow!("{} {}", flags.join(" and "), invalid.rule)
        }
        billpay_operations::OpsError::BelowCost(below) => anyhow::anyhow!(
            "{}: nothing changed; give --allow-below-cost to set it anyway",
            billpay_operations::below_cost_text(&below)
        ),
        other => other.into(),
    }
}
