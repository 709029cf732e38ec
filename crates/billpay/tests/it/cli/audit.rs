//! `billpay audit`: passes a clean database and names the rows of each kind
//! of corruption.

use super::*;
use crate::support::*;
use serde_json::Value;

/// The violations `audit` reported for one check.
fn violations<'a>(report: &'a Value, check: &str) -> &'a Vec<Value> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == check)
        .unwrap_or_else(|| panic!("no check {check}: {report}"))["violations"]
        .as_array()
        .unwrap()
}

/// Two ₦1,500 electricity purchases of `customer`, final: the reference codes
/// of the successful one and of the failed (refunded) one.
async fn successful_and_failed(server: &TestServer, customer: &Customer) -> (String, String) {
    let mut codes = Vec::new();
    for meter in ["45012345678", "45012340000"] {
        let body = electricity(&reference(), meter, 1500.0);
        let code = server
            .place(&customer.api_key, "/v1/electricity/purchase", body)
            .await;
        server.wait_final(&customer.api_key, &code).await;
        codes.push(code);
    }
    let failed = codes.pop().unwrap();
    (codes.pop().unwrap(), failed)
}

#[tokio::test]
async fn audit_passes_a_clean_database_and_names_the_rows_of_a_corrupted_one() {
    let mut server = TestServer::spawn().await;
    let customer = server.customer("20000");
    let (successful, failed) = &successful_and_failed(&server, &customer).await;

    let (passed, report) = server.audit();
    assert!(passed, "{report}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["checks"].as_array().unwrap().len(), 18, "{report}");

    // Corrupt it behind the store's back: lose the refund of the failed
    // purchase (the append-only trigger disabled) and the successful one's event.
    server.kill();
    let corrupt = |disable_trigger: &str| {
        format!(
            "{disable_trigger};
             DELETE FROM ledger WHERE kind = 'refund' AND transaction_code = '{failed}';
             DELETE FROM webhook_attempts WHERE event_id IN
                 (SELECT id FROM events WHERE transaction_code = '{successful}');
             DELETE FROM events WHERE transaction_code = '{successful}';"
        )
    };
    server
        .raw_sql(
            &corrupt("DROP TRIGGER ledger_append_only_delete"),
            // The killed server's last statements may still be finishing on
            // PostgreSQL (a delivery attempt committing between the two
            // deletes): the lock makes them wait for the corruption instead.
            &corrupt(
                "LOCK TABLE webhook_attempts, events IN SHARE ROW EXCLUSIVE MODE;
                 ALTER TABLE ledger DISABLE TRIGGER ledger_append_only",
            ),
        )
        .await;
    server.skip_final_audit();

    let (passed, report) = server.audit();
    assert!(!passed, "{report}");
    assert_eq!(report["ok"], false);
    let balance = violations(&report, "balance_equals_ledger");
    assert_eq!(balance.len(), 1, "{report}");
    assert_eq!(balance[0]["account_id"], customer.account_id.as_str());
    assert_eq!(balance[0]["balance"], "1850000");
    assert_eq!(balance[0]["ledger_sum"], "1700000");
    let refunds = violations(&report, "refunded_once_if_failed");
    assert_eq!(refunds.len(), 1, "{report}");
    assert_eq!(refunds[0]["reference_code"], failed.as_str());
    assert_eq!(refunds[0]["status"], "failed");
    assert_eq!(refunds[0]["refunds"], "0");
    let events = violations(&report, "final_has_one_event");
    assert_eq!(events.len(), 1, "{report}");
    assert_eq!(events[0]["reference_code"], successful.as_str());
    assert_eq!(events[0]["events"], "0");
    for clean in [
        "debited_once",
        "priced_purchase",
        "reference_used_once",
        "credit_reference_once",
        "no_negative_balance",
    ] {
        assert!(violations(&report, clean).is_empty(), "{clean}: {report}");
    }

    // Without --json: the failing checks and their rows, exit 1.
    let (ok, text, _) = run_text(&server, &["audit"]);
    assert!(!ok);
    assert!(text.contains("FAIL refunded_once_if_failed"), "{text}");
    assert!(text.contains(&format!("reference_code={failed}")), "{text}");
    assert!(
        text.contains("Audit FAILED: 3 of 18 checks violated."),
        "{text}"
    );
}

/// The audit's other money checks, each shown catching its own corruption:
/// a successful purchase refunded, a purchase debited twice, a ledger entry
/// whose balance_after is not the running sum, and a negative balance.
/// (`reference_used_once` and `credit_reference_once` can only fire once the
/// unique indexes that enforce them are gone.)
#[tokio::test]
async fn audit_catches_refunds_of_successes_double_debits_broken_running_sums_and_negatives() {
    let mut server = TestServer::spawn().await;
    let customer = server.customer("20000");
    let other = server.customer("100");
    let (successful, failed) = &successful_and_failed(&server, &customer).await;
    assert!(server.audit().0, "clean before the corruption");
    server.kill();

    // Each money move keeps balance = ledger for `customer`, so only the
    // checks aimed at are violated; `other` goes negative in both.
    let id = &customer.account_id;
    let other_id = &other.account_id;
    let post = |kind: &str, amount: i64, code: &str| {
        format!(
            "UPDATE accounts SET balance = balance + ({amount}) WHERE id = '{id}';
             INSERT INTO ledger (account_id, amount, kind, balance_after, transaction_code, created_at)
             VALUES ('{id}', {amount}, '{kind}', (SELECT balance FROM accounts WHERE id = '{id}'),
                     '{code}', '2026-01-01T00:00:00.000+00:00');"
        )
    };
    let corrupt = |unlock: &str| {
        format!(
            "{unlock}
             {refund_success}
             {debit_again}
             UPDATE ledger SET balance_after = balance_after + 1
                 WHERE account_id = '{id}' AND kind = 'credit';
             UPDATE accounts SET balance = -100 WHERE id = '{other_id}';",
            refund_success = post("refund", 150_000, successful),
            debit_again = post("debit", -150_000, failed),
        )
    };
    server
        .raw_sql(
            &corrupt(
                "DROP TRIGGER ledger_append_only_update; PRAGMA ignore_check_constraints = ON;",
            ),
            &corrupt(
                "ALTER TABLE ledger DISABLE TRIGGER ledger_append_only;
                 ALTER TABLE accounts DROP CONSTRAINT accounts_balance_check;",
            ),
        )
        .await;
    server.skip_final_audit();

    let (passed, report) = server.audit();
    assert!(!passed, "{report}");
    let refunded = violations(&report, "refunded_once_if_failed");
    assert_eq!(refunded.len(), 1, "{report}");
    assert_eq!(refunded[0]["reference_code"], successful.as_str());
    assert_eq!(refunded[0]["status"], "successful");
    let debited = violations(&report, "debited_once");
    assert_eq!(debited.len(), 1, "{report}");
    assert_eq!(debited[0]["reference_code"], failed.as_str());
    assert_eq!(debited[0]["debits"], "2");
    let running = violations(&report, "ledger_running_balance");
    assert_eq!(running.len(), 1, "{report}");
    assert_eq!(running[0]["account_id"], id.as_str());
    let negative = violations(&report, "no_negative_balance");
    assert_eq!(negative.len(), 1, "{report}");
    assert_eq!(negative[0]["account_id"], other_id.as_str());
    assert_eq!(negative[0]["balance"], "-100");
    // `other`'s balance no longer equals its ledger; `customer`'s still does.
    let balance = violations(&report, "balance_equals_ledger");
    assert_eq!(balance.len(), 1, "{report}");
    assert_eq!(balance[0]["account_id"], other_id.as_str());
    for clean in [
        "final_has_one_event",
        "priced_purchase",
        "reference_used_once",
        "credit_reference_once",
    ] {
        assert!(violations(&report, clean).is_empty(), "{clean}: {report}");
    }
}

/// Accounts stored before every address was canonical, whose addresses reach
/// one mailbox: `billpay audit` names them and how to resolve it, `serve`
/// warns of them at start and rewrites only a lone address; none is merged.
#[tokio::test]
async fn accounts_sharing_one_mailbox_are_reported_by_audit_and_at_start_never_merged() {
    let mut server = TestServer::spawn().await;
    let suffix = rand_suffix();
    let create = |email: String| {
        let created = server.cli(&["account", "create", "--name", "Older", "--email", &email]);
        created["account_id"].as_str().unwrap().to_owned()
    };
    let ada = create(format!("ada-{suffix}@example.com"));
    let bola = create(format!("bola-{suffix}@example.com"));
    let emile = create(format!("emile-{suffix}@example.com"));

    // As older versions stored them: a display name, an accented capital.
    server.kill();
    let older = format!(
        "UPDATE accounts SET email = 'x<ada-{suffix}@example.com>' WHERE id = '{bola}';
         UPDATE accounts SET email = 'ÉMILE-{suffix}@example.com' WHERE id = '{emile}';"
    );
    server.raw_sql(&older, &older).await;
    server.skip_final_audit();

    let (ok, text, _) = run_text(&server, &["audit"]);
    assert!(!ok, "{text}");
    assert!(text.contains("FAIL one_account_per_address"), "{text}");
    for id in [&ada, &bola] {
        assert!(text.contains(&format!("account_id={id}")), "{text}");
    }
    assert!(text.contains("never merged automatically"), "{text}");
    assert!(!text.contains(&format!("account_id={emile}")), "{text}");

    server.set_env(&[("BILLPAY_LOG", "warn")]);
    server.start();
    let logs = String::from_utf8(server.logs()).unwrap();
    let warning = logs
        .lines()
        .find(|l| l.contains("one address (one mailbox)"))
        .unwrap_or_else(|| panic!("no warning: {logs}"));
    assert!(
        warning.contains(&ada) && warning.contains(&bola),
        "{warning}"
    );
    assert!(warning.contains("billpay audit"), "{warning}");

    let shown = |id: &str| server.cli(&["account", "show", id])["email"].clone();
    assert_eq!(
        shown(&emile),
        format!("émile-{suffix}@example.com"),
        "lone: made canonical"
    );
    assert_eq!(
        shown(&bola),
        format!("x<ada-{suffix}@example.com>"),
        "left to the operator"
    );
    assert_eq!(shown(&ada), format!("ada-{suffix}@example.com"));
}
