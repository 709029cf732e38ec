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
