//! Test kit: a real `billpay serve` process on a random port with a fresh
//! database, the real CLI against the same database, an HTTP client, and a
//! real webhook receiver on loopback.
//!
//! The database is a new SQLite file, or with `BILLPAY_TEST_BACKEND=postgres`
//! a new PostgreSQL database (`CREATE DATABASE billpay_t_…` on the server of
//! `BILLPAY_TEST_POSTGRES_URL`, dropped when the last server using it is).
#![allow(dead_code)]

pub mod clubkonnect;
pub mod monnify;
pub mod paystack;
pub mod receiver;
/// The SME-data site's fake lives in `billpay-fakes` (the bench drives it too).
pub use billpay_fakes::smedata;
pub mod smtp_sink;
pub mod termii;
pub mod vtpass;

pub use billpay_api_testkit::Reply;

use billpay_store::postgres::scratch::ScratchDatabase;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_billpay");
/// A fixed master key so every process of a test opens the same sealed secrets.
pub const MASTER_KEY: &str = "6b1f0c7a9d2e4f3b8a5c6d7e8f90123456789abcdef0123456789abcdef01234";

pub struct Options {
    pub latency_ms: u64,
    pub rate_per_second: u32,
    pub rate_burst: u32,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            latency_ms: 0,
            rate_per_second: 10_000,
            rate_burst: 10_000,
        }
    }
}

pub struct TestServer {
    pub base: String,
    pub database_url: String,
    dir: tempfile::TempDir,
    /// The PostgreSQL database (shared by every node of a multi-node test).
    database: Option<Arc<ScratchDatabase>>,
    child: Option<Child>,
    options: Options,
    /// Extra environment for every start of the server, applied last (so it
    /// overrides the kit's defaults, e.g. `BILLPAY_WEBHOOK_ALLOW_PRIVATE`).
    env: Vec<(String, String)>,
    /// Run `billpay audit` on the database when the test ends (see `Drop`).
    audit_at_end: bool,
    pub http: reqwest::Client,
}

/// An account with a funded wallet and one active API key.
#[derive(Debug, Clone)]
pub struct Customer {
    pub account_id: String,
    pub key_id: String,
    pub api_key: String,
}

impl TestServer {
    pub async fn spawn() -> TestServer {
        Self::spawn_with(Options::default()).await
    }

    pub async fn spawn_with(options: Options) -> TestServer {
        Self::spawn_with_env(options, &[]).await
    }

