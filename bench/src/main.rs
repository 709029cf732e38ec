//! The benchmark harness behind `scripts/bench`: in ONE run it measures the
//! ceilings (an axum JSON echo server; pgbench TPC-B on the same PostgreSQL)
//! and billpay under the same load generator (wrk, 2 threads, 64
//! connections, on the same cores), then prints a Markdown table of ratios
//! and writes the figures as JSON.
//!
//!   bench [--seconds N] [--json FILE] [--rounds N] [--only live | --only postgres | --only smedata | --only fan-out | --only stored | --only audit [--stored N] | --only batches]
//!
//! PostgreSQL is measured when `BILLPAY_BENCH_POSTGRES_URL` names a server
//! (each scenario gets a fresh database on it, dropped afterwards).

const USAGE: &str = "\
billpay-bench [--seconds N] [--json FILE] [--rounds N] [--only NAME [--stored N]]

Without --only: every row (SQLite; PostgreSQL too when BILLPAY_BENCH_POSTGRES_URL is set).
  --seconds N     each wrk run's length (default 10)
  --json FILE     where the figures go (default target/bench/latest.json)
  --only live     SQLite's read and live purchase rows, with echo (about 1 min)
  --only postgres PostgreSQL's live purchase rows against pgbench in the same run (about 1 min)
  --only smedata  data purchases through one fake SME-data site, then two routed by cost (about 30 s a round)
  --rounds N      the SME-data pair N times, alternated, and their mean rates compared (default 1)
  --only fan-out  the webhook runs alone
  --only stored   the 1 M stored runs alone (with an empty run and echo)
  --only audit    the audit and the console overview alone, on both backends (--stored N: at any size)
  --only batches  a 1,000-item batch against the same purchases one by one (about 30 s)
Finds billpay and bench-echo beside its own executable (target/release/).";

mod batches;
mod load;
mod receiver;
mod server;
mod smedata;
mod stored;

use billpay_store::postgres::scratch::ScratchDatabase;
use load::*;
use receiver::Receiver;
use serde::Serialize;
use serde_json::Value;
use server::*;
use smedata::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use stored::*;

const MASTER_KEY: &str = "6b1f0c7a9d2e4f3b8a5c6d7e8f90123456789abcdef0123456789abcdef01234";
const CONNECTIONS: usize = 64;
const PURCHASE: &str = "/v1/airtime/purchase";
/// What bench/wrk/billpay.lua buys: ₦50 of airtime, in kobo.
const PURCHASE_KOBO: i64 = 5_000;
/// What `provision` funds each wallet with, in Naira.
const FUNDING_NAIRA: i64 = 1_000_000_000;
const BALANCE: &str = "/v1/wallet/balance";
const STATUS: &str = "/v1/transaction/status";
/// Purchases stored for the stored-data runs (and the audit rows).
const STORED: u64 = 1_000_000;

fn echo_ceiling(bench: &mut Bench) -> Row {
    let mut command = Command::new(sibling("bench-echo"));
    command.arg("127.0.0.1:0");
    let (mut child, base) = spawn_listening(command);
    let load = Load {
        kind: "echo",
        path: "/echo",
        keys: &["none".into()],
        delay_ms: 0,
    };
    let row = bench
        .wrk(&base, &load)
        .row("axum JSON echo POST (the HTTP ceiling)");
    let _ = child.kill();
    let _ = child.wait();
    row
}

fn compared(mut row: Row, ceiling: &Row, name: &str, target: &str) -> Row {
    row.ceiling = Some((name.to_owned(), ceiling.rate));
    row.target = Some(target.to_owned());
    row
}

async fn sqlite(bench: &mut Bench, echo: &Row, rows: &mut Vec<Row>) {
    let mut peak_rss = PeakRss::default();
    let empty = sqlite_live(bench, echo, rows, &mut peak_rss).await;
    let rounds = bench.rounds;
    smedata_rows(bench, rows, &mut peak_rss, rounds).await;
    rows.extend(million_stored(bench, echo, empty, &mut peak_rss).await);
    fan_out(bench, rows, &mut peak_rss).await;
    batches::batch_rows(rows).await;
    rows.push(Row {
        what: "peak RSS of billpay (SQLite runs)".into(),
        rate: peak_rss.mb,
        p50_ms: None,
        p99_ms: None,
        max_ms: None,
        errors: 0,
        ceiling: None,
        target: Some("≤ 100 MB".into()),
        note: format!("{:.0} MB, in: {}", peak_rss.mb, peak_rss.run),
    });
}

