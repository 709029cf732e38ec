//! Where `serve`'s settings come from: each layer over the one below
//! (default < config file < `BILLPAY_*` < flag), the file's flat keys and its
//! sections, every problem named at once, and secrets never printed.

use crate::support::vtpass::{API_KEY, FakeVtpass, PUBLIC_KEY, SECRET_KEY};
use crate::support::{BIN, MASTER_KEY};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// One `billpay serve` run with exactly these layers (no other environment).
struct Layers<'a> {
    file: Option<&'a str>,
    env: Vec<(&'a str, &'a str)>,
    flags: Vec<&'a str>,
}

/// A started server: what it printed up to its address, its `billpay
/// started` log line, and the rest of its stdout. Killed when dropped.
struct Running {
    child: std::process::Child,
    address: String,
    more_stdout: std::io::Lines<BufReader<std::process::ChildStdout>>,
    started: Value,
    /// The database's directory, as long as the server runs.
    _dir: tempfile::TempDir,
}

impl Running {
    fn listening_on(&self) -> &str {
        self.address.rsplit_once(':').unwrap().0
    }

    /// `--metrics-listen`'s address, printed after the API's.
    fn metrics_on(&mut self) -> String {
        let line = self.more_stdout.next().unwrap().unwrap();
        let address = line.strip_prefix("billpay metrics on http://").unwrap();
        address.rsplit_once(':').unwrap().0.to_owned()
    }

    /// Whether the API's own address answers `GET /metrics`.
    fn api_serves_metrics(&self) -> bool {
        use std::io::{Read, Write};
        let mut tcp = std::net::TcpStream::connect(&self.address).unwrap();
        tcp.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).unwrap();
        answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200")
    }

    fn sandbox_latency_ms(&self) -> u64 {
        self.started["fields"]["sandbox_latency_ms"]
            .as_u64()
            .unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_command(dir: &std::path::Path, layers: &Layers) -> Command {
    let mut command = Command::new(BIN);
    command
        .env_clear()
        .arg("serve")
        .arg("--database-url")
        .arg(format!("sqlite://{}/s.db", dir.display()))
        .args(&layers.flags)
        .env("BILLPAY_MASTER_KEY", MASTER_KEY)
        .env("BILLPAY_LOG_FORMAT", "json")
        .envs(layers.env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(text) = layers.file {
        let file = dir.join("billpay.toml");
        std::fs::write(&file, text).unwrap();
        command.arg("--config").arg(file);
    }
    command
}

/// Starts `serve` and reads what it says until its start is logged.
fn start(layers: Layers) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve_command(dir.path(), &layers).spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let address = stdout.by_ref().map_while(Result::ok).find_map(|line| {
        Some(
            line.strip_prefix("billpay listening on http://")?
                .to_owned(),
        )
    });
    let started = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .find(|line| line["fields"]["message"] == "billpay started");
    let (Some(address), Some(started)) = (address, started) else {
        let _ = child.kill();
        panic!("serve did not start");
    };
    Running {
        child,
        _dir: dir,
        address,
        more_stdout: stdout,
        started,
    }
}

/// Runs `serve` expecting it to refuse to start; returns what it said.
fn refused(layers: Layers) -> String {
    let dir = tempfile::tempdir().unwrap();
    let output = serve_command(dir.path(), &layers).output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "serve started: {said}");
    said
}

#[test]
fn each_layer_overrides_the_one_below() {
    let file = r#"
listen = "127.0.0.2:0"
metrics_listen = "127.0.0.2:0"
[sandbox]
latency_ms = 111
"#;
    let env = vec![
        ("BILLPAY_LISTEN", "127.0.0.3:0"),
        ("BILLPAY_METRICS_LISTEN", "127.0.0.3:0"),
        ("BILLPAY_SANDBOX_LATENCY_MS", "222"),
    ];
    let flags = vec![
        "--listen",
        "127.0.0.4:0",
        "--metrics-listen",
        "127.0.0.4:0",
        "--sandbox-latency-ms",
        "333",
    ];

    // The defaults (listen's own, 127.0.0.1:8080, may be taken on a test host).
    let defaults = start(Layers {
        file: None,
        env: vec![("BILLPAY_LISTEN", "127.0.0.1:0")],
        flags: vec![],
    });
    assert!(defaults.api_serves_metrics(), "metrics on the API's port");
    assert_eq!(defaults.sandbox_latency_ms(), 500);

    let mut from_file = start(Layers {
        file: Some(file),
        env: vec![],
        flags: vec![],
    });
    assert_eq!(from_file.listening_on(), "127.0.0.2");
    assert_eq!(from_file.metrics_on(), "127.0.0.2");
    assert_eq!(from_file.sandbox_latency_ms(), 111);

    let mut from_env = start(Layers {
        file: Some(file),
        env: env.clone(),
        flags: vec![],
    });
    assert_eq!(from_env.listening_on(), "127.0.0.3");
    assert_eq!(from_env.metrics_on(), "127.0.0.3");
    assert_eq!(from_env.sandbox_latency_ms(), 222);

    let mut from_flags = start(Layers {
        file: Some(file),
        env,
        flags,
    });
    assert_eq!(from_flags.listening_on(), "127.0.0.4");
    assert_eq!(from_flags.metrics_on(), "127.0.0.4");
    assert_eq!(from_flags.sandbox_latency_ms(), 333);
}

