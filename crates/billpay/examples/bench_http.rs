//! Purchases per second through the whole service: a real `billpay serve`
//! (release build) answering `POST /v1/airtime/purchase` over HTTP, with its
//! fulfilment and webhook workers running, on SQLite and on PostgreSQL.
//!
//!   cargo build --release -p billpay --bin billpay --example bench_http
//!   target/release/examples/bench_http [RUNS] [PURCHASES] [CONCURRENCY]
//!
//! PostgreSQL is measured when `BILLPAY_BENCH_POSTGRES_URL` (or
//! `BILLPAY_TEST_POSTGRES_URL`) names a server; each run uses a new database.
//! The load generator runs on the same machine and takes its share of the CPU.
//! `BILLPAY_BENCH_SERVE_ARGS=--no-worker` measures the API alone (no
//! fulfilment or webhook work competing for the machine).

use billpay_store::postgres::scratch::ScratchDatabase;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const MASTER_KEY: &str = "6b1f0c7a9d2e4f3b8a5c6d7e8f90123456789abcdef0123456789abcdef01234";
const CUSTOMERS: usize = 16;

fn bin() -> String {
    std::env::var("BILLPAY_BIN").unwrap_or_else(|_| {
        let exe = std::env::current_exe().unwrap();
        let dir = exe.parent().unwrap().parent().unwrap();
        dir.join("billpay").display().to_string()
    })
}

fn cli(database_url: &str, args: &[&str]) -> Value {
    let out = Command::new(bin())
        .args(args)
        .args(["--json", "--database-url", database_url])
        .env("BILLPAY_MASTER_KEY", MASTER_KEY)
        .output()
        .unwrap();
    assert!(out.status.success(), "billpay {args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn serve(database_url: &str) -> (Child, String) {
    let mut child = Command::new(bin())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            database_url,
        ])
        // e.g. `--no-worker`: the API's part alone
        .args(
            std::env::var("BILLPAY_BENCH_SERVE_ARGS")
                .unwrap_or_default()
                .split_whitespace(),
        )
        .env("BILLPAY_MASTER_KEY", MASTER_KEY)
        .env("BILLPAY_SANDBOX_LATENCY_MS", "0")
        .env("BILLPAY_RATE_LIMIT_PER_SECOND", "1000000")
        .env("BILLPAY_RATE_LIMIT_BURST", "1000000")
        .env("BILLPAY_LOG", "error")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = loop {
        let line = lines.next().expect("server exited").unwrap();
        if let Some(address) = line.strip_prefix("billpay listening on ") {
            break address.to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, base)
}

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: RUNS PURCHASES CONCURRENCY"))
        .collect();
    let runs = args.first().copied().unwrap_or(5);
    let purchases = args.get(1).copied().unwrap_or(5_000);
    let concurrency = args.get(2).copied().unwrap_or(64);
    let postgres = std::env::var("BILLPAY_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("BILLPAY_TEST_POSTGRES_URL"))
        .ok()
        .filter(|u| !u.is_empty());
    println!(
        "HTTP POST /v1/airtime/purchase: {runs} runs x {purchases} purchases, {concurrency} concurrent clients, {CUSTOMERS} keys"
    );
    let mut backends = vec!["sqlite"];
    if postgres.is_some() {
        backends.push("postgres");
    } else {
        println!("SKIPPED postgres: set BILLPAY_BENCH_POSTGRES_URL");
    }
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency)
        .build()
        .unwrap();
    for backend in backends {
        let mut rates = Vec::new();
        for run in 1..=runs {
            let dir = tempfile::tempdir().unwrap();
            let mut scratch = None;
            let database_url = if backend == "sqlite" {
                format!("sqlite://{}", dir.path().join("b.db").display())
            } else {
                let db = ScratchDatabase::create(postgres.as_deref().unwrap())
                    .await
                    .unwrap();
                let url = db.url.clone();
                scratch = Some(db);
                url
            };
            let (mut child, base) = serve(&database_url);
            let keys: Vec<String> = (0..CUSTOMERS)
                .map(|i| {
                    let account = cli(
                        &database_url,
                        &[
                            "account",
                            "create",
                            "--name",
                            "B",
                            "--email",
                            &format!("b{i}@example.com"),
                        ],
                    );
                    let id = account["account_id"].as_str().unwrap().to_owned();
                    cli(
                        &database_url,
                        &[
                            "wallet",
                            "credit",
                            "--account",
                            &id,
                            "--amount",
                            "100000000",
                            "--reference",
                            "fund-0001",
                        ],
                    );
                    let key = cli(&database_url, &["key", "create", "--account", &id]);
                    key["api_key"].as_str().unwrap().to_owned()
                })
                .collect();
            let rate = measure(&http, &base, Arc::new(keys), purchases, concurrency).await;
            println!("  {backend:<10} run {run}: {rate:>8.0} purchases/s");
            rates.push(rate);
            child.kill().unwrap();
            child.wait().unwrap();
            drop(scratch);
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "{backend:<12} median {:>8.0} purchases/s (min {:.0}, max {:.0})",
            rates[rates.len() / 2],
            rates[0],
            rates[rates.len() - 1]
        );
    }
}

async fn measure(
    http: &reqwest::Client,
    base: &str,
    keys: Arc<Vec<String>>,
    purchases: usize,
    concurrency: usize,
) -> f64 {
    let url = format!("{base}/v1/airtime/purchase");
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let clients: Vec<_> = (0..concurrency)
        .map(|_| {
            let (http, url, keys, next) = (http.clone(), url.clone(), keys.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= purchases {
                        return;
                    }
                    let body = json!({"provider_id": "mtn", "phone": "08031234567",
                        "amount": 100, "reference": format!("bench-{n:08}")});
                    let response = http
                        .post(&url)
                        .bearer_auth(&keys[n % keys.len()])
                        .json(&body)
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
                }
            })
        })
        .collect();
    for client in clients {
        client.await.unwrap();
    }
    purchases as f64 / started.elapsed().as_secs_f64()
}
