//! `GET /metrics` scraped over real HTTP from the spawned server, before and
//! after real purchases, deliveries and refusals: every series moves by what
//! the test did.

use crate::support::receiver::Receiver;
use crate::support::*;
use serde_json::json;
use std::collections::BTreeMap;

/// One scrape, parsed: series (name + sorted labels) → value.
struct Scrape(BTreeMap<String, f64>);

impl Scrape {
    async fn of(server: &TestServer, url: &str) -> Scrape {
        let response = server.http.get(url).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let content_type = response.headers()["content-type"].to_str().unwrap();
        assert!(
            content_type.starts_with("text/plain; version=0.0.4"),
            "{content_type}"
        );
        let text = response.text().await.unwrap();
        let series = text
            .lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .map(|line| {
                let (series, value) = line.rsplit_once(' ').unwrap();
                (normalise(series), value.parse().unwrap())
            })
            .collect();
        Scrape(series)
    }

    /// The value of `name{labels}` (0 when the series does not exist yet).
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let mut labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
        labels.sort();
        let key = if labels.is_empty() {
            name.to_owned()
        } else {
            format!("{name}{{{}}}", labels.join(","))
        };
        self.0.get(&key).copied().unwrap_or(0.0)
    }

    /// Whether the scrape has this series (with any labels) at all.
    fn has(&self, name: &str) -> bool {
        self.0
            .keys()
            .any(|series| series == name || series.starts_with(&format!("{name}{{")))
    }

    fn has_label_value(&self, value: &str) -> bool {
        self.0.keys().any(|series| series.contains(value))
    }
}

/// `name{b="2",a="1"}` → `name{a="1",b="2"}`.
fn normalise(series: &str) -> String {
    let Some((name, labels)) = series.split_once('{') else {
        return series.to_owned();
    };
    let mut labels: Vec<&str> = labels.trim_end_matches('}').split("\",").collect();
    let mut labels: Vec<String> = labels
        .drain(..)
        .map(|l| format!("{}\"", l.trim_end_matches('"')))
        .collect();
    labels.sort();
    format!("{name}{{{}}}", labels.join(","))
}

