//! The processes under test: release `billpay serve`s on scratch databases,
//! and helpers to start any listening child.

use super::*;

pub(crate) fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A binary built beside this one (`target/release/`).
pub(crate) fn sibling(name: &str) -> PathBuf {
    std::env::current_exe().unwrap().with_file_name(name)
}

/// Starts a child that prints `… listening on http://ADDRESS`; returns that URL.
pub(crate) fn spawn_listening(mut command: Command) -> (Child, String) {
    let mut child = command.stdout(Stdio::piped()).spawn().expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = loop {
        let line = lines.next().expect("exited before listening").unwrap();
        if let Some((_, url)) = line.split_once(" listening on ") {
            break url.trim().to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, base)
}

pub(crate) struct Key {
    pub(crate) id: String,
    pub(crate) account: String,
    pub(crate) secret: String,
}

/// A release `billpay serve` on a fresh database, with the sandbox at 0 ms.
pub(crate) struct Billpay {
    pub(crate) child: Child,
    pub(crate) base: String,
    pub(crate) database_url: String,
    /// The deployment's own settings (`BILLPAY_CONFIG`…), given to the
    /// server and to every CLI call on its database.
    pub(crate) env: Vec<(String, String)>,
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) _scratch: Option<ScratchDatabase>,
}

impl Billpay {
    pub(crate) async fn start(postgres: Option<&str>, args: &[&str]) -> Billpay {
        let dir = tempfile::tempdir().unwrap();
        Billpay::start_in(dir, postgres, args, Vec::new()).await
    }

    /// A `billpay serve` on SQLite whose config file (`BILLPAY_CONFIG`) is `config`.
    pub(crate) async fn start_configured(config: &str, args: &[&str]) -> Billpay {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("billpay.toml");
        std::fs::write(&file, config).unwrap();
        let env = vec![("BILLPAY_CONFIG".to_owned(), file.display().to_string())];
        Billpay::start_in(dir, None, args, env).await
    }

    async fn start_in(
        dir: tempfile::TempDir,
        postgres: Option<&str>,
        args: &[&str],
        env: Vec<(String, String)>,
    ) -> Billpay {
        let (database_url, scratch) = match postgres {
            Some(admin) => {
                let db = ScratchDatabase::create(admin)
                    .await
                    .expect("scratch database");
                (db.url.clone(), Some(db))
            }
            None => (
                format!("sqlite://{}", dir.path().join("bench.db").display()),
                None,
            ),
        };
        Billpay::serve(database_url, dir, scratch, args, env)
    }

    /// Another `billpay serve` on this one's database (e.g. `--worker-only`).
    pub(crate) fn another(&self, args: &[&str]) -> Billpay {
        let dir = tempfile::tempdir().unwrap();
        Billpay::serve(self.database_url.clone(), dir, None, args, self.env.clone())
    }

