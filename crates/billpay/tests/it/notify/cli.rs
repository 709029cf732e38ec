//! The real binary: `serve` refusing a half-configured channel, and
//! `billpay notify test` reaching the SMTP sink and the fake Termii, with no
//! secret in what it prints.

use crate::support::smtp_sink::{self, SmtpSink};
use crate::support::termii::{self, FakeTermii};
use crate::support::{BIN, MASTER_KEY};
use serde_json::Value;
use std::process::{Command, Output};
use std::time::Duration;

/// `billpay ARGS --json` on a fresh SQLite database with `env` set.
fn billpay(dir: &std::path::Path, args: &[&str], env: &[(&str, String)]) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--database-url")
        .arg(format!("sqlite://{}", dir.join("b.db").display()))
        .env("BILLPAY_MASTER_KEY", MASTER_KEY)
        .env("BILLPAY_MAIL_DIR", dir.join("mail"))
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap()
}

fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn json(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_configured_channel_stops_serve_naming_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let env = [
        (
            "BILLPAY_SMTP_URL",
            "smtps://mailer:smtp-secret-9@mail.example.com".to_owned(),
        ),
        ("BILLPAY_TERMII_API_KEY", "TL-secret-key-9".to_owned()),
    ];
    let output = billpay(dir.path(), &["serve", "--listen", "127.0.0.1:0"], &env);
    assert_eq!(output.status.code(), Some(1), "{}", printed(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for missing in [
        "BILLPAY_EMAIL_FROM",
        "BILLPAY_TERMII_SENDER_ID",
        "half-configured",
    ] {
        assert!(stderr.contains(missing), "{missing} not named: {stderr}");
    }
    let all = printed(&output);
    assert!(
        !all.contains("smtp-secret-9") && !all.contains("TL-secret-key-9"),
        "{all}"
    );
    assert!(!all.contains("billpay listening"), "{all}");

    let cleartext = [
        (
            "BILLPAY_SMTP_URL",
            "smtp://mailer:smtp-secret-9@mail.example.com:25?tls=none".to_owned(),
        ),
        (
            "BILLPAY_EMAIL_FROM",
            "Shop <no-reply@shop.example>".to_owned(),
        ),
    ];
    let output = billpay(
        dir.path(),
        &["serve", "--listen", "127.0.0.1:0"],
        &cleartext,
    );
    assert_eq!(output.status.code(), Some(1), "{}", printed(&output));
    let all = printed(&output);
    assert!(
        all.contains("BILLPAY_SMTP_URL sends a password in clear"),
        "{all}"
    );
    assert!(!all.contains("smtp-secret-9"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_test_sends_an_email_through_smtp_and_prints_the_answer() {
    let sink = SmtpSink::start().await;
    let dir = tempfile::tempdir().unwrap();
    let output = billpay(
        dir.path(),
        &["notify", "test", "--email", "owner@shop.example", "--json"],
        &sink.env(),
    );
    assert!(output.status.success(), "{}", printed(&output));
    let answer = json(&output);
    assert_eq!(answer["sent"], true, "{answer}");
    assert_eq!(answer["provider"], "smtp", "{answer}");
    assert!(
        answer["provider_answer"]
            .as_str()
            .unwrap()
            .contains("SINK1"),
        "{answer}"
    );
    let mail = sink.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(mail[0].to, vec!["owner@shop.example".to_owned()]);
    assert_eq!(mail[0].from, "no-reply@shop.example");
    assert_eq!(mail[0].header("Subject"), Some("billpay test message"));
    let id = answer["message_id"].as_str().unwrap();
    assert_eq!(
        mail[0].header("Message-ID"),
        Some(format!("<{id}@shop.example>").as_str())
    );
    assert!(
        !printed(&output).contains(smtp_sink::PASSWORD),
        "{}",
        printed(&output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_test_fails_with_the_servers_words_when_the_address_is_refused() {
    let sink = SmtpSink::start().await;
    sink.refuse("gone@shop.example", 550);
    let dir = tempfile::tempdir().unwrap();
    let output = billpay(
        dir.path(),
        &["notify", "test", "--email", "gone@shop.example", "--json"],
        &sink.env(),
    );
    assert_eq!(output.status.code(), Some(1), "{}", printed(&output));
    let error = json(&output)["error"].as_str().unwrap().to_owned();
    assert!(
        error.contains("not sent through smtp") && error.contains("550"),
        "{error}"
    );
    assert!(error.contains("refused for good"), "{error}");
    assert!(!printed(&output).contains(smtp_sink::PASSWORD));
    assert!(sink.messages().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_test_without_smtp_writes_the_email_to_the_mail_folder() {
    let dir = tempfile::tempdir().unwrap();
    let output = billpay(
        dir.path(),
        &["notify", "test", "--email", "dev@shop.example", "--json"],
        &[],
    );
    assert!(output.status.success(), "{}", printed(&output));
    let answer = json(&output);
    assert_eq!(answer["provider"], "mail_dir", "{answer}");
    let files: Vec<_> = std::fs::read_dir(dir.path().join("mail"))
        .unwrap()
        .collect();
    assert_eq!(files.len(), 1);
    let file = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    assert!(file.contains("To: dev@shop.example"), "{file}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_test_sends_an_sms_through_termii() {
    let fake = FakeTermii::start().await;
    let dir = tempfile::tempdir().unwrap();
    let output = billpay(
        dir.path(),
        &["notify", "test", "--sms", "0803 123 4567", "--json"],
        &fake.env(),
    );
    assert!(output.status.success(), "{}", printed(&output));
    let answer = json(&output);
    assert_eq!(
        (&answer["provider"], &answer["provider_answer"]),
        (&Value::from("termii"), &Value::from("9122821270554876001")),
        "{answer}"
    );
    let sent = fake.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(sent[0]["to"], "2348031234567");
    assert_eq!(sent[0]["channel"], "dnd");
    assert_eq!(sent[0]["from"], termii::SENDER_ID);
    assert!(
        !printed(&output).contains(termii::API_KEY),
        "{}",
        printed(&output)
    );

    fake.fail_next(
        1,
        503,
        serde_json::json!({"message": "Service Unavailable"}),
    );
    let failed = billpay(
        dir.path(),
        &["notify", "test", "--sms", "08031234567", "--json"],
        &fake.env(),
    );
    assert_eq!(failed.status.code(), Some(1), "{}", printed(&failed));
    let error = json(&failed)["error"].as_str().unwrap().to_owned();
    assert!(
        error.contains("503") && error.contains("worth trying again"),
        "{error}"
    );
    assert!(!printed(&failed).contains(termii::API_KEY));

    let none = billpay(
        dir.path(),
        &["notify", "test", "--sms", "08031234567", "--json"],
        &[],
    );
    assert_eq!(none.status.code(), Some(1));
    let error = json(&none)["error"].as_str().unwrap().to_owned();
    assert!(error.contains("BILLPAY_TERMII_API_KEY"), "{error}");
}
