//! Connections: malformed and stalled requests, idle keep-alives, the
//! connection cap, and the bare statuses of requests hyper refuses.

use crate::support::*;
use std::time::Duration;

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