async fn purchase(server: &TestServer, key: &str, phone: &str) -> String {
    let body =
        json!({"provider_id": "mtn", "phone": phone, "amount": 100, "reference": reference()});
    let reply = server.post(key, "/v1/airtime/purchase", body).await;
    reply.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn metrics_move_with_real_purchases_deliveries_and_refusals() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("10000");
    server.cli(&["key", "webhook", &c.key_id, "--url", &receiver.url("/hook")]);
    let metrics = server.url("/metrics");
    let before = Scrape::of(&server, &metrics).await;
    let airtime = |status| [("product", "airtime"), ("status", status)];
    assert_eq!(
        before.get("billpay_purchases_total", &airtime("successful")),
        0.0
    );

    // sandbox: a number ending 0000 fails, 1111 is pending first (then requeried), others succeed
    let codes = [
        purchase(&server, &c.api_key, "08031234567").await,
        purchase(&server, &c.api_key, "08031231111").await,
        purchase(&server, &c.api_key, "08031230000").await,
    ];
    for code in &codes {
        server.wait_final(&c.api_key, code).await;
        receiver.wait_for(code, 1).await;
    }
    server
        .get(&c.api_key, "/v1/providers/airtime")
        .await
        .assert_ok();
    server
        .get("bp_live_nosuchkey", "/v1/wallet/balance")
        .await
        .assert_error(401, "invalid_api_key");

    // a key allowed one request: the rest of a quick burst is refused
    let limited = server.customer("0");
    server.cli(&[
        "key",
        "set-rate-limit",
        &limited.key_id,
        "--per-second",
        "1",
        "--burst",
        "1",
    ]);
    let mut refused = 0;
    for _ in 0..4 {
        let reply = server.get(&limited.api_key, "/v1/wallet/balance").await;
        if reply.status == 429 {
            refused += 1;
        }
    }
    assert!(refused >= 1);

    // deliveries are counted once recorded, just after the receiver has them
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let after = loop {
        let scrape = Scrape::of(&server, &metrics).await;
        let delivered = scrape.get(
            "billpay_webhook_deliveries_total",
            &[("result", "delivered")],
        );
        if delivered >= 3.0 || std::time::Instant::now() > deadline {
            break scrape;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(
        after.get(
            "billpay_webhook_deliveries_total",
            &[("result", "delivered")]
        ),
        3.0
    );

    assert_eq!(
        after.get("billpay_purchases_total", &airtime("successful")),
        2.0
    );
    assert_eq!(
        after.get("billpay_purchases_total", &airtime("failed")),
        1.0
    );
    let purchase_route = [
        ("method", "POST"),
        ("route", "/v1/airtime/purchase"),
        ("status", "200"),
    ];
    assert_eq!(
        after.get("billpay_http_requests_total", &purchase_route),
        3.0
    );
    assert_eq!(
        after.get(
            "billpay_http_request_duration_seconds_count",
            &purchase_route
        ),
        3.0
    );
    assert!(after.get("billpay_http_request_duration_seconds_sum", &purchase_route) > 0.0);
    // the route template is the label, never the raw path
    let by_service = [
        ("method", "GET"),
        ("route", "/v1/providers/{service}"),
        ("status", "200"),
    ];
    assert_eq!(after.get("billpay_http_requests_total", &by_service), 1.0);
    assert!(!after.has_label_value("/v1/providers/airtime"));
    let unauthorised = [
        ("method", "GET"),
        ("route", "/v1/wallet/balance"),
        ("status", "401"),
    ];
    assert_eq!(after.get("billpay_http_requests_total", &unauthorised), 1.0);
    let limited_route = [
        ("method", "GET"),
        ("route", "/v1/wallet/balance"),
        ("status", "429"),
    ];
    assert_eq!(
        after.get("billpay_http_requests_total", &limited_route),
        refused as f64
    );
    assert_eq!(after.get("billpay_rate_limited_total", &[]), refused as f64);

    let supplier = |operation, outcome| {
        after.get(
            "billpay_supplier_calls_total",
            &[
                ("supplier", "sandbox"),
                ("operation", operation),
                ("outcome", outcome),
            ],
        )
    };
    assert_eq!(supplier("purchase", "delivered"), 1.0);
    assert_eq!(supplier("purchase", "failed"), 1.0);
    assert_eq!(supplier("purchase", "pending"), 1.0);
    assert_eq!(supplier("requery", "delivered"), 1.0);
    let requery_latency = [
        ("supplier", "sandbox"),
        ("operation", "requery"),
        ("outcome", "delivered"),
    ];
    assert_eq!(
        after.get(
            "billpay_supplier_call_duration_seconds_count",
            &requery_latency
        ),
        1.0
    );

    assert_eq!(after.get("billpay_fulfilment_backlog", &[]), 0.0);
    assert_eq!(
        after.get("billpay_fulfilment_oldest_processing_age_seconds", &[]),
        0.0
    );

    // the group commits that carried all this, on this test's backend
    let (backend, queue) = if server.is_postgres() {
        ("postgres", "purchases")
    } else {
        ("sqlite", "writes")
    };
    let engine = [("backend", backend), ("queue", queue)];
    let batches = after.get("billpay_db_batch_size_count", &engine);
    assert!(batches >= 1.0 && batches > before.get("billpay_db_batch_size_count", &engine));
    assert!(after.get("billpay_db_batch_size_sum", &engine) >= batches);
    assert_eq!(
        after.get("billpay_db_commit_duration_seconds_count", &engine),
        batches
    );
    let one_op = [("backend", backend), ("queue", queue), ("le", "1")];
    assert!(after.get("billpay_db_batch_size_bucket", &one_op) <= batches);

    // every series the sample Grafana dashboard plots exists
    let dashboard = include_str!("../../../../docs/grafana-dashboard.json");
    for word in dashboard.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("billpay_") {
            assert!(
                after.0.keys().any(|series| series.starts_with(word)),
                "{word}"
            );
        }
    }
}

/// With the supplier unreachable, purchases wait: the backlog and the age of
/// the oldest grow; `--metrics-listen` serves /metrics apart from the API.
#[tokio::test]
async fn backlog_and_a_separate_metrics_listener() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let apart = format!("127.0.0.1:{port}");
    let server = TestServer::spawn_with_env(
        Options::default(),
        &[
            ("BILLPAY_SANDBOX_UNREACHABLE", "true"),
            ("BILLPAY_METRICS_LISTEN", &apart),
        ],
    )
    .await;
    let public = server
        .http
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(public.status(), 404);
    let metrics = format!("http://{apart}/metrics");

    let c = server.customer("1000");
    purchase(&server, &c.api_key, "08031234567").await;
    purchase(&server, &c.api_key, "08031234568").await;
    let first = Scrape::of(&server, &metrics).await;
    assert_eq!(first.get("billpay_fulfilment_backlog", &[]), 2.0);
    assert!(
        first.has("billpay_fulfilment_oldest_processing_age_seconds"),
        "no age gauge"
    );
    let age = first.get("billpay_fulfilment_oldest_processing_age_seconds", &[]);
    // the age is of the oldest purchase, so it only grows while nothing completes
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let later = Scrape::of(&server, &metrics).await;
    assert_eq!(later.get("billpay_fulfilment_backlog", &[]), 2.0);
    assert!(later.get("billpay_fulfilment_oldest_processing_age_seconds", &[]) >= age + 1.0);
    let unavailable = [
        ("supplier", "sandbox"),
        ("operation", "purchase"),
        ("outcome", "unavailable"),
    ];
    assert!(later.get("billpay_supplier_calls_total", &unavailable) >= 2.0);
    assert_eq!(
        later.get(
            "billpay_purchases_total",
            &[("product", "airtime"), ("status", "successful")]
        ),
        0.0
    );
}