/// The balance read and the live purchases on an empty SQLite database;
/// answers the hot wallet's rate with the workers.
async fn sqlite_live(
    bench: &mut Bench,
    echo: &Row,
    rows: &mut Vec<Row>,
    peak_rss: &mut PeakRss,
) -> f64 {
    // Reads, one account with 16 keys.
    let server = Billpay::start(None, &[]).await;
    let keys = server.provision(1, 16);
    let load = Load {
        kind: "balance",
        path: BALANCE,
        keys: &keys,
        delay_ms: 0,
    };
    let read = bench
        .wrk(&server.base, &load)
        .row("SQLite `GET /v1/wallet/balance`");
    let balance_read = read.clone();
    rows.push(compared(read, echo, "echo", "≥ 0.5"));
    // The storefront and the buyer's home page, against the balance read.
    rows.extend(pages(bench, &server, &balance_read));
    // Live purchases, one hot wallet, API + workers.
    let purchases = Load {
        kind: "purchase",
        path: PURCHASE,
        ..load
    };
    let what = "SQLite live purchase, hot wallet, API + workers";
    let (mut max, half) = bench.max_and_half(&server, &purchases, what);
    // After the half-rate run as well: the time, not a rate over both.
    max.note = drained_note(&server, None);
    let empty = max.rate;
    rows.push(compared(max, echo, "echo", "≥ 0.20"));
    rows.push(half);
    peak_rss.saw(&server, "the hot wallet's run");
    drop(server);
    // 64 wallets, one key each.
    let server = Billpay::start(None, &[]).await;
    let keys = server.provision(64, 1);
    let load = Load {
        keys: &keys,
        ..purchases
    };
    let mut wide = bench
        .wrk(&server.base, &load)
        .row("SQLite live purchase, 64 wallets, API + workers");
    wide.note = drained_note(&server, Some((wide.rate, bench.seconds)));
    rows.push(compared(wide, echo, "echo", "—"));
    peak_rss.saw(&server, "the 64 wallets' run");
    drop(server);
    // The API alone.
    let server = Billpay::start(None, &["--no-worker"]).await;
    let keys = server.provision(1, 16);
    let load = Load {
        keys: &keys,
        ..purchases
    };
    let what = "SQLite live purchase, hot wallet, `--no-worker`";
    let api_only = bench.wrk(&server.base, &load).row(what);
    rows.push(compared(api_only, echo, "echo", "≥ 0.35"));
    peak_rss.saw(&server, "the `--no-worker` run");
    empty
}

/// `GET /` in a browser (the storefront, no session) and `GET /dashboard`
/// signed in (the buyer's home), each against the balance read's rate; then
/// the home of an account with developer access (its summary and 30-day
/// chart besides), for the record.
fn pages(bench: &mut Bench, server: &Billpay, balance_read: &Row) -> [Row; 3] {
    let none = ["none".to_owned()];
    let storefront = Load {
        kind: "storefront",
        path: "/",
        keys: &none,
        delay_ms: 0,
    };
    let front = bench
        .wrk(&server.base, &storefront)
        .row("SQLite `GET /` (the storefront, a browser)");
    let (account, cookie) = server.dashboard_session();
    let session = [cookie];
    let home = Load {
        kind: "home",
        path: "/dashboard",
        keys: &session,
        delay_ms: 0,
    };
    // An account the operator creates has developer access: a buyer has not.
    let developer_access = |state: &str| {
        server.cli(&["account", "developer-access", &account, state]);
    };
    developer_access("off");
    let buyer = bench
        .wrk(&server.base, &home)
        .row("SQLite `GET /dashboard` (the buyer's home, signed in)");
    developer_access("on");
    let developer = bench
        .wrk(&server.base, &home)
        .row("SQLite `GET /dashboard` (a developer's home: the summary and chart too)");
    [
        compared(front, balance_read, "balance read", "≥ 0.5"),
        compared(buyer, balance_read, "balance read", "≥ 0.5"),
        compared(developer, balance_read, "balance read", "—"),
    ]
}

