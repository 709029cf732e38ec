//! The operator CLI as operators use it: real processes against the same
//! database as a running server, `--json` printing exactly one object.


use serde_json::{Value, json};
use std::process::Command;
use crate::support::*;

fn run_text(server: &TestServer, args: &[&str]) -> (bool, String, String) {
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

#[tokio::test]
async fn accounts_keys_and_wallets() {
    let server = TestServer::spawn().await;
    let account = server.cli(&[
        "account",
        "create",
        "--name",
        "Ada Ventures",
        "--email",
        "ada@example.com",
        "--password",
        "correct horse",
    ]);
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

    // credits: 2-decimal rule, idempotent by reference
    assert_eq!(
        server.cli(&[
            "wallet",
            "credit",
            "--account",
            id,
            "--amount",
            "1500.50",
            "--reference",
            "bank-1"
        ])["balance"],
        1500.5
    );
    let again = server.cli(&[
        "wallet",
        "credit",
        "--account",
        id,
        "--amount",
        "1500.50",
        "--reference",
        "bank-1",
    ]);
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

#[tokio::test]
async fn catalogue_import_export_and_plans() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let (ok, toml, _) = run_text(&server, &["catalogue", "export"]);
    assert!(ok && toml.contains("[[providers]]"));
    // raise a plan's price in an edited copy and import it
    let edited = toml.replacen("price = 19000.0", "price = 19500.0", 1);
    assert_ne!(edited, toml, "DStv Compact price not found in the export");
    let file = server.path().join("edited.toml");
    std::fs::write(&file, &edited).unwrap();
    let imported = server.cli(&["catalogue", "import", file.to_str().unwrap()]);
    assert_eq!(imported["providers"], 32);
    let exported = server.cli(&["catalogue", "export"]);
    let plans = exported["catalogue"]["cable_plans"].as_array().unwrap();
    assert!(plans.iter().any(|p| p["price"] == 19500.0));

    // a broken file is refused and changes nothing
    std::fs::write(
        &file,
        edited.replacen("provider = \"dstv\"", "provider = \"nobody\"", 1),
    )
    .unwrap();
    let (ok, err) = server.cli_result(&["catalogue", "import", file.to_str().unwrap()]);
    assert!(!ok, "{err}");
    assert_eq!(
        server.cli(&["catalogue", "export"])["version"],
        exported["version"]
    );

    // plans can be switched off and on
    let plan = plans.iter().find(|p| p["provider"] == "gotv").unwrap()["plan_id"]
        .as_str()
        .unwrap()
        .to_owned();
    server.cli(&["plan", "disable", &plan]);
    let (ok, _) = server.cli_result(&["plan", "disable", "mtn"]);
    assert!(!ok, "a provider is not a plan");
    let (ok, _) = server.cli_result(&["provider", "disable", "no-such-provider"]);
    assert!(!ok);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let listed = server
        .get(&c.api_key, "/v1/cable-plans?provider=gotv")
        .await
        .assert_ok()
        .clone();
    assert!(
        !listed
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["plan_id"] == plan.as_str())
    );
    server.cli(&["plan", "enable", &plan]);
}

