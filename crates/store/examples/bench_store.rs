//! The write path alone: `place_purchase` calls per second, straight on the
//! store (no HTTP), for SQLite and PostgreSQL (group commit on and off).
//!
//!   cargo run --release -p billpay-store --example bench_store -- [RUNS] [PURCHASES] [CONCURRENCY]
//!
//! PostgreSQL is measured when `BILLPAY_BENCH_POSTGRES_URL` (or
//! `BILLPAY_TEST_POSTGRES_URL`) names a server; each run uses a new database.
//! Prints one line per run and a median per backend. scripts/bench-purchases
//! runs it with the HTTP benchmark.

use billpay_domain::{AccountId, KeyId, Kobo, Product};
use billpay_store::postgres::scratch::ScratchDatabase;
use billpay_store::postgres::{PostgresOptions, PostgresStore};
use billpay_store::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const ACCOUNTS: usize = 64;

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: RUNS PURCHASES CONCURRENCY"))
        .collect();
    let runs = args.first().copied().unwrap_or(5);
    let purchases = args.get(1).copied().unwrap_or(20_000);
    let concurrency = args.get(2).copied().unwrap_or(256);
    let postgres = std::env::var("BILLPAY_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("BILLPAY_TEST_POSTGRES_URL"))
        .ok()
        .filter(|u| !u.is_empty());
    println!(
        "store-level place_purchase: {runs} runs x {purchases} purchases, {concurrency} concurrent, {ACCOUNTS} wallets"
    );
    let mut backends = vec!["sqlite"];
    if postgres.is_some() {
        backends.extend(["postgres", "postgres-no-group-commit"]);
    } else {
        println!("SKIPPED postgres: set BILLPAY_BENCH_POSTGRES_URL");
    }
    for backend in backends {
        let mut rates = Vec::new();
        for run in 1..=runs {
            let dir = tempfile::tempdir().unwrap();
            let mut scratch = None;
            let store: SharedStore = match backend {
                "sqlite" => open(&format!("sqlite://{}", dir.path().join("b.db").display()))
                    .await
                    .unwrap(),
                _ => {
                    let db = ScratchDatabase::create(postgres.as_deref().unwrap())
                        .await
                        .unwrap();
                    let mut options = PostgresOptions {
                        group_commit: backend == "postgres",
                        ..PostgresOptions::default()
                    };
                    if let Ok(n) = std::env::var("BILLPAY_BENCH_PG_BATCHES") {
                        options.batches_in_flight = n.parse().unwrap();
                    }
                    let store = PostgresStore::open_with(&db.url, options).await.unwrap();
                    scratch = Some(db);
                    Arc::new(store)
                }
            };
            let rate = measure(&store, purchases, concurrency).await;
            println!("  {backend:<26} run {run}: {rate:>8.0} purchases/s");
            rates.push(rate);
            drop(store);
            drop(scratch);
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "{backend:<28} median {:>8.0} purchases/s (min {:.0}, max {:.0})",
            rates[rates.len() / 2],
            rates[0],
            rates[rates.len() - 1]
        );
    }
}

async fn measure(store: &SharedStore, purchases: usize, concurrency: usize) -> f64 {
    let mut wallets: Vec<(AccountId, KeyId)> = Vec::new();
    for i in 0..ACCOUNTS {
        let account = store
            .create_account(NewAccount {
                name: "Bench".into(),
                email: format!("bench{i}@example.com"),
                password_hash: None,
                kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
            })
            .await
            .unwrap();
        let key = store
            .create_api_key(NewApiKey {
                account_id: account.id,
                name: None,
                key_hash: format!("hash-{i}"),
                display_prefix: "bp".into(),
                announce: true,
            })
            .await
            .unwrap();
        store
            .credit(account.id, Kobo::from_naira(100_000_000), "fund")
            .await
            .unwrap();
        wallets.push((account.id, key.id));
    }
    let wallets = Arc::new(wallets);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (store, wallets, next) = (store.clone(), wallets.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= purchases {
                        return;
                    }
                    let (account, key) = wallets[n % wallets.len()];
                    store
                        .place_purchase(NewPurchase {
                            account_id: account,
                            key_id: key,
                            reference: format!("bench-{n:08}"),
                            product: Product::Airtime,
                            provider: "mtn".into(),
                            plan_id: None,
                            label: "MTN Airtime".into(),
                            recipient: "08031234567".into(),
                            amount: Kobo::from_naira(100),
                            face_value: Kobo::from_naira(100),
                            tier: None,
                            details: Default::default(),
                        })
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    purchases as f64 / started.elapsed().as_secs_f64()
}
