//! The batch row (issue 50): 1,000 airtime purchases sent one by one (each
//! POSTed and answered before the next, over one keep-alive connection),
//! timed until every one is final, against the same 1,000 as one batch
//! (`POST /v1/batches`), timed until the batch is completed. Each on a fresh
//! SQLite server with its workers; the target: the batch at ≥ 0.8 × the
//! one-by-one rate.

use super::*;
use std::net::TcpStream;

/// Items in the batch (the API's largest).
const ITEMS: usize = 1000;

/// One keep-alive HTTP/1.1 connection, for requests one at a time.
struct Connection {
    reader: BufReader<TcpStream>,
    host: String,
}

impl Connection {
    fn open(base: &str) -> Connection {
        let host = base.trim_start_matches("http://").to_owned();
        let stream = TcpStream::connect(&host).expect("connect to billpay");
        stream.set_nodelay(true).unwrap();
        Connection {
            reader: BufReader::new(stream),
            host,
        }
    }

    /// Sends a request; its status and body (read by `Content-Length`).
    fn send(&mut self, method: &str, path: &str, key: &str, body: &str) -> (u16, String) {
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        self.reader.get_mut().write_all(request.as_bytes()).unwrap();
        let mut status_line = String::new();
        self.reader.read_line(&mut status_line).unwrap();
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}

/// The `i`th purchase of a run: ₦50 of MTN airtime to a number of its own
/// (none ending 0000, which the sandbox fails).
fn purchase(run: &str, i: usize) -> Value {
    serde_json::json!({
        "provider_id": "mtn",
        "phone": format!("0803{:07}", 2_000_001 + i),
        "amount": 50,
        "reference": format!("{run}-{i:05}"),
    })
}

/// Purchases per second, the 1,000 sent one by one until all are final.
async fn one_by_one() -> (f64, u64) {
    let server = Billpay::start(None, &[]).await;
    let key = server.provision(1, 1).remove(0);
    let mut connection = Connection::open(&server.base);
    let started = Instant::now();
    let mut errors = 0;
    for i in 0..ITEMS {
        let body = purchase("single", i).to_string();
        let (status, _) = connection.send("POST", PURCHASE, &key, &body);
        if status != 200 {
            errors += 1;
        }
    }
    server.drain().expect("the purchases drained within 120 s");
    (ITEMS as f64 / started.elapsed().as_secs_f64(), errors)
}

/// Purchases per second, the 1,000 as one batch until it is completed.
async fn as_a_batch() -> (f64, u64, String) {
    let server = Billpay::start(None, &[]).await;
    let key = server.provision(1, 1).remove(0);
    let items: Vec<Value> = (0..ITEMS)
        .map(|i| {
            let mut item = purchase("batch", i);
            item["product"] = "airtime".into();
            item
        })
        .collect();
    let body = serde_json::json!({"reference": "bench-batch-1000", "items": items}).to_string();
    let mut connection = Connection::open(&server.base);
    let started = Instant::now();
    let (status, answer) = connection.send("POST", "/v1/batches", &key, &body);
    assert_eq!(status, 202, "the batch was not accepted: {answer}");
    let deadline = started + Duration::from_secs(120);
    loop {
        let (_, answer) = connection.send("GET", "/v1/batches/bench-batch-1000", &key, "");
        let batch: Value = serde_json::from_str(&answer).expect("a JSON batch");
        let data = &batch["data"];
        if data["status"] == "completed" {
            let counts = &data["counts"];
            let successful = counts["successful"].as_u64().unwrap_or(0);
            let rate = ITEMS as f64 / started.elapsed().as_secs_f64();
            let note = format!(
                "{successful} of {ITEMS} successful, {} refused, {} failed",
                counts["refused"], counts["failed"]
            );
            return (rate, ITEMS as u64 - successful, note);
        }
        assert!(
            Instant::now() < deadline,
            "the batch was not completed within 120 s: {data}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The two runs, and the batch's row compared with the one-by-one rate.
pub(crate) async fn batch_rows(rows: &mut Vec<Row>) {
    let (single, single_errors) = one_by_one().await;
    let baseline = Row {
        what: "SQLite 1,000 purchases one by one, until all final".into(),
        rate: single,
        p50_ms: None,
        p99_ms: None,
        max_ms: None,
        errors: single_errors,
        ceiling: None,
        target: None,
        note: "each POST answered before the next, one keep-alive connection".into(),
    };
    let (rate, errors, note) = as_a_batch().await;
    let batch = Row {
        what: "SQLite a 1,000-item batch, until completed".into(),
        rate,
        p50_ms: None,
        p99_ms: None,
        max_ms: None,
        errors,
        ceiling: Some(("one by one".into(), single)),
        target: Some("≥ 0.8".into()),
        note,
    };
    rows.push(baseline);
    rows.push(batch);
}
