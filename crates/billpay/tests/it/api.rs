//! The foundation over real HTTP: authentication, the error envelope for
//! every failure mode, rate limits, wallet, catalogue endpoints, OpenAPI.


use serde_json::{Value, json};
use std::time::{Duration, Instant};
use crate::support::*;

/// Polls `check` until it holds, for at most `secs`; returns the time it took.
async fn within<F, Fut>(secs: u64, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "condition not met within {secs}s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    start.elapsed()
}

#[tokio::test]
async fn authentication_errors_and_statuses() {
    let server = TestServer::spawn().await;
    let c = server.customer("2500.75");
    let data = server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_ok()
        .clone();
    assert_eq!(data, json!({ "balance": 2500.75, "currency": "NGN" }));

    // no header, wrong scheme, empty bearer
    let r = reply(
        server
            .http
            .get(server.url("/v1/wallet/balance"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.assert_error(401, "missing_api_key");
    let r = reply(
        server
            .http
            .get(server.url("/v1/wallet/balance"))
            .header("Authorization", format!("Basic {}", c.api_key))
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.assert_error(401, "missing_api_key");
    server
        .get("bp_live_0000", "/v1/wallet/balance")
        .await
        .assert_error(401, "invalid_api_key");

    // key suspension, from the CLI while the server runs, applies within 1 s
    // (keys are cached for at most KEY_CACHE_TTL, 0.5 s); the key was just used,
    // so it is in the cache
    server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();
    server.cli(&["key", "suspend", &c.key_id]);
    let took = within(1, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 403
    })
    .await;
    assert!(took < Duration::from_secs(1));
    server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_error(403, "suspended");
    server.cli(&["key", "reactivate", &c.key_id]);
    within(2, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 200
    })
    .await;

    // account suspension stops all of its keys
    server.cli(&["account", "suspend", &c.account_id]);
    within(2, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 403
    })
    .await;
    server
        .get(&c.api_key, "/v1/providers")
        .await
        .assert_error(403, "suspended");
    server.cli(&["account", "reactivate", &c.account_id]);
    within(2, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 200
    })
    .await;

    // revocation is final, and applies within 1 s
    server.cli(&["key", "revoke", &c.key_id]);
    within(1, || async {
        server.get(&c.api_key, "/v1/wallet/balance").await.status == 401
    })
    .await;
    server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_error(401, "invalid_api_key");
    let (ok, err) = server.cli_result(&["key", "reactivate", &c.key_id]);
    assert!(
        !ok && err["error"].as_str().unwrap().contains("revoked"),
        "{err}"
    );
}

