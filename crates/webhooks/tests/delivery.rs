//! Real HTTP deliveries to small axum receivers on 127.0.0.1.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use billpay_webhooks::{
    DeliveryClient, DeliveryConfig, DeliveryOutcome, DeliveryRequest, SIGNATURE_HEADER,
    TIMESTAMP_HEADER, USER_AGENT, sign,
};

const BODY: &[u8] =
    br#"{"event":"airtime.purchase","reference_code":"ref-0001","amount":"100.00"}"#;
const SECRET: &str = "whsec_integration_test";

/// Requests a receiver got: headers and raw body.
#[derive(Clone, Default)]
struct Recorder {
    requests: Arc<Mutex<Vec<(HeaderMap, Bytes)>>>,
}

impl Recorder {
    fn record(&self, headers: HeaderMap, body: Bytes) {
        self.requests.lock().unwrap().push((headers, body));
    }
    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
    fn only(&self) -> (HeaderMap, Bytes) {
        let requests = self.requests.lock().unwrap();
        assert_eq!(requests.len(), 1, "expected exactly one request");
        requests[0].clone()
    }
}

async fn serve(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr
}

/// A receiver answering `status` with a small body, recording each request.
async fn receiver(status: StatusCode) -> (SocketAddr, Recorder) {
    let recorder = Recorder::default();
    let rec = recorder.clone();
    let router = Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: Bytes| async move {
            rec.record(headers, body);
            (status, "receiver says hi")
        }),
    );
    (serve(router).await, recorder)
}

fn private_ok() -> DeliveryClient {
    DeliveryClient::new(DeliveryConfig {
        allow_private: true,
        ..DeliveryConfig::default()
    })
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .try_into()
        .unwrap()
}

async fn deliver(client: &DeliveryClient, url: &str, secret: Option<&str>) -> DeliveryOutcome {
    client
        .deliver(&DeliveryRequest {
            url,
            body: BODY,
            secret,
        })
        .await
}

#[tokio::test]
async fn signed_delivery_to_200_receiver() {
    let (addr, recorder) = receiver(StatusCode::OK).await;
    let url = format!("http://{addr}/hook");

    let outcome = deliver(&private_ok(), &url, Some(SECRET)).await;

    assert!(outcome.delivered, "{outcome:?}");
    assert_eq!(outcome.http_status, Some(200));
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.response_excerpt, "receiver says hi");

    let (headers, body) = recorder.only();
    assert_eq!(&body[..], BODY, "body must arrive byte for byte");
    assert_eq!(headers[header::CONTENT_TYPE], "application/json");
    assert_eq!(headers[header::USER_AGENT], USER_AGENT);
    assert!(USER_AGENT.starts_with("billpay-webhooks/"));

    let timestamp_header = headers[TIMESTAMP_HEADER].to_str().unwrap();
    let timestamp: i64 = timestamp_header.parse().unwrap();
    assert!(
        (timestamp - now()).abs() <= 5,
        "timestamp {timestamp} not near now"
    );
    assert_eq!(outcome.signed_at, Some(timestamp));

    let signature = headers[SIGNATURE_HEADER].to_str().unwrap();
    assert_eq!(signature.len(), 64);
    assert!(
        signature
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    );
    assert_eq!(signature, sign(SECRET, timestamp, &body));
}

#[tokio::test]
async fn unsigned_delivery_has_neither_header() {
    let (addr, recorder) = receiver(StatusCode::NO_CONTENT).await;
    let outcome = deliver(&private_ok(), &format!("http://{addr}/hook"), None).await;

    assert!(outcome.delivered, "{outcome:?}");
    assert_eq!(outcome.http_status, Some(204));
    assert_eq!(outcome.signed_at, None);
    let (headers, body) = recorder.only();
    assert_eq!(&body[..], BODY);
    assert!(!headers.contains_key(TIMESTAMP_HEADER));
    assert!(!headers.contains_key(SIGNATURE_HEADER));
}

#[tokio::test]
async fn http_500_is_not_delivered() {
    let (addr, recorder) = receiver(StatusCode::INTERNAL_SERVER_ERROR).await;
    let outcome = deliver(&private_ok(), &format!("http://{addr}/hook"), Some(SECRET)).await;

    assert!(!outcome.delivered);
    assert_eq!(outcome.http_status, Some(500));
    assert_eq!(outcome.error.as_deref(), Some("HTTP 500"));
    assert_eq!(outcome.response_excerpt, "receiver says hi");
    assert_eq!(recorder.count(), 1);
}

#[tokio::test]
async fn response_excerpt_is_first_512_bytes() {
    let router = Router::new().route("/hook", post(|| async { "é".repeat(1000) }));
    let addr = serve(router).await;
    let outcome = deliver(&private_ok(), &format!("http://{addr}/hook"), None).await;

    assert!(outcome.delivered, "{outcome:?}");
    // 512 bytes = 256 two-byte characters.
    assert_eq!(outcome.response_excerpt, "é".repeat(256));
}

#[tokio::test]
async fn slow_receiver_times_out() {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let router = Router::new().route(
        "/hook",
        post(move || async move {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(5)).await;
            "too late"
        }),
    );
    let addr = serve(router).await;
    let client = DeliveryClient::new(DeliveryConfig {
        timeout: Duration::from_millis(300),
        connect_timeout: Duration::from_millis(300),
        allow_private: true,
    });

    let outcome = deliver(&client, &format!("http://{addr}/hook"), None).await;

    assert!(!outcome.delivered);
    assert_eq!(outcome.http_status, None);
    assert_eq!(outcome.error.as_deref(), Some("timed out after 300ms"));
    assert!(
        (250..2_000).contains(&outcome.latency_ms),
        "latency {} ms",
        outcome.latency_ms
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn closed_port_is_connection_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);

    let outcome = deliver(&private_ok(), &format!("http://{addr}/hook"), Some(SECRET)).await;

    assert!(!outcome.delivered);
    assert_eq!(outcome.http_status, None);
    assert_eq!(outcome.error.as_deref(), Some("connection refused"));
    assert!(outcome.signed_at.is_some());
}

