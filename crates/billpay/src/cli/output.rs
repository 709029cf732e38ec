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

/// An input the command refused (a flag's value broke its rule): the process
/// exits 2, as for a flag clap refuses, not 1.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The exit code for `error`: 2 for a refused input ([`UsageError`]), else 1.
pub fn exit_code(error: &anyhow::Error) -> std::process::ExitCode {
    if error.downcast_ref::<UsageError>().is_some() {
        std::process::ExitCode::from(2)
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// An operator action's error as the CLI words it: an input is named by its
/// flag (`--per-second and --burst must be at least 1`) and exits 2.
pub fn action_error(error: billpay_operations::OpsError) -> anyhow::Error {
    match error {
        billpay_operations::OpsError::Invalid(invalid) => {
            let flags: Vec<String> = invalid
                .fields
                .iter()
                .map(|field| format!("--{}", field.replace('_', "-")))
                .collect();
            UsageError(format!("{} {}", flags.join(" and "), invalid.rule)).into()
        }
        billpay_operations::OpsError::BelowCost(below) => anyhow::anyhow!(
            "{}: nothing changed; give --allow-below-cost to set it anyway",
            billpay_operations::below_cost_text(&below)
        ),
        other => other.into(),
    }
}
