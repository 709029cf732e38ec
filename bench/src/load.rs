//! The load generator's side: wrk runs, their figures and the result rows.

use super::*;

/// One measured line of the table.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub(crate) what: String,
    /// Requests (or pgbench transactions) per second; MB for the RSS row.
    pub(crate) rate: f64,
    /// Latencies in ms: absent where wrk did not measure them.
    pub(crate) p50_ms: Option<f64>,
    pub(crate) p99_ms: Option<f64>,
    pub(crate) max_ms: Option<f64>,
    pub(crate) errors: u64,
    /// The ceiling this row is compared with, and its name.
    pub(crate) ceiling: Option<(String, f64)>,
    /// The target for `rate / ceiling` (or for p99, RSS: see `note`).
    pub(crate) target: Option<String>,
    pub(crate) note: String,
}

/// What wrk reports through the script's `done()`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct WrkResult {
    pub(crate) requests: u64,
    pub(crate) duration_us: u64,
    pub(crate) connect_errors: u64,
    pub(crate) read_errors: u64,
    pub(crate) write_errors: u64,
    pub(crate) status_errors: u64,
    pub(crate) timeouts: u64,
    p50_us: u64,
    p99_us: u64,
    pub(crate) max_us: u64,
}

impl WrkResult {
    pub(crate) fn rate(&self) -> f64 {
        self.requests as f64 / (self.duration_us as f64 / 1e6)
    }
    pub(crate) fn errors(&self) -> u64 {
        self.connect_errors
            + self.read_errors
            + self.write_errors
            + self.status_errors
            + self.timeouts
    }
    pub(crate) fn row(&self, what: &str) -> Row {
        Row {
            what: what.to_owned(),
            rate: self.rate(),
            p50_ms: Some(self.p50_us as f64 / 1e3),
            p99_ms: Some(self.p99_us as f64 / 1e3),
            max_ms: Some(self.max_us as f64 / 1e3),
            errors: self.errors(),
            ceiling: None,
            target: None,
            note: String::new(),
        }
    }
}

/// One wrk run of `kind` (see bench/wrk/billpay.lua).
pub(crate) struct Load<'a> {
    pub(crate) kind: &'a str,
    pub(crate) path: &'a str,
    pub(crate) keys: &'a [String],
    pub(crate) delay_ms: u64,
}

pub(crate) struct Bench {
    pub(crate) seconds: u64,
    /// How many alternated rounds of the SME-data pair (`--rounds`).
    pub(crate) rounds: usize,
    pub(crate) run: usize,
    pub(crate) postgres: Option<String>,
}

impl Bench {
    pub(crate) fn wrk(&mut self, base: &str, load: &Load) -> WrkResult {
        self.run += 1;
        let script = workspace().join("bench/wrk/billpay.lua");
        let output = Command::new("wrk")
            .args([
                "-t2",
                &format!("-c{CONNECTIONS}"),
                &format!("-d{}s", self.seconds),
            ])
            .args(["--timeout", "10s", "-s"])
            .arg(script)
            .arg(format!("{base}{}", load.path))
            .env("BENCH_KIND", load.kind)
            .env("BENCH_PATH", load.path)
            .env("BENCH_KEYS", load.keys.join(","))
            .env("BENCH_RUN", self.run.to_string())
            .env("BENCH_DELAY_MS", load.delay_ms.to_string())
            .output()
            .expect("wrk (apt-get install wrk)");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix("BENCH_RESULT "))
            .unwrap_or_else(|| panic!("wrk printed no result: {stdout}{:?}", output.stderr));
        serde_json::from_str(line).expect("wrk result")
    }

    /// Max rate, then (for `half`) a second run paced at half of it.
    pub(crate) fn max_and_half(&mut self, server: &Billpay, load: &Load, what: &str) -> (Row, Row) {
        let max = self.wrk(&server.base, load).row(what);
        let per_connection = (max.rate / 2.0 / CONNECTIONS as f64).max(1.0);
        let paced = Load {
            delay_ms: (1000.0 / per_connection).round() as u64,
            ..*load
        };
        let mut half = self
            .wrk(&server.base, &paced)
            .row(&format!("{what}, half rate"));
        half.target = Some("p99 ≤ 10 ms".into());
        (max, half)
    }
}