/// 1 M purchases (transactions, ledger entries, webhook events) stored for
/// one wallet: `billpay audit` over them, the console's overview, the
/// hot-wallet purchase run again, then status lookups by reference among them.
async fn million_stored(
    bench: &mut Bench,
    echo: &Row,
    empty: f64,
    peak_rss: &mut PeakRss,
) -> [Row; 4] {
    let server = Billpay::start(None, &[]).await;
    let keys = server.provision_keys(1, 16);
    let seeding = Instant::now();
    seed_purchases(&server.database_url, &keys[0], STORED).await;
    let seeded = seeding.elapsed().as_secs_f64();
    let audit = audit_row(
        &server,
        "SQLite `billpay audit`, 1 M stored",
        "1 M purchases",
    );
    let overview = overview_row(
        &server,
        "SQLite console overview, 1 M stored",
        "1 M purchases",
    );
    let secrets: Vec<String> = keys.into_iter().map(|k| k.secret).collect();
    let load = Load {
        kind: "purchase",
        path: PURCHASE,
        keys: &secrets,
        delay_ms: 0,
    };
    let what = "SQLite live purchase, hot wallet, API + workers, 1 M stored";
    let mut row = bench.wrk(&server.base, &load).row(what);
    row.ceiling = Some(("the same, empty".into(), empty));
    row.target = Some("≥ 0.8".into());
    row.note = format!("{STORED} purchases stored first ({seeded:.0} s)");
    let lookups = Load {
        kind: "status",
        path: STATUS,
        ..load
    };
    let what = "SQLite `GET /v1/transaction/status?reference=`, 1 M stored";
    let status = bench.wrk(&server.base, &lookups).row(what);
    peak_rss.saw(&server, "the 1 M stored runs");
    [audit, overview, row, compared(status, echo, "echo", "—")]
}

/// Webhook fan-out: a backlog of purchases made by an API-only server is
/// fulfilled and delivered by a `--worker-only` server on the same database
/// to a loopback receiver, 16 accounts of one key each: once with every
/// receiver fast, once with one key's receiver holding each delivery 10 s.
async fn fan_out(bench: &mut Bench, rows: &mut Vec<Row>, peak_rss: &mut PeakRss) {
    let mut all_fast = None;
    for slow in [false, true] {
        let receiver = Receiver::start();
        let api = Billpay::start(None, &["--no-worker"]).await;
        let keys = api.provision_keys(16, 1);
        for (i, key) in keys.iter().enumerate() {
            let path = if slow && i == 0 { "/slow" } else { "/hook" };
            let url = format!("{}{path}", receiver.base);
            api.cli(&["key", "webhook", &key.id, "--url", &url]);
        }
        let secrets: Vec<String> = keys.iter().map(|k| k.secret.clone()).collect();
        let load = Load {
            kind: "purchase",
            path: PURCHASE,
            keys: &secrets,
            delay_ms: 0,
        };
        let made = bench.wrk(&api.base, &load);
        let fast_keys = if slow { &keys[1..] } else { &keys[..] };
        let expected: u64 = fast_keys.iter().map(|k| api.purchases_of(&k.account)).sum();
        let workers = api.another(&["--worker-only"]);
        let all_arrived = receiver.wait_fast(expected, Duration::from_secs(120));
        let what = if slow {
            "webhook fan-out, one of 16 receivers takes 10 s"
        } else {
            "webhook fan-out, 16 fast receivers"
        };
        let mut row = Row {
            what: what.into(),
            rate: receiver.fast_rate(),
            p50_ms: None,
            p99_ms: None,
            max_ms: None,
            errors: made.errors(),
            ceiling: None,
            target: Some("≥ 5 000 /s".into()),
            note: format!(
                "{} of {expected} deliveries to fast receivers{}",
                receiver.fast(),
                if all_arrived {
                    ""
                } else {
                    " (NOT all within 120 s)"
                }
            ),
        };
        if slow {
            row.ceiling = all_fast.map(|rate| ("all fast".to_owned(), rate));
            row.target = Some("≈ 1 (the slow one delays no other)".into());
            row.note += &format!("; {} slow deliveries done meanwhile", receiver.slow());
        } else {
            all_fast = Some(row.rate);
        }
        peak_rss.saw(&workers, "the webhook fan-out");
        rows.push(row);
    }
}

