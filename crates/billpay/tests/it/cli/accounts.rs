//! Accounts, keys and wallets from the CLI, its text output and errors.

use super::*;
use crate::support::*;
use serde_json::{Value, json};
use std::process::Command;

/// Creates the account `ada@example.com` (with a password); returns it.
fn create_ada(server: &TestServer) -> Value {
    server.cli(&[
        "account",
        "create",
        "--name",
        "Ada Ventures",
        "--email",
        "ada@example.com",
        "--password",
        "correct horse",
    ])
}

/// Credits ₦1,500.50 to `id` under the reference `bank-1`.
fn credit_bank_1(server: &TestServer, id: &str) -> Value {
    server.cli(&[
        "wallet",
        "credit",
        "--account",
        id,
        "--amount",
        "1500.50",
        "--reference",
        "bank-1",
    ])
}

#[tokio::test]
async fn an_account_is_created_and_bad_input_is_a_clear_error() {
    let server = TestServer::spawn().await;
    let account = create_ada(&server);
    let id = account["account_id"].as_str().unwrap();
    assert_eq!(account["status"], "active");
    // duplicate email, bad email, short password: clear errors, non-zero exit
    for args in [
        vec![
            "account",
            "create",
            "--name",
            "X",
            "--email",
            "ada@example.com",
        ],
        vec![
            "account",
            "create",
            "--name",
            "X",
            "--email",
            "not-an-email",
        ],
        vec![
            "account",
            "create",
            "--name",
            "X",
            "--email",
            "b@example.com",
            "--password",
            "short",
        ],
    ] {
        let (ok, err) = server.cli_result(&args);
        assert!(!ok, "{args:?}");
        assert!(
            err["error"].as_str().is_some_and(|m| !m.is_empty()),
            "{err}"
        );
    }
    server.cli(&[
        "account",
        "set-password",
        id,
        "--password",
        "another long one",
    ]);
}

#[tokio::test]
async fn a_credit_takes_two_decimals_and_counts_once_per_reference() {
    let server = TestServer::spawn().await;
    let account = create_ada(&server);
    let id = account["account_id"].as_str().unwrap();
    assert_eq!(credit_bank_1(&server, id)["balance"], 1500.5);
    let again = credit_bank_1(&server, id);
    assert_eq!(
        (again["balance"].as_f64(), again["applied"].as_bool()),
        (Some(1500.5), Some(false))
    );
    for bad in ["1.001", "-5", "abc", "0"] {
        let (ok, _) = server.cli_result(&[
            "wallet",
            "credit",
            "--account",
            id,
            "--amount",
            bad,
            "--reference",
            "bank-x",
        ]);
        assert!(!ok, "amount {bad} accepted");
    }
    let (ok, _) = server.cli_result(&[
        "wallet",
        "credit",
        "--account",
        "00000000-0000-0000-0000-000000000000",
        "--amount",
        "1",
        "--reference",
        "r",
    ]);
    assert!(!ok, "unknown account credited");
    let statement = server.assert_ledger_consistent(id);
    assert_eq!(statement["entries"].as_array().unwrap().len(), 1);
}

/// A key, its rate limit, webhook URL and signing secret; neither the key
/// nor a secret is stored in clear.
#[tokio::test]
async fn a_key_gets_a_rate_limit_a_webhook_and_a_signing_secret_none_stored_in_clear() {
    let server = TestServer::spawn().await;
    let account = create_ada(&server);
    let id = account["account_id"].as_str().unwrap();
    assert_eq!(credit_bank_1(&server, id)["balance"], 1500.5);
    let key = server.cli(&["key", "create", "--account", id, "--name", "production"]);
    let api_key = key["api_key"].as_str().unwrap();
    assert!(api_key.starts_with("bp_live_") && api_key.len() == 72);
    assert_eq!(server.balance(api_key).await, 1500.5);
    let key_id = key["key_id"].as_str().unwrap();
    let limited = server.cli(&[
        "key",
        "set-rate-limit",
        key_id,
        "--per-second",
        "5",
        "--burst",
        "10",
    ]);
    assert_eq!(limited["rate_limit"], json!({"per_second": 5, "burst": 10}));
    let hooked = server.cli(&[
        "key",
        "webhook",
        key_id,
        "--url",
        "https://hooks.example.com/billpay",
    ]);
    assert_eq!(hooked["webhook_url"], "https://hooks.example.com/billpay");
    assert_eq!(
        server.cli(&["key", "webhook", key_id, "--url", ""])["webhook_url"],
        Value::Null
    );
    let first = server.cli(&["key", "webhook-security", key_id, "--enable"])["webhook_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = server.cli(&["key", "webhook-security", key_id, "--enable"])["webhook_secret"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(first, second);
    assert_eq!(
        server.cli(&["key", "webhook-security", key_id, "--disable"])["webhook_signing"],
        false
    );

    let statement = server.assert_ledger_consistent(id);
    assert_eq!(statement["entries"].as_array().unwrap().len(), 1);

    // the API key and the webhook secret are nowhere in the database in clear
    let db = server.database_contents().await;
    for secret in [api_key, first.as_str(), second.as_str()] {
        let needle = secret.as_bytes();
        assert!(
            !db.windows(needle.len()).any(|w| w == needle),
            "secret stored in clear"
        );
    }
}

#[tokio::test]
async fn concurrent_cli_credits_across_processes() {
    let server = TestServer::spawn().await;
    let id = server.cli(&[
        "account",
        "create",
        "--name",
        "Multi",
        "--email",
        "multi@example.com",
    ])["account_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let children: Vec<_> = (0..40)
        .map(|i| {
            let reference = if i % 2 == 0 {
                format!("distinct-{i}")
            } else {
                "shared-ref".to_owned()
            };
            Command::new(BIN)
                .args([
                    "wallet",
                    "credit",
                    "--json",
                    "--account",
                    &id,
                    "--amount",
                    "10.25",
                    "--reference",
                    &reference,
                ])
                .args(["--database-url", &server.database_url])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let statement = server.assert_ledger_consistent(&id);
    assert_eq!(statement["balance"], 21.0 * 10.25);
}

#[tokio::test]
async fn text_output_and_errors() {
    let server = TestServer::spawn().await;
    let (ok, out, _) = run_text(
        &server,
        &[
            "account",
            "create",
            "--name",
            "Plain",
            "--email",
            "plain@example.com",
        ],
    );
    assert!(ok && out.starts_with("Created account "), "{out}");
    let (ok, out, err) = run_text(&server, &["key", "suspend", "not-a-uuid"]);
    assert!(
        !ok && out.is_empty() && err.contains("invalid"),
        "{out} {err}"
    );
    let (ok, out, err) = run_text(&server, &["transaction", "show", "nope-nope"]);
    assert!(
        !ok && out.is_empty() && err.contains("no transaction"),
        "{err}"
    );
    let (ok, _, err) = run_text(
        &server,
        &[
            "key",
            "webhook",
            "00000000-0000-0000-0000-000000000000",
            "--url",
            "ftp://example.com",
        ],
    );
    assert!(!ok && err.contains("http"), "{err}");
    let (ok, out, _) = run_text(&server, &["migrate"]);
    assert!(ok && out.contains("up to date"));
}
