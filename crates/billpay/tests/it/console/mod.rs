//! The operator console (`/admin`) through the real binary: an owner's and a
//! support operator's day in headless Chromium, the CLI's operator commands
//! and the operator log they share. The role rules and CSRF of every form
//! are checked in process (`crates/console/tests/forms.rs`).

mod account;
pub(crate) mod catalogue;
mod daily;
mod erase;
mod held;
mod held_told;
mod journey;
mod journey_catalogue;
mod journey_daily;
mod journey_money;
mod journey_owner;
mod limits;
mod money;
// The routing tests read the Suppliers page too.
pub(crate) use money::{admin, page};
mod notifications;
mod phone;
mod pin_lock;
mod referrals;
mod reset_link;
mod rollup;
mod sign_in;
mod takeover;

use crate::support::*;

pub const OWNER: &str = "boss@example.com";
pub const SUPPORT: &str = "help@example.com";
pub const PASSWORD: &str = "correct horse battery";

/// A server whose supplier is unreachable (purchases stay processing) and
/// whose needs-review bound is 0 s, with an owner and a support operator.
pub async fn server_with_operators() -> TestServer {
    let env = [
        ("BILLPAY_SANDBOX_UNREACHABLE", "true"),
        ("BILLPAY_NEEDS_REVIEW_AFTER_SECS", "0"),
    ];
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    add_operators(&server);
    server
}

/// An owner ([`OWNER`]) and a support operator ([`SUPPORT`]), both with [`PASSWORD`].
pub fn add_operators(server: &TestServer) {
    for (email, role) in [(OWNER, "owner"), (SUPPORT, "support")] {
        let created = server.cli(&[
            "operator",
            "create",
            "--email",
            email,
            "--role",
            role,
            "--password",
            PASSWORD,
        ]);
        assert_eq!(created["operator"]["role"], role);
    }
}

#[tokio::test]
async fn the_cli_manages_operators_and_shows_the_log() {
    let server = server_with_operators().await;
    let (ok, again) = server.cli_result(&[
        "operator",
        "create",
        "--email",
        "BOSS@example.com",
        "--role",
        "support",
    ]);
    assert!(!ok, "an email is unique in any case: {again}");
    let generated = server.cli(&[
        "operator",
        "create",
        "--email",
        "new@example.com",
        "--role",
        "support",
    ]);
    let password = generated["generated_password"].as_str().unwrap();
    assert!(password.len() >= 16);
    let totp = server.cli(&["operator", "totp", OWNER, "--enable"]);
    let uri = totp["otpauth_uri"].as_str().unwrap();
    assert!(uri.starts_with("otpauth://totp/"), "{uri}");
    server.cli(&["operator", "disable", "new@example.com"]);
    let list = server.cli(&["operator", "list"]);
    let ops = list["operators"].as_array().unwrap();
    assert_eq!(ops.len(), 3);
    assert!(
        ops.iter().all(|o| o.get("password_hash").is_none()),
        "no hash printed"
    );
    let customer = server.customer("100");
    let (ok, refused) = server.cli_result(&[
        "wallet",
        "debit",
        "--account",
        &customer.account_id,
        "--amount",
        "500",
        "--reference",
        "d1",
        "--reason",
        "too much",
    ]);
    assert!(!ok, "{refused}");
    server.cli(&[
        "wallet",
        "debit",
        "--account",
        &customer.account_id,
        "--amount",
        "40",
        "--reference",
        "d2",
        "--reason",
        "duplicate funding",
    ]);
    let log = server.cli(&["operator", "log", "--subject", &customer.account_id]);
    let entries = log["entries"].as_array().unwrap();
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions.first(), Some(&"wallet.debit"), "{actions:?}");
    assert_eq!(entries[0]["before"], "balance 100.00");
    assert_eq!(entries[0]["after"], "balance 60.00 (-40.00, reference d2)");
    assert_eq!(entries[0]["reason"], "duplicate funding");
    assert_eq!(entries[0]["actor"], "cli");
    assert!(actions.contains(&"wallet.credit") && actions.contains(&"account.create"));
    let all = server.cli(&["operator", "log"]);
    let all = all["entries"].as_array().unwrap();
    assert!(
        all.iter()
            .any(|e| e["action"] == "operator.totp" && e["subject"] == OWNER)
    );
}
