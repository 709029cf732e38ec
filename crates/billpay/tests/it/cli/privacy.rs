//! Data protection (issue 32, NDPA): `billpay account close` and `billpay
//! account erase`. An open account is never erased; a closed one's name,
//! email, phone and recipients leave the database while the ledger and the
//! audit keep working, and its old email can be used again.

use crate::dashboard::{PASSWORD, save_phone};
use crate::support::*;

/// Whether `needle` (any case) is anywhere in `haystack`.
fn holds(haystack: &[u8], needle: &str) -> bool {
    found_in(haystack, needle).is_some()
}

/// What surrounds the first `needle` (any case) in `haystack`, to name the
/// table it was found in.
fn found_in(haystack: &[u8], needle: &str) -> Option<String> {
    let text = String::from_utf8_lossy(haystack).to_lowercase();
    let at = text.find(&needle.to_lowercase())?;
    let (from, to) = (
        at.saturating_sub(200),
        (at + needle.len() + 200).min(text.len()),
    );
    let around = text.get(from..to).unwrap_or_default();
    Some(around.chars().filter(|c| !c.is_control()).collect())
}

#[tokio::test]
async fn an_erased_account_leaves_no_personal_data_and_the_audit_still_passes() {
    let mut server = TestServer::spawn().await;
    let n = rand_suffix();
    let (email, name) = (format!("ada-{n}@example.com"), format!("Ada Okafor {n}"));
    // The phone's last 10 digits: whichever form it is stored in holds them.
    // (never ending in the sandbox's 0000 or 1111: it buys)
    let digits: String = n
        .chars()
        .rev()
        .filter(char::is_ascii_digit)
        .take(6)
        .collect();
    let phone = format!("0803{digits:5<6}2");
    let meter = format!("450{digits:5<6}27");
    let account = server.cli(&[
        "account",
        "create",
        "--name",
        &name,
        "--email",
        &email,
        "--password",
        PASSWORD,
    ]);
    let id = account["account_id"].as_str().unwrap().to_owned();
    server.cli(&[
        "wallet",
        "credit",
        "--account",
        &id,
        "--amount",
        "5000",
        "--reference",
        "fund-1",
    ]);
    save_phone(&server, &email, &name, &phone).await;
    let key = server.cli(&["key", "create", "--account", &id]);
    let key = key["api_key"].as_str().unwrap();
    let code = server
        .place(
            key,
            "/v1/electricity/purchase",
            electricity(&reference(), &meter, 1500.0),
        )
        .await;
    server.wait_final(key, &code).await;

    // Open: refused, nothing changed.
    let (ok, refused) = server.cli_result(&["account", "erase", &id, "--reason", "asked"]);
    assert!(!ok, "an open account was erased: {refused}");
    let message = refused["error"].as_str().unwrap();
    assert!(message.contains("is open"), "{message}");
    assert!(message.contains("close it first"), "{message}");
    assert_eq!(
        server.cli(&["account", "show", &id])["email"],
        email.as_str()
    );

    // Money in the wallet: not closed.
    let (ok, refused) = server.cli_result(&["account", "close", &id, "--reason", "asked"]);
    assert!(!ok, "an account with money was closed: {refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("still has 3500.00"),
        "{refused}"
    );
    server.cli(&[
        "wallet",
        "debit",
        "--account",
        &id,
        "--amount",
        "3500",
        "--reference",
        "payout-1",
        "--reason",
        "paid back to the customer's bank",
    ]);
    let closed = server.cli(&["account", "close", &id, "--reason", "customer asked"]);
    assert!(closed["closed_at"].is_string(), "{closed}");
    let (ok, refused) = server.cli_result(&["account", "reactivate", &id]);
    assert!(!ok, "a closed account was reactivated: {refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("stays closed"),
        "{refused}"
    );
    let erased = server.cli(&["account", "erase", &id, "--reason", "NDPA request"]);
    let tombstone = format!("erased-{id}");
    assert_eq!(
        erased["erased"]["tombstone"],
        tombstone.as_str(),
        "{erased}"
    );
    assert_eq!(erased["erased"]["purchases"], 1, "{erased}");
    let shown = server.cli(&["account", "show", &id]);
    assert_eq!(shown["email"], tombstone.as_str());
    assert_eq!(shown["name"], tombstone.as_str());
    assert!(shown["erased_at"].is_string(), "{shown}");
    // Its key no longer opens anything (the API's key cache is at most
    // half a second old).
    let mut status = 0;
    for _ in 0..20 {
        status = server.get(key, "/v1/wallet/balance").await.status;
        if status == 401 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, 401, "an erased account's key still works");
    let (ok, again) = server.cli_result(&["account", "erase", &id, "--reason", "again"]);
    assert!(
        !ok && again["error"].as_str().unwrap().contains("already erased"),
        "{again}"
    );

    // The money's history and the audit are whole.
    let (passed, report) = server.audit();
    assert!(passed, "{report}");
    let statement = server.assert_ledger_consistent(&id);
    assert_eq!(
        statement["entries"].as_array().unwrap().len(),
        3,
        "{statement}"
    );
    let log = server.cli(&["operator", "log", "--subject", &id]);
    let log = log.to_string();
    assert!(
        log.contains("account.erase") && log.contains("account.close"),
        "{log}"
    );

    // Nowhere in the database (SQLite: the file, once the server has
    // checkpointed and closed it).
    if !server.is_postgres() {
        server.terminate();
        // (a shutdown that ran out of time leaves the WAL: the old frames go
        // at the next checkpoint, as the README says)
        server.raw_sql("PRAGMA wal_checkpoint(TRUNCATE);", "").await;
    }
    let database = server.database_contents().await;
    let phone_digits = &phone[1..];
    for (what, text) in [
        ("email", email.as_str()),
        ("name", name.as_str()),
        ("phone", phone_digits),
        ("meter number", meter.as_str()),
    ] {
        let found = found_in(&database, text);
        assert!(
            found.is_none(),
            "the erased {what} {text} is still stored: …{}…",
            found.unwrap_or_default()
        );
    }
    assert!(
        holds(&database, &tombstone),
        "the search found nothing at all"
    );
    if !server.is_postgres() {
        server.start();
    }

    // The address is free again.
    let again = server.cli(&["account", "create", "--name", "Ada", "--email", &email]);
    assert_ne!(again["account_id"], id.as_str());
}