#[tokio::test]
async fn every_failure_is_the_json_envelope() {
    let server = TestServer::spawn().await;
    let c = server.customer("1000");
    let key = &c.api_key;
    server
        .get(key, "/v1/no/such/route")
        .await
        .assert_error(404, "not_found");
    server
        .get(key, "/v1/providers/television")
        .await
        .assert_error(404, "not_found");
    // A path segment that is not UTF-8 (documented: 400 bad_request).
    server
        .get(key, "/v1/providers/%FF")
        .await
        .assert_error(400, "bad_request");
    let r = reply(
        server
            .http
            .delete(server.url("/v1/wallet/balance"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.assert_error(405, "method_not_allowed");
    let r = reply(
        server
            .http
            .get(server.url("/v1/airtime/purchase"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.assert_error(405, "method_not_allowed");

    let post = |body: &'static str, content_type: Option<&'static str>| {
        let mut req = server
            .http
            .post(server.url("/v1/airtime/purchase"))
            .bearer_auth(key)
            .body(body);
        if let Some(ct) = content_type {
            req = req.header("Content-Type", ct);
        }
        async move { reply(req.send().await.unwrap()).await }
    };
    post("{not json", Some("application/json"))
        .await
        .assert_error(400, "invalid_json");
    post("{}", None)
        .await
        .assert_error(415, "unsupported_media_type");
    post("{}", Some("text/plain"))
        .await
        .assert_error(415, "unsupported_media_type");
    post("[1,2]", Some("application/json"))
        .await
        .assert_error(422, "validation_error");
    let missing = post(
        r#"{"provider_id":"mtn"}"#,
        Some("application/json; charset=utf-8"),
    )
    .await;
    missing.assert_error(422, "validation_error");
    assert!(
        missing.body["message"]
            .as_str()
            .unwrap()
            .contains("is required"),
        "{}",
        missing.body
    );

    let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(70 * 1024));
    let r = reply(
        server
            .http
            .post(server.url("/v1/airtime/purchase"))
            .bearer_auth(key)
            .header("Content-Type", "application/json")
            .body(big)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.assert_error(413, "payload_too_large");

    let wrong_amount = server
        .post(key, "/v1/airtime/purchase", json!({"provider_id":"mtn","phone":"08031234567","amount":100.123,"reference":"ref-000001"}))
        .await;
    wrong_amount.assert_error(422, "validation_error");
    assert!(
        wrong_amount.body["message"]
            .as_str()
            .unwrap()
            .starts_with("amount"),
        "{}",
        wrong_amount.body
    );
    // none of that touched the wallet
    assert_eq!(server.balance(key).await, 1000.0);

    // outside /v1 too
    let r = reply(
        server
            .http
            .get(server.url("/nothing-here"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.assert_error(404, "not_found");
}

#[tokio::test]
async fn rate_limits_per_key_with_headers_and_overrides() {
    let server = TestServer::spawn_with(Options {
        rate_per_second: 2,
        rate_burst: 5,
        ..Options::default()
    })
    .await;
    let c = server.customer("0");
    let other = server.customer("0");
    let mut statuses = Vec::new();
    let mut last = None;
    for _ in 0..8 {
        let r = server.get(&c.api_key, "/v1/wallet/balance").await;
        statuses.push(r.status);
        for h in ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"] {
            assert!(r.headers.contains_key(h), "missing {h}");
        }
        last = Some(r);
    }
    assert_eq!(&statuses[..5], &[200; 5]);
    assert!(statuses[5..].contains(&429), "{statuses:?}");
    let limited = last.unwrap();
    limited.assert_error(429, "rate_limited");
    let retry_after: u64 = limited.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry_after));
    assert_eq!(limited.headers["ratelimit-limit"], "5");
    assert_eq!(limited.headers["ratelimit-remaining"], "0");
    // another key is not affected
    server
        .get(&other.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();

    // per-key override, applied without a restart
    server.cli(&[
        "key",
        "set-rate-limit",
        &other.key_id,
        "--per-second",
        "1",
        "--burst",
        "1",
    ]);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    server
        .get(&other.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();
    server
        .get(&other.api_key, "/v1/wallet/balance")
        .await
        .assert_error(429, "rate_limited");
    // tokens come back with time
    tokio::time::sleep(Duration::from_millis(1100)).await;
    server
        .get(&c.api_key, "/v1/wallet/balance")
        .await
        .assert_ok();
}

#[tokio::test]
async fn catalogue_endpoints_and_filters() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let key = &c.api_key;
    let providers = server
        .get(key, "/v1/providers")
        .await
        .assert_ok()
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(providers.len(), 32);
    let mtn = providers.iter().find(|p| p["slug"] == "mtn").unwrap();
    assert_eq!(mtn["services"], json!(["airtime", "data", "epin"]));
    assert_eq!(mtn["type"], "telco");
    assert_eq!(mtn["active"], true);
    assert!(uuid_like(mtn["id"].as_str().unwrap()));

    for (service, expected) in [
        ("airtime", 4),
        ("data", 4),
        ("epin", 4),
        ("cable", 4),
        ("electricity", 12),
        ("betting", 8),
    ] {
        let listed = server
            .get(key, &format!("/v1/providers/{service}"))
            .await
            .assert_ok()
            .clone();
        assert_eq!(listed.as_array().unwrap().len(), expected, "{service}");
    }
    let education = server
        .get(key, "/v1/providers/education")
        .await
        .assert_ok()
        .clone();
    assert!(
        education
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["price"].as_f64().unwrap() > 0.0)
    );

    let categories = server
        .get(key, "/v1/data-plans/categories?provider=mtn")
        .await
        .assert_ok()
        .clone();
    assert!(
        categories
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["provider"] == "mtn")
    );
    assert!(
        categories
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "sme")
    );

    // the provider filter takes the UUID too
    let by_slug = server
        .get(key, "/v1/data-plans?provider=mtn&category=sme")
        .await
        .assert_ok()
        .clone();
    let by_id = server
        .get(
            key,
            &format!(
                "/v1/data-plans?provider={}&category=sme",
                mtn["id"].as_str().unwrap()
            ),
        )
        .await
        .assert_ok()
        .clone();
    assert_eq!(by_slug, by_id);
    for plan in by_slug.as_array().unwrap() {
        assert_eq!(plan["provider"], "mtn");
        assert_eq!(plan["category"], "sme");
        assert!(plan["duration"].as_u64().unwrap() > 0);
        assert!(plan["price"].as_f64().unwrap() > 0.0);
        let name = plan["name"].as_str().unwrap().to_lowercase();
        assert!(!name.contains("day") && !name.contains("month"), "{name}");
    }
    let unknown = server
        .get(key, "/v1/data-plans?provider=nope")
        .await
        .assert_ok()
        .clone();
    assert_eq!(unknown, json!([]));

    let cable = server
        .get(key, "/v1/cable-plans?provider=dstv")
        .await
        .assert_ok()
        .clone();
    assert!(
        cable
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "DStv Compact")
    );
    assert!(
        cable
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["provider"] == "dstv" && p["duration"].as_u64().is_some())
    );
    let pins = server
        .get(key, "/v1/recharge-pins/denominations?provider=glo")
        .await
        .assert_ok()
        .clone();
    assert!(
        pins.as_array()
            .unwrap()
            .contains(&json!({"provider": "glo", "denomination": 100.0}))
    );

    // operator disables a provider: listed inactive within a second or two
    server.cli(&["provider", "disable", "glo"]);
    within(3, || async {
        let all = server.get(key, "/v1/providers").await;
        all.data()
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["slug"] == "glo" && p["active"] == false)
    })
    .await;
    server.cli(&["provider", "enable", "glo"]);
}

#[tokio::test]
async fn openapi_lists_every_endpoint() {
    let server = TestServer::spawn().await;
    let doc: Value = server
        .http
        .get(server.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/v1/wallet/balance",
        "/v1/providers",
        "/v1/providers/{service}",
        "/v1/data-plans/categories",
        "/v1/data-plans",
        "/v1/cable-plans",
        "/v1/recharge-pins/denominations",
        "/v1/transaction/status",
        "/v1/epin/batch",
    ] {
        assert!(paths.contains_key(path), "{path} missing");
    }
    for product in [
        "airtime",
        "data",
        "epin",
        "cable",
        "electricity",
        "education",
        "bet",
    ] {
        assert!(paths.contains_key(&format!("/v1/{product}/purchase")));
        assert!(paths.contains_key(&format!("/v1/test/{product}/purchase")));
    }
    for verify in ["cable", "electricity", "bet"] {
        assert!(paths.contains_key(&format!("/v1/{verify}/verify")));
        assert!(paths.contains_key(&format!("/v1/test/{verify}/verify")));
    }
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

/// The kit's OpenAPI check (every reply of these suites passes through it)
/// refuses a body outside the schema and a status the operation lacks.
#[test]
fn the_kit_checks_replies_against_the_openapi_document() {
    use crate::support::openapi::assert_documented;
    let balance =
        json!({"code": 200, "status": "success", "data": {"balance": 10.5, "currency": "NGN"}});
    assert_documented("/v1/wallet/balance", 200, &balance);
    let refused = |path: &'static str, status: u16, body: Value| {
        std::panic::catch_unwind(|| assert_documented(path, status, &body)).is_err()
    };
    let bare_list = json!([{"slug": "mtn"}]);
    assert!(
        refused("/v1/providers", 200, bare_list),
        "a list outside the envelope"
    );
    let text_balance =
        json!({"code": 200, "status": "success", "data": {"balance": "10.5", "currency": "NGN"}});
    assert!(
        refused("/v1/wallet/balance", 200, text_balance),
        "a balance as text"
    );
    let error = json!({"code": 404, "status": "error", "message": "m", "error": "not_found"});
    assert!(
        refused("/v1/wallet/balance", 404, error.clone()),
        "an undocumented status"
    );
    assert_documented("/v1/providers/nosuch", 404, &error);
}

#[tokio::test]
async fn a_malformed_chunked_body_is_a_bad_request_not_too_large() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::spawn().await;
    let c = server.customer("1000");
    let address = server.url("").trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "POST /v1/airtime/purchase HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
         zz\r\n{{}}\r\n0\r\n\r\n",
        c.api_key
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("\"invalid_json\""), "{answer}");
}