    /// [`spawn_with`](Self::spawn_with) plus environment variables that
    /// override the kit's defaults on every (re)start, e.g.
    /// `[("BILLPAY_WEBHOOK_ALLOW_PRIVATE", "false")]` for a server that
    /// applies the private-address guard to webhooks.
    pub async fn spawn_with_env(options: Options, env: &[(&str, &str)]) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let (database_url, database) = fresh_database(dir.path(), "billpay.db").await;
        Self::spawn_on(database_url, database, dir, options, env)
    }

    /// A server on a new PostgreSQL database whatever the test backend;
    /// `None` (printing that `test` is skipped) without
    /// `BILLPAY_TEST_POSTGRES_URL`.
    pub async fn spawn_postgres(
        test: &str,
        options: Options,
        env: &[(&str, &str)],
    ) -> Option<TestServer> {
        let Some(admin) = std::env::var("BILLPAY_TEST_POSTGRES_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            eprintln!("SKIPPED {test}: needs PostgreSQL (set BILLPAY_TEST_POSTGRES_URL)");
            return None;
        };
        let database = ScratchDatabase::create(&admin)
            .await
            .expect("create a PostgreSQL test database");
        let dir = tempfile::tempdir().expect("tempdir");
        Some(Self::spawn_on(
            database.url.clone(),
            Some(Arc::new(database)),
            dir,
            options,
            env,
        ))
    }

    /// A server on a copy of a SQLite backup file (restored as the README says:
    /// the backup becomes the database file, with the same master key).
    pub async fn restored_from(backup: &Path) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let database = dir.path().join("billpay.db");
        std::fs::copy(backup, &database).expect("restore the backup");
        let url = format!("sqlite://{}", database.display());
        Self::spawn_on(url, None, dir, Options::default(), &[])
    }

    /// Another `billpay serve` on this server's database (a second node).
    pub async fn another_node(&self, options: Options, env: &[(&str, &str)]) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        Self::spawn_on(
            self.database_url.clone(),
            self.database.clone(),
            dir,
            options,
            env,
        )
    }

    fn spawn_on(
        database_url: String,
        database: Option<Arc<ScratchDatabase>>,
        dir: tempfile::TempDir,
        options: Options,
        env: &[(&str, &str)],
    ) -> TestServer {
        let mut server = TestServer {
            base: String::new(),
            database_url,
            database,
            dir,
            child: None,
            options,
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            audit_at_end: true,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
        };
        server.start();
        server
    }

    pub fn is_postgres(&self) -> bool {
        self.database.is_some()
    }

    /// Everything the database holds, as bytes to search: the SQLite file and
    /// its WAL, or every PostgreSQL table's rows as text.
    pub async fn database_contents(&self) -> Vec<u8> {
        let Some(database) = &self.database else {
            let mut bytes = std::fs::read(self.path().join("billpay.db")).unwrap();
            bytes.extend(std::fs::read(self.path().join("billpay.db-wal")).unwrap_or_default());
            return bytes;
        };
        let (client, connection) = tokio_postgres::connect(&database.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let tables = client
            .query(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
                &[],
            )
            .await
            .unwrap();
        let mut bytes = Vec::new();
        for table in tables {
            let name: String = table.get(0);
            let sql = format!("SELECT COALESCE(string_agg(t::text, E'\\n'), '') FROM \"{name}\" t");
            let text: String = client.query_one(&sql, &[]).await.unwrap().get(0);
            bytes.extend(text.into_bytes());
        }
        bytes
    }

    /// The server's logs (stderr of every start), appended to one file.
    fn log_file(&self) -> std::fs::File {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path().join("server.log"))
            .expect("server log file")
    }

    /// Everything the server has logged so far (empty with `BILLPAY_TEST_LOG`,
    /// which sends the logs to the terminal instead).
    pub fn logs(&self) -> Vec<u8> {
        std::fs::read(self.path().join("server.log")).unwrap_or_default()
    }

    /// Replaces the extra environment for the next (re)start.
    pub fn set_env(&mut self, env: &[(&str, &str)]) {
        self.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// The outbox's notices of `kind` (up to 100, newest first), read
    /// through the store (either backend), each one's sealed fields (a code
    /// is sealed at rest) opened with the server's master key into its data.
    pub async fn notices_of(&self, kind: &str) -> Vec<billpay_store::Notice> {
        let store = billpay_store::open(&self.database_url).await.unwrap();
        let filter = billpay_store::NoticeFilter {
            kind: Some(kind.to_owned()),
            limit: 100,
            ..Default::default()
        };
        let secrets = billpay_domain::sealed::SecretBox::from_hex(MASTER_KEY).unwrap();
        let mut notices = store.notices(filter).await.unwrap();
        for notice in &mut notices {
            let Some(Value::String(sealed)) = notice.data.as_object_mut().unwrap().remove("sealed")
            else {
                continue;
            };
            let clear = secrets.open(sealed.strip_prefix("sealed:").unwrap());
            let opened: Value = serde_json::from_str(&clear.unwrap()).unwrap();
            let fields = notice.data.as_object_mut().unwrap();
            fields.extend(opened.as_object().unwrap().clone());
        }
        notices
    }

    /// Where the server writes email without SMTP (`BILLPAY_MAIL_DIR`).
    pub fn mail_dir(&self) -> PathBuf {
        self.dir.path().join("mail")
    }

    /// Starts (or restarts) the server process and waits for its address.
    pub fn start(&mut self) {
        self.start_with_latency(self.options.latency_ms);
    }

    pub fn start_with_latency(&mut self, latency_ms: u64) {
        assert!(self.child.is_none(), "already running");
        let show_logs = std::env::var_os("BILLPAY_TEST_LOG").is_some();
        let mut child = Command::new(BIN)
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--database-url",
                &self.database_url,
            ])
            .env("BILLPAY_SANDBOX_LATENCY_MS", latency_ms.to_string())
            .env(
                "BILLPAY_RATE_LIMIT_PER_SECOND",
                self.options.rate_per_second.to_string(),
            )
            .env(
                "BILLPAY_RATE_LIMIT_BURST",
                self.options.rate_burst.to_string(),
            )
            .env("BILLPAY_WEBHOOK_ALLOW_PRIVATE", "true")
            .env("BILLPAY_MASTER_KEY", MASTER_KEY)
            .env("BILLPAY_MAIL_DIR", self.mail_dir())
            .env("BILLPAY_LOG", if show_logs { "info" } else { "error" })
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdout(Stdio::piped())
            .stderr(if show_logs {
                Stdio::inherit()
            } else {
                Stdio::from(self.log_file())
            })
            .spawn()
            .expect("spawn billpay serve");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let address = loop {
            let line = lines
                .next()
                .expect("server exited before listening")
                .unwrap();
            if let Some(addr) = line.strip_prefix("billpay listening on ") {
                break addr.trim_start_matches("http://").to_owned();
            }
        };
        // Keep draining stdout so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        self.base = address;
        self.child = Some(child);
    }

    /// The running server's process id (to read its memory in /proc).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGKILL: no graceful shutdown, as in a crash.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("kill");
            child.wait().expect("wait");
        }
    }

    /// SIGTERM and wait for a graceful exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        child.wait().expect("wait")
    }

    /// SIGTERM and wait at most `limit` for a graceful exit; a server still
    /// running then is SIGKILLed and the test fails (a hung shutdown).
    pub fn terminate_within(&mut self, limit: Duration) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("billpay serve did not exit within {limit:?} of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs the CLI with `--json` against this server's database.
    pub fn cli(&self, args: &[&str]) -> Value {
        let (ok, value) = self.cli_result(args);
        assert!(ok, "billpay {args:?} failed: {value}");
        value
    }

    /// Runs the CLI; returns (success, the one JSON object it printed).
    pub fn cli_result(&self, args: &[&str]) -> (bool, Value) {
        let (code, value) = self.cli_exit(args);
        (code == Some(0), value)
    }

    /// Runs the CLI; returns (its exit code, the one JSON object it printed).
    pub fn cli_exit(&self, args: &[&str]) -> (Option<i32>, Value) {
        let output = Command::new(BIN)
            .args(args)
            .args(["--json", "--database-url", &self.database_url])
            .env("BILLPAY_MASTER_KEY", MASTER_KEY)
            .env("BILLPAY_MAIL_DIR", self.mail_dir())
            // the deployment's settings (supplier keys…), as the server has them
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output()
            .expect("run billpay");
        let stdout = String::from_utf8(output.stdout).unwrap();
        let value: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
            panic!("billpay {args:?} printed not one JSON object ({e}): {stdout:?}")
        });
        (output.status.code(), value)
    }

    /// A new account funded with `naira`, and an API key.
    pub fn customer(&self, naira: &str) -> Customer {
        let n = rand_suffix();
        let account = self.cli(&[
            "account",
            "create",
            "--name",
            "Test Co",
            "--email",
            &format!("t{n}@example.com"),
        ]);
        let account_id = account["account_id"].as_str().unwrap().to_owned();
        if naira != "0" {
            self.cli(&[
                "wallet",
                "credit",
                "--account",
                &account_id,
                "--amount",
                naira,
                "--reference",
                &format!("fund-{n}"),
            ]);
        }
        let key = self.cli(&["key", "create", "--account", &account_id]);
        Customer {
            account_id,
            key_id: key["key_id"].as_str().unwrap().to_owned(),
            api_key: key["api_key"].as_str().unwrap().to_owned(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.base)
    }

    /// GET without a key (the public routes: `/`, `/openapi.json`…), as JSON.
    pub async fn get_public_json(&self, path: &str) -> Value {
        let response = self.http.get(self.url(path)).send().await.unwrap();
        response.json().await.unwrap()
    }

    pub async fn get(&self, key: &str, path: &str) -> Reply {
        reply(
            self.http
                .get(self.url(path))
                .bearer_auth(key)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// POSTs a purchase that must be accepted; its `reference_code`.
    pub async fn place(&self, key: &str, path: &str, body: Value) -> String {
        let placed = self.post(key, path, body).await;
        placed.assert_ok()["reference_code"]
            .as_str()
            .expect("an accepted purchase has a reference_code")
            .to_owned()
    }

    pub async fn post(&self, key: &str, path: &str, body: Value) -> Reply {
        reply(
            self.http
                .post(self.url(path))
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// The id (a UUID) of the provider `slug`, from `GET /v1/providers`.
    pub async fn provider_id(&self, key: &str, slug: &str) -> String {
        let providers = self.get(key, "/v1/providers").await.assert_ok().clone();
        let provider = providers
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["slug"] == slug);
        let provider = provider.unwrap_or_else(|| panic!("no provider {slug}"));
        provider["id"].as_str().unwrap().to_owned()
    }

    pub async fn balance(&self, key: &str) -> f64 {
        self.get(key, "/v1/wallet/balance").await.assert_ok()["balance"]
            .as_f64()
            .unwrap()
    }

    /// Polls the status endpoint until the transaction is final.
    pub async fn wait_final(&self, key: &str, reference_code: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let reply = self
                .get(
                    key,
                    &format!("/v1/transaction/status?reference_code={reference_code}"),
                )
                .await;
            let data = reply.assert_ok().clone();
            if data["status"] != "processing" {
                return data;
            }
            assert!(
                Instant::now() < deadline,
                "{reference_code} still processing: {data}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Balance equals the sum of the ledger, checked through the CLI.
    /// The sum over a metric's series whose `label` is `value`
    /// (`billpay_notices_total`, `outcome`, `sent`), as `/metrics` has it now.
    pub async fn metric_sum(&self, metric: &str, label: &str, value: &str) -> f64 {
        let scrape = self.http.get(self.url("/metrics")).send().await.unwrap();
        let text = scrape.text().await.unwrap();
        let (series, wanted) = (format!("{metric}{{"), format!("{label}=\"{value}\""));
        text.lines()
            .filter(|l| l.starts_with(&series) && l.contains(&wanted))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    pub fn assert_ledger_consistent(&self, account_id: &str) -> Value {
        let statement = self.cli(&[
            "wallet",
            "statement",
            "--account",
            account_id,
            "--limit",
            "1000",
        ]);
        assert_eq!(statement["balance"], statement["ledger_sum"], "{statement}");
        statement
    }
}

impl TestServer {
    /// Runs raw SQL on the database, bypassing the store (to corrupt it on
    /// purpose): `sqlite` on the SQLite file or `postgres` on PostgreSQL.
    pub async fn raw_sql(&self, sqlite: &str, postgres: &str) {
        let Some(database) = &self.database else {
            let path = billpay_store::sqlite::path_from_url(&self.database_url).unwrap();
            let conn = rusqlite::Connection::open(path).unwrap();
            return conn.execute_batch(sqlite).unwrap();
        };
        let (client, connection) = tokio_postgres::connect(&database.url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client.batch_execute(postgres).await.unwrap();
    }

    /// Runs `billpay audit --json`; returns (passed, the report).
    pub fn audit(&self) -> (bool, Value) {
        self.cli_result(&["audit"])
    }

    /// For a test that corrupts the database on purpose: no audit at the end.
    pub fn skip_final_audit(&mut self) {
        self.audit_at_end = false;
    }

    /// Whether this server is the last user of its database: its own SQLite
    /// file, or the last node holding the PostgreSQL database.
    fn last_user_of_database(&self) -> bool {
        match &self.database {
            Some(database) => Arc::strong_count(database) == 1,
            None => billpay_store::sqlite::path_from_url(&self.database_url)
                .is_ok_and(|path| path.starts_with(self.dir.path())),
        }
    }
}

/// Every test ends with `billpay audit` on its database: whatever a test did
/// through the API, the money invariants must still hold.
impl Drop for TestServer {
    fn drop(&mut self) {
        self.kill();
        if self.audit_at_end && !std::thread::panicking() && self.last_user_of_database() {
            let (passed, report) = self.audit();
            assert!(
                passed,
                "billpay audit failed at the end of the test: {report}"
            );
        }
    }
}

/// The answer, checked against the OpenAPI document.
pub async fn reply(response: reqwest::Response) -> Reply {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let path = response.url().path().to_owned();
    let text = response.text().await.unwrap();
    Reply::checked(&path, status, headers, &text)
}

/// The test backend: `BILLPAY_TEST_BACKEND=postgres` (with
/// `BILLPAY_TEST_POSTGRES_URL`) or SQLite (the default).
pub fn postgres_admin_url() -> Option<String> {
    if std::env::var("BILLPAY_TEST_BACKEND").as_deref() != Ok("postgres") {
        return None;
    }
    Some(
        std::env::var("BILLPAY_TEST_POSTGRES_URL")
            .expect("BILLPAY_TEST_BACKEND=postgres needs BILLPAY_TEST_POSTGRES_URL=postgres://…"),
    )
}

/// A new empty database of the test backend: a SQLite file `name` in `dir`,
/// or a new PostgreSQL database (dropped with the returned guard).
pub async fn fresh_database(dir: &Path, name: &str) -> (String, Option<Arc<ScratchDatabase>>) {
    match postgres_admin_url() {
        Some(admin) => {
            let database = ScratchDatabase::create(&admin)
                .await
                .expect("create a PostgreSQL test database");
            (database.url.clone(), Some(Arc::new(database)))
        }
        None => (format!("sqlite://{}", dir.join(name).display()), None),
    }
}

pub fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{nanos}{}", COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// A fresh client reference (8+ characters).
pub fn reference() -> String {
    format!("ref-{}", rand_suffix())
}

pub fn electricity(reference: &str, meter: &str, amount: f64) -> Value {
    json!({ "provider_id": "ikeja-electric", "amount": amount, "meter_number": meter, "meter_type": 1, "reference": reference })
}

/// Serves `app` (a fake outside system) on loopback from a thread and
/// runtime of its own (the one in `billpay-fakes`, which the bench uses too).
pub use billpay_fakes::serve_apart;
