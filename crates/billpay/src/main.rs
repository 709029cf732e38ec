//! `billpay`: the server (`billpay serve`) and the operator CLI, one binary.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    cli::run(args)
}