/// Reads until the peer closes; `None` when it is still open after `limit`.
async fn read_until_closed(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut answer = Vec::new();
    match tokio::time::timeout(limit, stream.read_to_end(&mut answer)).await {
        Ok(_) => Some(String::from_utf8_lossy(&answer).into_owned()),
        Err(_) => None,
    }
}

async fn connect(server: &TestServer) -> tokio::net::TcpStream {
    let address = server.url("").trim_start_matches("http://").to_owned();
    tokio::net::TcpStream::connect(address).await.unwrap()
}

fn short_timeouts() -> [(&'static str, &'static str); 2] {
    [
        ("BILLPAY_HEADER_TIMEOUT_SECS", "1"),
        ("BILLPAY_BODY_TIMEOUT_SECS", "1"),
    ]
}

#[tokio::test]
async fn half_sent_headers_and_idle_connections_are_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::spawn_with_env(Options::default(), &short_timeouts()).await;

    let mut half = connect(&server).await;
    half.write_all(b"GET /v1/wallet/balance HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let closed = read_until_closed(&mut half, Duration::from_secs(5)).await;
    assert!(closed.is_some(), "a half-sent request was held open");

    let mut idle = connect(&server).await;
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 12];
    idle.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let closed = read_until_closed(&mut idle, Duration::from_secs(5)).await;
    assert!(
        closed.is_some(),
        "an idle keep-alive connection was held open"
    );
}

