//! `billpay`: the server (`billpay serve`) and the operator CLI, one binary.

mod cli;

use clap::Parser;
use clap::error::ErrorKind;

fn main() -> std::process::ExitCode {
    match cli::Cli::try_parse() {
        Ok(args) => cli::run(args),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            e.exit()
        }
        Err(e) => {
            // Usage errors keep the --json promise: one JSON object on stdout.
            if std::env::args().any(|a| a == "--json") {
                let message = e.render().to_string();
                let first = message
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ");
                println!("{}", serde_json::json!({ "error": first }));
            }
            e.exit()
        }
    }
}