#[test]
fn the_files_flat_keys_still_work_beside_the_sections() {
    let flat = start(Layers {
        file: Some("sandbox_latency_ms = 7\nsandbox_unreachable = false\n"),
        env: vec![("BILLPAY_LISTEN", "127.0.0.1:0")],
        flags: vec![],
    });
    assert_eq!(flat.sandbox_latency_ms(), 7);

    let both_ways = refused(Layers {
        file: Some("sandbox_latency_ms = 7\n[sandbox]\nlatency_ms = 8\n"),
        env: vec![],
        flags: vec![],
    });
    assert!(
        both_ways.contains("`sandbox_latency_ms` is given twice"),
        "{both_ways}"
    );

    let unknown = refused(Layers {
        file: Some("[vtpass]\napi_kee = \"typo\"\n"),
        env: vec![],
        flags: vec![],
    });
    assert!(
        unknown.contains("no such setting: vtpass.api_kee"),
        "{unknown}"
    );
}

/// VTpass's keys reach VTpass from either spelling of the file: the fake
/// answers the balance only to the right keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vtpass_keys_are_read_from_the_section_or_the_old_flat_keys() {
    let fake = FakeVtpass::start().await;
    let section = format!(
        "supplier = \"vtpass\"\n[vtpass]\nbase_url = \"{}\"\napi_key = \"{API_KEY}\"\n\
         secret_key = \"{SECRET_KEY}\"\npublic_key = \"{PUBLIC_KEY}\"\n",
        fake.base
    );
    let flat = format!(
        "supplier = \"vtpass\"\nvtpass_base_url = \"{}\"\nvtpass_api_key = \"{API_KEY}\"\n\
         vtpass_secret_key = \"{SECRET_KEY}\"\nvtpass_public_key = \"{PUBLIC_KEY}\"\n",
        fake.base
    );
    for file in [section, flat] {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("billpay.toml");
        std::fs::write(&config, &file).unwrap();
        let output = tokio::task::spawn_blocking(move || {
            Command::new(BIN)
                .env_clear()
                .args(["supplier", "balance", "--json", "--config"])
                .arg(&config)
                .arg("--database-url")
                .arg(format!("sqlite://{}/s.db", dir.path().display()))
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            answer["suppliers"][0]["balance"], 250000.0,
            "{file}: {answer}"
        );
    }
}

#[test]
fn every_problem_is_named_at_once_and_no_key_is_printed() {
    let secret = "SK_never-print-me";
    let said = refused(Layers {
        file: None,
        env: vec![
            ("BILLPAY_LISTEN", "not-an-address"),
            ("BILLPAY_VTPASS_SECRET_KEY", secret),
            ("BILLPAY_SUPPLIER", "nobody"),
        ],
        flags: vec!["--body-timeout-secs", "0"],
    });
    for problem in [
        "4 problems with the settings",
        "--listen \"not-an-address\" is not an address",
        "--body-timeout-secs must be at least 1 second",
        "BILLPAY_SUPPLIER must be sandbox, vtpass or clubkonnect, not \"nobody\"",
        "VTpass needs BILLPAY_VTPASS_API_KEY, BILLPAY_VTPASS_PUBLIC_KEY",
    ] {
        assert!(said.contains(problem), "{problem:?} not in: {said}");
    }
    assert!(!said.contains(secret), "{said}");

    // A value of the wrong type names its variable.
    let said = refused(Layers {
        file: None,
        env: vec![("BILLPAY_SANDBOX_LATENCY_MS", "soon")],
        flags: vec![],
    });
    assert!(said.contains("BILLPAY_SANDBOX_LATENCY_MS"), "{said}");
}

/// Supplier names are checked against the registry wherever they are
/// written: `BILLPAY_SUPPLIER` and every route, named together.
#[test]
fn unknown_suppliers_on_routes_are_named_with_the_registry() {
    let said = refused(Layers {
        file: Some("[routes]\nairtime = [\"sandbox\", \"acme\"]\n"),
        env: vec![("BILLPAY_SUPPLIER", "nobody")],
        flags: vec![],
    });
    for problem in [
        "2 problems with the settings",
        "BILLPAY_SUPPLIER must be sandbox, vtpass or clubkonnect, not \"nobody\"",
        "routes: airtime names \"acme\", not a supplier (sandbox, vtpass, clubkonnect)",
    ] {
        assert!(said.contains(problem), "{problem:?} not in: {said}");
    }
}

#[test]
fn the_settings_logged_at_start_hold_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = [
        "api-key-not-for-logs",
        "SK_not-for-logs",
        "PK_not-for-logs",
        MASTER_KEY,
        "smtp-pass-not-for-logs",
        "TL-not-for-logs",
    ];
    let mut child = serve_command(
        dir.path(),
        &Layers {
            file: None,
            env: vec![
                ("BILLPAY_LISTEN", "127.0.0.1:0"),
                ("BILLPAY_LOG", "debug"),
                ("BILLPAY_VTPASS_API_KEY", secrets[0]),
                ("BILLPAY_VTPASS_SECRET_KEY", secrets[1]),
                ("BILLPAY_VTPASS_PUBLIC_KEY", secrets[2]),
                (
                    "BILLPAY_SMTP_URL",
                    "smtps://mailer:smtp-pass-not-for-logs@mail.example.com",
                ),
                ("BILLPAY_EMAIL_FROM", "Shop <no-reply@shop.example>"),
                ("BILLPAY_TERMII_API_KEY", secrets[5]),
                ("BILLPAY_TERMII_SENDER_ID", "TestShop"),
            ],
            flags: vec![],
        },
    )
    .spawn()
    .unwrap();
    let log: Vec<String> = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map(|line| line.unwrap())
        .take_while(|line| !line.contains("billpay started"))
        .collect();
    child.kill().unwrap();
    child.wait().unwrap();
    let log = log.join("\n");
    assert!(
        log.contains("api_key: Some(SecretBox<str>([REDACTED]))"),
        "the settings are logged: {log}"
    );
    for secret in secrets {
        assert!(!log.contains(secret), "{secret} logged: {log}");
    }
}