#[tokio::test]
async fn a_stalled_body_is_a_request_timeout_in_the_envelope() {
    use tokio::io::AsyncWriteExt;
    let server = TestServer::spawn_with_env(Options::default(), &short_timeouts()).await;
    let c = server.customer("1000");
    let balance = server.balance(&c.api_key).await;
    let mut stream = connect(&server).await;
    let request = format!(
        "POST /v1/airtime/purchase HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{{\"amount\":",
        c.api_key
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let answer = read_until_closed(&mut stream, Duration::from_secs(5))
        .await
        .expect("a stalled body was held open");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"error\":\"request_timeout\""), "{answer}");
    assert!(answer.contains("\"code\":408"), "{answer}");
    assert_eq!(server.balance(&c.api_key).await, balance);
}

#[tokio::test]
async fn connections_over_the_cap_wait_until_one_closes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server =
        TestServer::spawn_with_env(Options::default(), &[("BILLPAY_MAX_CONNECTIONS", "2")]).await;
    let first = connect(&server).await;
    let _second = connect(&server).await;
    let mut third = connect(&server).await;
    third
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(700), third.read(&mut byte)).await;
    assert!(
        early.is_err(),
        "a third connection was served over a cap of 2"
    );
    drop(first);
    let answer = read_until_closed(&mut third, Duration::from_secs(5))
        .await
        .expect("the waiting connection was never served");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// What the README documents for the requests hyper refuses before a request
/// exists: a bare status, no body, and the connection closed.
#[tokio::test]
async fn transport_level_refusals_are_a_bare_status_as_documented() {
    use tokio::io::AsyncWriteExt;
    let server = TestServer::spawn().await;
    let long_uri = format!("GET /v1/{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000));
    let many_headers = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\n{}\r\n",
        (0..200)
            .map(|i| format!("x-h{i}: v\r\n"))
            .collect::<String>()
    );
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("a malformed request line", b"GET / HTTP/9\x00\r\n\r\n".to_vec(), "400"),
        (
            "a duplicate Content-Length",
            b"POST /v1/airtime/purchase HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
                .to_vec(),
            "400",
        ),
        ("a URI over hyper's limit", long_uri.into_bytes(), "414"),
        ("too many headers", many_headers.into_bytes(), "431"),
    ];
    for (what, request, status) in cases {
        let mut stream = connect(&server).await;
        stream.write_all(&request).await.unwrap();
        let answer = read_until_closed(&mut stream, Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("{what}: the connection was held open"));
        let (head, body) = answer.split_once("\r\n\r\n").expect("a status line");
        assert!(
            head.starts_with(&format!("HTTP/1.1 {status}")),
            "{what}: {answer}"
        );
        assert!(
            head.to_ascii_lowercase().contains("content-length: 0"),
            "{what}: {head}"
        );
        assert!(body.is_empty(), "{what}: {body}");
    }
    // The server is unharmed.
    let c = server.customer("1000");
    assert_eq!(
        server.get(&c.api_key, "/v1/wallet/balance").await.status,
        200
    );
}