/// How long the workers took, after the load, to make every purchase
/// final; with the load just before (`(rate, seconds)`), how many they made
/// final a second over both: a rate the workers cannot keep up with is the
/// API's, not the purchases'.
fn drained_note(server: &Billpay, load: Option<(f64, u64)>) -> String {
    match (server.drain(), load) {
        (Some(secs), Some((rate, load_secs))) => format!(
            "backlog drained {secs:.1} s after the load ({:.0} made final a second)",
            rate * load_secs as f64 / (load_secs as f64 + secs)
        ),
        (Some(secs), None) => format!("backlog drained {secs:.1} s after the load"),
        (None, _) => "backlog NOT drained within 120 s".into(),
    }
}

/// pgbench TPC-B, 64 clients, on a fresh database of the same server.
async fn pgbench(bench: &Bench, admin: &str) -> Row {
    let db = ScratchDatabase::create(admin)
        .await
        .expect("scratch database");
    let init = Command::new("pgbench")
        .args(["-i", "-q", "-s", "16", &db.url])
        .output()
        .expect("pgbench (apt-get install postgresql-client)");
    assert!(init.status.success(), "pgbench -i: {init:?}");
    let run = Command::new("pgbench")
        .args([
            "-c",
            "64",
            "-j",
            "2",
            "-T",
            &bench.seconds.to_string(),
            &db.url,
        ])
        .output()
        .expect("pgbench");
    let text = String::from_utf8_lossy(&run.stdout);
    let tps = text
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("pgbench printed no tps: {text}"));
    Row {
        what: "pgbench TPC-B, 64 clients (the PostgreSQL ceiling)".into(),
        rate: tps,
        p50_ms: None,
        p99_ms: None,
        max_ms: None,
        errors: 0,
        ceiling: None,
        target: None,
        note: String::new(),
    }
}

async fn postgres(bench: &mut Bench, admin: &str, rows: &mut Vec<Row>) {
    postgres_live(bench, admin, rows).await;
    rows.extend(audit_rows(Some(admin), STORED, false).await);
}

/// pgbench, then the live purchase rows against it.
async fn postgres_live(bench: &mut Bench, admin: &str, rows: &mut Vec<Row>) {
    let tpcb = pgbench(bench, admin).await;
    let cases: [(&str, &[&str], usize, usize, &str); 3] = [
        (
            "PostgreSQL live purchase, hot wallet, API + workers",
            &[],
            1,
            16,
            "≥ 1",
        ),
        (
            "PostgreSQL live purchase, 64 wallets, API + workers",
            &[],
            64,
            1,
            "≥ 2",
        ),
        (
            "PostgreSQL live purchase, hot wallet, `--no-worker`",
            &["--no-worker"],
            1,
            16,
            "—",
        ),
    ];
    let mut measured = Vec::new();
    for (what, args, accounts, keys_each, target) in cases {
        let server = Billpay::start(Some(admin), args).await;
        let keys = server.provision(accounts, keys_each);
        let load = Load {
            kind: "purchase",
            path: PURCHASE,
            keys: &keys,
            delay_ms: 0,
        };
        let mut row = bench.wrk(&server.base, &load).row(what);
        if args.is_empty() {
            row.note = drained_note(&server, Some((row.rate, bench.seconds)));
        }
        measured.push(compared(row, &tpcb, "pgbench", target));
    }
    rows.push(tpcb);
    rows.extend(measured);
}

fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| what | rate /s | p50 ms | p99 ms | max ms | errors | ratio | target | note |\n\
         |---|---:|---:|---:|---:|---:|---:|---|---|\n",
    );
    for row in rows {
        let ratio = row.ceiling.as_ref().map_or("—".into(), |(name, c)| {
            format!("{:.2} × {name}", row.rate / c)
        });
        let rate = if row.what.starts_with("peak RSS") || row.what.contains("`billpay audit`") {
            "—".into()
        } else {
            format!("{:.0}", row.rate)
        };
        let ms = |v: Option<f64>| v.map_or("—".into(), |v| format!("{v:.2}"));
        out += &format!(
            "| {} | {rate} | {} | {} | {} | {} | {ratio} | {} | {} |\n",
            row.what,
            ms(row.p50_ms),
            ms(row.p99_ms),
            ms(row.max_ms),
            row.errors,
            row.target.as_deref().unwrap_or("—"),
            row.note
        );
    }
    out
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return;
    }
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let mut bench = Bench {
        seconds: flag("--seconds").map_or(10, |s| s.parse().expect("--seconds N")),
        rounds: flag("--rounds").map_or(1, |n| n.parse::<usize>().expect("--rounds N").max(1)),
        run: 0,
        postgres: std::env::var("BILLPAY_BENCH_POSTGRES_URL")
            .ok()
            .filter(|u| !u.is_empty()),
    };
    let json_path = flag("--json").map_or_else(
        || workspace().join("target/bench/latest.json"),
        PathBuf::from,
    );
    let only = flag("--only");
    if let Some(name) = only.as_deref()
        && ![
            "live", "postgres", "smedata", "fan-out", "stored", "audit", "batches",
        ]
        .contains(&name)
    {
        eprintln!("unknown --only {name}\n\n{USAGE}");
        std::process::exit(2);
    }
    let mut rows = Vec::new();
    if flag("--only").as_deref() == Some("live") {
        // The SQLite rows that change with the purchase path, and their ceiling.
        let echo = echo_ceiling(&mut bench);
        sqlite_live(&mut bench, &echo, &mut rows, &mut PeakRss::default()).await;
        rows.insert(0, echo);
    } else if flag("--only").as_deref() == Some("postgres") {
        // The PostgreSQL rows that change with the purchase path, and their ceiling.
        match bench.postgres.clone() {
            Some(admin) => postgres_live(&mut bench, &admin, &mut rows).await,
            None => eprintln!("SKIPPED PostgreSQL: set BILLPAY_BENCH_POSTGRES_URL"),
        }
    } else if flag("--only").as_deref() == Some("smedata") {
        // Routing by cost against one site (issue 47): the pair compares
        // with itself, no ceiling needed.
        let rounds = bench.rounds;
        smedata_rows(&mut bench, &mut rows, &mut PeakRss::default(), rounds).await;
    } else if flag("--only").as_deref() == Some("fan-out") {
        // The webhook runs alone (a quicker loop while working on delivery).
        fan_out(&mut bench, &mut rows, &mut PeakRss::default()).await;
    } else if flag("--only").as_deref() == Some("stored") {
        // The 1 M stored runs alone, against an empty hot-wallet run and echo.
        let echo = echo_ceiling(&mut bench);
        let server = Billpay::start(None, &[]).await;
        let keys = server.provision(1, 16);
        let load = Load {
            kind: "purchase",
            path: PURCHASE,
            keys: &keys,
            delay_ms: 0,
        };
        let empty = bench
            .wrk(&server.base, &load)
            .row("SQLite live purchase, hot wallet, API + workers");
        drop(server);
        let stored = million_stored(&mut bench, &echo, empty.rate, &mut PeakRss::default()).await;
        rows = [echo, empty].into_iter().chain(stored).collect();
    } else if flag("--only").as_deref() == Some("batches") {
        // A 1,000-item batch against the same purchases one by one (issue 50).
        batches::batch_rows(&mut rows).await;
    } else if flag("--only").as_deref() == Some("audit") {
        // The audit alone, on both backends, at any size.
        let stored = flag("--stored").map_or(STORED, |n| n.parse().expect("--stored N"));
        rows = audit_rows(bench.postgres.as_deref(), stored, true).await;
    } else {
        let echo = echo_ceiling(&mut bench);
        sqlite(&mut bench, &echo, &mut rows).await;
        rows.insert(0, echo);
        match bench.postgres.clone() {
            Some(admin) => postgres(&mut bench, &admin, &mut rows).await,
            None => eprintln!("SKIPPED PostgreSQL: set BILLPAY_BENCH_POSTGRES_URL"),
        }
    }
    println!(
        "{} s per run, wrk -t2 -c{CONNECTIONS}, sandbox latency 0, load generator on the same {} cores\n",
        bench.seconds,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("{}", table(&rows));
    std::fs::create_dir_all(json_path.parent().unwrap()).unwrap();
    std::fs::write(&json_path, serde_json::to_vec_pretty(&rows).unwrap()).unwrap();
    println!("figures written to {}", json_path.display());
}
