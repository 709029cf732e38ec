//! The crash loop (`scripts/crash-loop`): live purchases under load, the
//! sandbox at a realistic latency, `kill -9` of the server at random moments,
//! restart, N times; then every purchase answered 200 exists, every
//! transaction is final with one outcome, the money adds up and `billpay
//! audit` passes. Ignored by `cargo test` (it runs for a while); the script
//! runs it, `BILLPAY_CRASH_KILLS` times (default 5), on the test backend.

use crate::support::receiver::Receiver;
use crate::support::*;
use rand::Rng;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const CLIENTS: usize = 4;
const FUNDS_NAIRA: i64 = 10_000_000;

/// What the client saw for each reference it sent.
#[derive(Default)]
struct Sent {
    /// reference → reference_code, for purchases answered 200.
    answered: HashMap<String, String>,
    /// Sent but no answer (the server died under them) or an error.
    unanswered: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "long: run by scripts/crash-loop"]
async fn crash_loop() {
    let kills: usize = std::env::var("BILLPAY_CRASH_KILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let receiver = Receiver::start().await;
    let mut server = TestServer::spawn_with(Options {
        latency_ms: 300,
        ..Options::default()
    })
    .await;
    let customer = server.customer(&FUNDS_NAIRA.to_string());
    server.cli(&[
        "key",
        "webhook",
        &customer.key_id,
        "--url",
        &receiver.url("/hooks"),
    ]);

    let mut sent = Sent::default();
    for _ in 0..kills {
        let uptime = Duration::from_millis(rand::rng().random_range(300..1500));
        load_then_kill(&mut server, &customer, uptime, &mut sent).await;
        server.start();
    }

    // A loop where no purchase was ever answered would prove nothing.
    assert!(
        sent.answered.len() >= kills,
        "only {} purchases answered 200 over {kills} runs",
        sent.answered.len()
    );
    // Back up for good: everything must settle.
    let transactions = wait_all_final(&server, &customer.account_id).await;
    for (reference, code) in &sent.answered {
        let status = server
            .get(
                &customer.api_key,
                &format!("/v1/transaction/status?reference={reference}"),
            )
            .await;
        assert_eq!(
            status.assert_ok()["reference_code"],
            code.as_str(),
            "answered 200 but lost"
        );
    }
    let finals = count_by_status(&transactions);
    let spent: i64 = transactions
        .iter()
        .filter(|t| t["status"] == "successful")
        .map(|t| kobo(&t["amount"]))
        .sum();
    let statement = server.assert_ledger_consistent(&customer.account_id);
    assert_eq!(
        kobo(&statement["balance"]),
        FUNDS_NAIRA * 100 - spent,
        "balance = funds - successful purchases: {statement}"
    );
    assert_one_outcome_per_webhook(&receiver, &transactions).await;
    let (passed, report) = server.audit();
    assert!(passed, "billpay audit: {report}");

    println!(
        "crash loop: {kills} kills (kill -9), {} purchases sent, {} answered 200, {} cut off or refused by the dying server; \
         {} transactions recorded, final: {finals:?}; every answered purchase found, one outcome \
         per webhook, balance = funds - successful, billpay audit passed",
        sent.answered.len() + sent.unanswered,
        sent.answered.len(),
        sent.unanswered,
        transactions.len(),
    );
}

/// Runs `CLIENTS` clients sending purchases back to back for `uptime`, then
/// kills the server under the ones still in flight.
async fn load_then_kill(
    server: &mut TestServer,
    customer: &Customer,
    uptime: Duration,
    sent: &mut Sent,
) {
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (http, url, key, stop) = (
                server.http.clone(),
                server.url("/v1/electricity/purchase"),
                customer.api_key.clone(),
                stop.clone(),
            );
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let reference = reference();
                    let answer = http
                        .post(&url)
                        .bearer_auth(&key)
                        .json(&electricity(&reference, &meter(), 1000.0))
                        .send()
                        .await;
                    let code = match answer {
                        Ok(r) if r.status() == 200 => {
                            r.json::<Value>().await.ok().and_then(|b| {
                                b["data"]["reference_code"].as_str().map(str::to_owned)
                            })
                        }
                        _ => None,
                    };
                    seen.push((reference, code));
                }
                seen
            })
        })
        .collect();
    tokio::time::sleep(uptime).await;
    // kill -9 while the clients are sending: some requests are cut off.
    server.kill();
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        for (reference, code) in client.await.unwrap() {
            match code {
                Some(code) => {
                    sent.answered.insert(reference, code);
                }
                None => sent.unanswered += 1,
            }
        }
    }
}

/// A meter the sandbox succeeds on, fails on (`0000`) or first leaves
/// pending (`1111`).
fn meter() -> String {
    let tail = match rand::rng().random_range(0..10) {
        0 => "0000".to_owned(),
        1 => "1111".to_owned(),
        _ => format!("{:04}", rand::rng().random_range(2000..9999)),
    };
    format!("4501234{tail}")
}

/// Every transaction of the account once none is `processing` any more.
async fn wait_all_final(server: &TestServer, account_id: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let list = server.cli(&[
            "transaction",
            "list",
            "--account",
            account_id,
            "--limit",
            "100000",
        ]);
        let transactions = list["transactions"].as_array().unwrap().clone();
        if transactions.iter().all(|t| t["status"] != "processing") {
            return transactions;
        }
        assert!(
            Instant::now() < deadline,
            "still processing after restart: {list}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn count_by_status(transactions: &[Value]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for t in transactions {
        *counts
            .entry(t["status"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    counts
}

/// Each final transaction's webhook arrives, and every delivery of it (a
/// crash may cause a redelivery) carries its one final status.
async fn assert_one_outcome_per_webhook(receiver: &Receiver, transactions: &[Value]) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let mut outcomes: HashMap<String, Vec<Value>> = HashMap::new();
        for hook in receiver.received() {
            let body = hook.json();
            let code = body["reference_code"].as_str().unwrap().to_owned();
            outcomes
                .entry(code)
                .or_default()
                .push(body["status"].clone());
        }
        let missing = transactions
            .iter()
            .filter(|t| !outcomes.contains_key(t["code"].as_str().unwrap()))
            .count();
        if missing == 0 {
            for t in transactions {
                for status in &outcomes[t["code"].as_str().unwrap()] {
                    assert_eq!(status, &t["status"], "a webhook of {}", t["code"]);
                }
            }
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{missing} webhooks never arrived"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Naira (a JSON number with at most 2 decimals) as kobo.
fn kobo(naira: &Value) -> i64 {
    (naira.as_f64().expect("an amount") * 100.0).round() as i64
}