#[tokio::test]
async fn redirect_is_not_followed() {
    let target_hits = Arc::new(AtomicUsize::new(0));
    let counter = target_hits.clone();
    let router = Router::new()
        .route(
            "/hook",
            post(|| async { (StatusCode::FOUND, [(header::LOCATION, "/target")]).into_response() }),
        )
        .route(
            "/target",
            post(move || async move {
                counter.fetch_add(1, Ordering::SeqCst);
                "should not be reached"
            })
            .get({
                let counter = target_hits.clone();
                move || async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    "should not be reached"
                }
            }),
        );
    let addr = serve(router).await;

    let outcome = deliver(&private_ok(), &format!("http://{addr}/hook"), None).await;

    assert!(!outcome.delivered);
    assert_eq!(outcome.http_status, Some(302));
    assert_eq!(
        outcome.error.as_deref(),
        Some("redirects are not followed (HTTP 302)")
    );
    assert_eq!(
        target_hits.load(Ordering::SeqCst),
        0,
        "redirect target was hit"
    );
}

#[tokio::test]
async fn loopback_literal_refused_when_private_not_allowed() {
    let (addr, recorder) = receiver(StatusCode::OK).await;
    let client = DeliveryClient::new(DeliveryConfig::default());

    let outcome = deliver(&client, &format!("http://{addr}/hook"), Some(SECRET)).await;

    assert!(!outcome.delivered);
    assert_eq!(outcome.http_status, None);
    assert_eq!(
        outcome.error.as_deref(),
        Some("refused: 127.0.0.1 is a loopback address")
    );
    assert_eq!(outcome.signed_at, None);
    assert_eq!(recorder.count(), 0, "receiver must not be hit");
}

#[tokio::test]
async fn obfuscated_and_mapped_literals_refused() {
    let (addr, recorder) = receiver(StatusCode::OK).await;
    let port = addr.port();
    let client = DeliveryClient::new(DeliveryConfig::default());

    for (url, expected) in [
        (
            format!("http://2130706433:{port}/hook"),
            "refused: 127.0.0.1 is a loopback address",
        ),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/hook"),
            "refused: ::ffff:127.0.0.1 is a loopback address",
        ),
        (
            format!("http://[::1]:{port}/hook"),
            "refused: ::1 is a loopback address",
        ),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "refused: 169.254.169.254 is a cloud metadata address",
        ),
        (
            "http://0.0.0.0/".to_owned(),
            "refused: 0.0.0.0 is an unspecified address",
        ),
    ] {
        let outcome = deliver(&client, &url, None).await;
        assert!(!outcome.delivered, "{url}");
        assert_eq!(outcome.error.as_deref(), Some(expected), "{url}");
    }
    assert_eq!(recorder.count(), 0, "receiver must not be hit");
}

#[tokio::test]
async fn localhost_name_refused_after_resolution() {
    let (addr, recorder) = receiver(StatusCode::OK).await;
    let client = DeliveryClient::new(DeliveryConfig::default());

    let outcome = deliver(
        &client,
        &format!("http://localhost:{}/hook", addr.port()),
        Some(SECRET),
    )
    .await;

    assert!(!outcome.delivered);
    assert_eq!(outcome.http_status, None);
    let error = outcome.error.unwrap();
    assert!(
        error.starts_with("refused: ") && error.ends_with(" is a loopback address"),
        "{error}"
    );
    assert_eq!(recorder.count(), 0, "receiver must not be hit");
}

#[tokio::test]
async fn localhost_name_allowed_when_private_allowed() {
    let (addr, recorder) = receiver(StatusCode::OK).await;
    let outcome = deliver(
        &private_ok(),
        &format!("http://localhost:{}/hook", addr.port()),
        None,
    )
    .await;
    assert!(outcome.delivered, "{outcome:?}");
    assert_eq!(recorder.count(), 1);
}

#[tokio::test]
async fn invalid_url_is_a_failed_outcome() {
    let client = DeliveryClient::new(DeliveryConfig::default());
    let outcome = deliver(&client, "ftp://example.com/hook", Some(SECRET)).await;
    assert!(!outcome.delivered);
    assert_eq!(
        outcome.error.as_deref(),
        Some("webhook URL must use http or https")
    );
    assert_eq!(outcome.signed_at, None);
}

#[tokio::test]
async fn unresolvable_host_is_a_dns_failure() {
    // `.invalid` never resolves (RFC 6761). A sandbox whose resolver does
    // not answer at all gives the timeout instead; both are failures.
    let client = DeliveryClient::new(DeliveryConfig {
        timeout: Duration::from_secs(3),
        ..DeliveryConfig::default()
    });
    let outcome = deliver(&client, "http://billpay-test.invalid/hook", None).await;
    assert!(!outcome.delivered);
    assert_eq!(outcome.http_status, None);
    let error = outcome.error.unwrap();
    assert!(
        error.starts_with("DNS lookup failed for billpay-test.invalid")
            || error == "timed out after 3s",
        "{error}"
    );
}