/// Hardening finding 5: any token a client sends as the HTTP method used to
/// become a label, 17 series per method, kept forever. Labels come from a
/// fixed set: an unknown method is `other`, an unknown path `unmatched`.
#[tokio::test]
async fn invented_methods_and_paths_do_not_become_labels() {
    let server = TestServer::spawn().await;
    let url = server.url("/metrics");
    let before = metrics_text(&server, &url).await;
    for i in 0..20 {
        let method = format!("X{}{i}", "Q".repeat(3_000));
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let response = server
            .http
            .request(
                method,
                server.url(&format!("/health/{}{i}", "p".repeat(500))),
            )
            .send()
            .await
            .unwrap();
        assert!(response.status().is_client_error(), "{}", response.status());
    }
    let after = Scrape::of(&server, &url).await;
    assert!(
        !after.has_label_value("QQQ"),
        "a client's method became a label"
    );
    assert!(
        !after.has_label_value("ppp"),
        "a client's path became a label"
    );
    assert!(
        after.get(
            "billpay_http_requests_total",
            &[
                ("method", "other"),
                ("route", "unmatched"),
                ("status", "404")
            ]
        ) + after.get(
            "billpay_http_requests_total",
            &[
                ("method", "other"),
                ("route", "unmatched"),
                ("status", "405")
            ]
        ) >= 20.0,
        "the requests were not counted under method=\"other\""
    );
    let text = metrics_text(&server, &url).await;
    assert!(
        text.len() < before.len() + 20_000,
        "/metrics grew from {} to {} bytes",
        before.len(),
        text.len()
    );
}

/// The scrape's raw text (its size is what an unbounded label would grow).
async fn metrics_text(server: &TestServer, url: &str) -> String {
    server
        .http
        .get(url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}