#[tokio::test]
async fn demo_mode_and_graceful_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let (db, database) = fresh_database(dir.path(), "demo.db").await;
    let spawn = || {
        let mut command = Command::new(BIN);
        if database.is_some() {
            // PostgreSQL has no key file: the master key must be given.
            command.env("BILLPAY_MASTER_KEY", MASTER_KEY);
        }
        command
            .args([
                "serve",
                "--demo",
                "--listen",
                "127.0.0.1:0",
                "--database-url",
                &db,
            ])
            .env("BILLPAY_LOG", "error")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut child = spawn();
    let lines = read_until_listening(&mut child);
    let key = lines
        .iter()
        .find_map(|l| l.strip_prefix("Demo API key (shown once): "))
        .expect("demo key printed")
        .to_owned();
    let base = lines
        .last()
        .unwrap()
        .trim_start_matches("billpay listening on ")
        .to_owned();
    let balance: Value = reqwest::Client::new()
        .get(format!("{base}/v1/wallet/balance"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(balance["data"]["balance"], 100000.0);
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(child.wait().unwrap().success(), "graceful shutdown exits 0");

    // the second start finds the demo account and makes no new one
    let mut child = spawn();
    let lines = read_until_listening(&mut child);
    assert!(
        lines.iter().any(|l| l.contains("already exists")),
        "{lines:?}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn configuration_precedence() {
    let dir = tempfile::tempdir().unwrap();
    let from_file = dir.path().join("from-file.db");
    let from_env = dir.path().join("from-env.db");
    let from_flag = dir.path().join("from-flag.db");
    let config = dir.path().join("billpay.toml");
    std::fs::write(
        &config,
        format!("database_url = \"sqlite://{}\"\n", from_file.display()),
    )
    .unwrap();
    let migrate = |env: Option<&std::path::Path>, flag: Option<&std::path::Path>| {
        let mut cmd = Command::new(BIN);
        cmd.args(["migrate", "--json", "--config", config.to_str().unwrap()])
            .env_remove("BILLPAY_DATABASE_URL");
        if let Some(p) = env {
            cmd.env("BILLPAY_DATABASE_URL", format!("sqlite://{}", p.display()));
        }
        if let Some(p) = flag {
            cmd.args(["--database-url", &format!("sqlite://{}", p.display())]);
        }
        let out: Value = serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap();
        out["database_url"].as_str().unwrap().to_owned()
    };
    assert!(migrate(None, None).ends_with("from-file.db"));
    assert!(migrate(Some(&from_env), None).ends_with("from-env.db"));
    assert!(migrate(Some(&from_env), Some(&from_flag)).ends_with("from-flag.db"));
    assert!(from_file.exists() && from_env.exists() && from_flag.exists());

    std::fs::write(&config, "no_such_setting = 1\n").unwrap();
    let out = Command::new(BIN)
        .args(["migrate", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

fn read_until_listening(child: &mut std::process::Child) -> Vec<String> {
    use std::io::BufRead;
    let stdout = child.stdout.take().unwrap();
    let mut lines = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let done = line.starts_with("billpay listening on ");
        lines.push(line);
        if done {
            break;
        }
    }
    lines
}

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
        let placed = server
            .post(&customer.api_key, "/v1/electricity/purchase", body)
            .await;
        let code = placed.assert_ok()["reference_code"]
            .as_str()
            .unwrap()
            .to_owned();
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
    assert_eq!(report["checks"].as_array().unwrap().len(), 8, "{report}");

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
            &corrupt("ALTER TABLE ledger DISABLE TRIGGER ledger_append_only"),
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
        text.contains("Audit FAILED: 3 of 8 checks violated."),
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
        "reference_used_once",
        "credit_reference_once",
    ] {
        assert!(violations(&report, clean).is_empty(), "{clean}: {report}");
    }
}

/// `billpay backup` while purchases keep arriving: the copy restores into a
/// working server whose balances equal their ledgers and whose audit passes.
/// On PostgreSQL the command refuses and points to pg_dump.
#[tokio::test(flavor = "multi_thread")]
async fn backup_under_live_writes_restores_into_a_working_server() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let server = Arc::new(TestServer::spawn().await);
    let file = server.path().join("backup.db");
    let file = file.to_str().unwrap();
    if server.is_postgres() {
        let (ok, reply) = server.cli_result(&["backup", file]);
        assert!(!ok, "{reply}");
        assert!(
            reply["error"].as_str().unwrap().contains("pg_dump"),
            "{reply}"
        );
        return;
    }
    let customers: Vec<Customer> = (0..3).map(|_| server.customer("50000")).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let accepted = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = customers
        .iter()
        .map(|c| {
            let (server, key) = (server.clone(), c.api_key.clone());
            let (stop, accepted) = (stop.clone(), accepted.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 100,
                                      "reference": format!("bk-{}", rand_suffix())});
                    server
                        .post(&key, "/v1/airtime/purchase", body)
                        .await
                        .assert_ok();
                    accepted.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    while accepted.load(Ordering::Relaxed) < 30 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let before = accepted.load(Ordering::Relaxed);
    let report = server.cli(&["backup", file]);
    let target = accepted.load(Ordering::Relaxed) + 30;
    while accepted.load(Ordering::Relaxed) < target {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    assert!(report["bytes"].as_u64().unwrap() > 0, "{report}");
    // A second backup to the same file is refused, leaving the first intact.
    let (ok, refused) = server.cli_result(&["backup", file]);
    assert!(
        !ok && refused["error"]
            .as_str()
            .unwrap()
            .contains("already exists")
    );

    let restored = TestServer::restored_from(std::path::Path::new(file)).await;
    let (passed, audit) = restored.audit();
    assert!(passed, "{audit}");
    let mut purchases_in_backup = 0;
    for c in &customers {
        let statement = restored.assert_ledger_consistent(&c.account_id);
        let debits = statement["entries"].as_array().unwrap().len() - 1; // minus the funding
        purchases_in_backup += debits;
        let expected = 50000.0 - 100.0 * debits as f64;
        assert_eq!(statement["balance"].as_f64().unwrap(), expected);
        assert_eq!(
            restored.balance(&c.api_key).await,
            statement["balance"].as_f64().unwrap()
        );
    }
    // The copy holds the purchases made before it, and not those made after.
    assert!(
        purchases_in_backup >= before,
        "{purchases_in_backup} < {before}"
    );
    assert!(purchases_in_backup < accepted.load(Ordering::Relaxed));
    // The restored server takes new purchases with the old keys.
    let c = &customers[0];
    let code = restored
        .post(&c.api_key, "/v1/airtime/purchase",
              json!({"provider_id": "mtn", "phone": "08031234567", "amount": 100, "reference": format!("after-{}", rand_suffix())}))
        .await
        .assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        restored.wait_final(&c.api_key, &code).await["status"],
        "successful"
    );
}
