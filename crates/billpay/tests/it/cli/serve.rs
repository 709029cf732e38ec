//! `billpay serve` as run by operators: demo mode, graceful shutdown, and
//! where its configuration comes from.

use crate::support::*;
use serde_json::Value;

use std::process::Command;

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