    pub(crate) fn serve(
        database_url: String,
        dir: tempfile::TempDir,
        scratch: Option<ScratchDatabase>,
        args: &[&str],
        env: Vec<(String, String)>,
    ) -> Billpay {
        let mut command = Command::new(sibling("billpay"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
            .arg(&database_url)
            .args(args)
            .env("BILLPAY_MASTER_KEY", MASTER_KEY)
            .env("BILLPAY_SANDBOX_LATENCY_MS", "0")
            .env("BILLPAY_RATE_LIMIT_PER_SECOND", "100000000")
            .env("BILLPAY_RATE_LIMIT_BURST", "100000000")
            // The fan-out run's receiver listens on loopback.
            .env("BILLPAY_WEBHOOK_ALLOW_PRIVATE", "true")
            .env("BILLPAY_LOG", "error")
            .envs(env.iter().map(|(k, v)| (k, v)));
        let (child, base) = spawn_listening(command);
        Billpay {
            child,
            base,
            database_url,
            env,
            _dir: dir,
            _scratch: scratch,
        }
    }

    pub(crate) fn cli(&self, args: &[&str]) -> Value {
        let out = self.cli_output(&[args, &["--json"]].concat());
        serde_json::from_slice(&out).unwrap()
    }

    /// The CLI's text output (e.g. `catalogue export`'s TOML).
    pub(crate) fn cli_text(&self, args: &[&str]) -> String {
        String::from_utf8(self.cli_output(args)).unwrap()
    }

    fn cli_output(&self, args: &[&str]) -> Vec<u8> {
        let out = Command::new(sibling("billpay"))
            .args(args)
            .args(["--database-url", &self.database_url])
            .env("BILLPAY_MASTER_KEY", MASTER_KEY)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        assert!(out.status.success(), "billpay {args:?}: {out:?}");
        out.stdout
    }

    /// A signed-in dashboard session of a new account with a password: the
    /// account's id and the session's cookie (`billpay_session=…`).
    pub(crate) fn dashboard_session(&self) -> (String, String) {
        const EMAIL: &str = "buyer@example.com";
        let account = self.cli(&[
            "account",
            "create",
            "--name",
            "Bench Buyer",
            "--email",
            EMAIL,
            "--password",
            PASSWORD,
        ]);
        let account = account["account_id"].as_str().unwrap().to_owned();
        let scope = (
            "/dashboard/login",
            "billpay_login_csrf=",
            "billpay_session=",
        );
        (account, self.signed_in(scope, EMAIL))
    }

    /// A signed-in console session of a new owner: its cookie (`billpay_admin=…`).
    pub(crate) fn console_session(&self) -> String {
        const EMAIL: &str = "owner@example.com";
        let args = ["--email", EMAIL, "--role", "owner", "--password", PASSWORD];
        self.cli(&[&["operator", "create"], &args[..]].concat());
        let scope = ("/admin/login", "billpay_admin_login=", "billpay_admin=");
        self.signed_in(scope, EMAIL)
    }

    /// Signed in once over plain HTTP as a browser would: the sign-in
    /// page's CSRF proof, then the form. `scope`: the sign-in page, its
    /// cookie's name and the session cookie's. The session's cookie.
    fn signed_in(&self, (login, proof, session): (&str, &str, &str), email: &str) -> String {
        let address = self.base.trim_start_matches("http://");
        let (head, page) = http(
            address,
            &format!("GET {login} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"),
        );
        let login_cookie = cookie(&head, proof);
        let at = page.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
        let csrf = &page[at..at + 64];
        let email = email.replace('@', "%40");
        let form = format!("email={email}&password={PASSWORD}&csrf={csrf}");
        let request = format!(
            "POST {login} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\
             Cookie: {login_cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: {}\r\n\r\n{form}",
            form.len()
        );
        let (head, _) = http(address, &request);
        cookie(&head, session)
    }

    /// `GET path` with `cookie`, on a fresh connection: its status line.
    pub(crate) fn get_page(&self, path: &str, cookie: &str) -> String {
        let address = self.base.trim_start_matches("http://");
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\nCookie: {cookie}\r\n\r\n"
        );
        let (head, _) = http(address, &request);
        head.lines().next().unwrap_or_default().to_owned()
    }

    /// `accounts` funded wallets with `keys_each` keys each; all the keys.
    pub(crate) fn provision(&self, accounts: usize, keys_each: usize) -> Vec<String> {
        self.provision_keys(accounts, keys_each)
            .into_iter()
            .map(|key| key.secret)
            .collect()
    }

    pub(crate) fn provision_keys(&self, accounts: usize, keys_each: usize) -> Vec<Key> {
        let mut keys = Vec::new();
        for i in 0..accounts {
            let email = format!("bench{i}@example.com");
            let account = self.cli(&["account", "create", "--name", "Bench", "--email", &email]);
            let id = account["account_id"].as_str().unwrap().to_owned();
            self.cli(&[
                "wallet",
                "credit",
                "--account",
                &id,
                "--amount",
                &FUNDING_NAIRA.to_string(),
                "--reference",
                "bench-funding",
            ]);
            for _ in 0..keys_each {
                let key = self.cli(&["key", "create", "--account", &id]);
                keys.push(Key {
                    id: key["key_id"].as_str().unwrap().to_owned(),
                    account: id.clone(),
                    secret: key["api_key"].as_str().unwrap().to_owned(),
                });
            }
        }
        keys
    }

    /// Purchases an account has made (each is ₦50 and succeeds in the sandbox).
    pub(crate) fn purchases_of(&self, account: &str) -> u64 {
        (self.spent_kobo(account) / PURCHASE_KOBO) as u64
    }

    /// What an account's wallet has paid out since `provision` funded it, in
    /// kobo (a failed purchase's debit refunded).
    pub(crate) fn spent_kobo(&self, account: &str) -> i64 {
        let statement = self.cli(&["wallet", "statement", "--account", account, "--limit", "1"]);
        let balance = (statement["balance"].as_f64().unwrap() * 100.0).round() as i64;
        FUNDING_NAIRA * 100 - balance
    }

    /// `billpay_fulfilment_backlog` from `/metrics`.
    pub(crate) fn backlog(&self) -> Option<f64> {
        let address = self.base.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(address).ok()?;
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: bench\r\n\r\n")
            .ok()?;
        let mut text = String::new();
        stream.read_to_string(&mut text).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("billpay_fulfilment_backlog "))
            .and_then(|v| v.trim().parse().ok())
    }

    /// Seconds until every purchase is final (None: not within 120 s).
    pub(crate) fn drain(&self) -> Option<f64> {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(120) {
            if self.backlog() == Some(0.0) {
                return Some(started.elapsed().as_secs_f64());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        None
    }

    /// The server's CPU time so far (utime + stime), in µs (Linux's 100
    /// clock ticks a second, as bench/hot-wallet.sh reads them).
    pub(crate) fn cpu_us(&self) -> u64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // The fields after the command's `(name)`: utime and stime are the 12th and 13th.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let ticks: Vec<u64> = after
            .split_whitespace()
            .skip(11)
            .take(2)
            .filter_map(|v| v.parse().ok())
            .collect();
        ticks.iter().sum::<u64>() * 10_000
    }

    /// Peak resident memory (VmHWM) in MB.
    pub(crate) fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }
}

/// The highest peak resident memory among the servers of a bench run, and
/// which run's server it was.
#[derive(Default)]
pub(crate) struct PeakRss {
    pub(crate) mb: f64,
    pub(crate) run: String,
}

impl PeakRss {
    /// `server`'s peak so far, after the run `run`.
    pub(crate) fn saw(&mut self, server: &Billpay, run: &str) {
        let mb = server.peak_rss_mb();
        if mb > self.mb {
            (self.mb, self.run) = (mb, run.to_owned());
        }
    }
}

impl Drop for Billpay {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bench's people's password.
const PASSWORD: &str = "bench-password-0123";

/// One request over a fresh connection: the answer's head and body.
fn http(address: &str, request: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (head.to_owned(), body.to_owned())
}

/// The `name=value` of the cookie the head sets whose text starts with `name`.
fn cookie(head: &str, name: &str) -> String {
    head.lines()
        .filter_map(|l| {
            l.split_once(": ")
                .filter(|(h, _)| h.eq_ignore_ascii_case("set-cookie"))
        })
        .map(|(_, v)| v.split(';').next().unwrap_or_default())
        .find(|pair| pair.starts_with(name))
        .unwrap_or_else(|| panic!("no {name} cookie in {head}"))
        .to_owned()
}
