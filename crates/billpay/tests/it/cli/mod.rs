//! The operator CLI as operators use it: real processes against the same
//! database as a running server, `--json` printing exactly one object.

mod accounts;
mod audit;
mod backup;
mod catalogue;
mod privacy;
mod serve;
mod settings;

use crate::support::*;
use std::process::Command;

pub fn run_text(server: &TestServer, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .args(["--database-url", &server.database_url])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}
