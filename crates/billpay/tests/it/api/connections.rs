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

/// Hardening finding 2: sockets that send nothing, or only part of the
/// HTTP/2 preface, were never timed out (the protocol sniffing had no timer),
/// so a handful of them took every connection slot.
#[tokio::test]
async fn silent_and_half_preface_sockets_cannot_hold_the_slots() {
    use tokio::io::AsyncWriteExt;
    let server = TestServer::spawn_with_env(
        Options::default(),
        &[
            ("BILLPAY_MAX_CONNECTIONS", "8"),
            ("BILLPAY_HEADER_TIMEOUT_SECS", "2"),
        ],
    )
    .await;
    let mut sockets = Vec::new();
    for i in 0..8 {
        let mut socket = connect(&server).await;
        match i % 3 {
            0 => {}
            1 => socket.write_all(b"PRI * HTTP").await.unwrap(),
            _ => socket.write_all(b"G").await.unwrap(),
        }
        sockets.push(socket);
    }
    // Every slot is taken now; the silent ones must be closed within the
    // header timeout (2 s) and a grace second, freeing the slots.
    let health = reqwest::Client::new()
        .get(server.url("/health"))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .expect("/health waited behind silent sockets");
    assert_eq!(health.status(), 200);
    for (i, socket) in sockets.iter_mut().enumerate() {
        assert!(
            read_until_closed(socket, Duration::from_secs(2))
                .await
                .is_some(),
            "silent socket {i} is still open"
        );
    }
}

/// An HTTP/2 connection that answers the server's PINGs but sends no request
/// is idle like an HTTP/1 keep-alive, and closed after the same limit.
#[tokio::test]
async fn an_idle_http2_connection_is_closed() {
    let server =
        TestServer::spawn_with_env(Options::default(), &[("BILLPAY_HEADER_TIMEOUT_SECS", "1")])
            .await;
    let io = hyper_util::rt::TokioIo::new(connect(&server).await);
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), io)
            .await
            .unwrap();
    let connection = tokio::spawn(connection);
    let request = hyper::Request::get(server.url("/health"))
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    drop(response);
    // The client keeps `sender` (it would send more) and answers PINGs.
    let closed = tokio::time::timeout(Duration::from_secs(6), connection).await;
    assert!(closed.is_ok(), "an idle HTTP/2 connection was held open");
    drop(sender);
}

/// A body that trickles in, each byte inside the between-chunks timeout,
/// still meets a total deadline (408, nothing charged).
#[tokio::test]
async fn a_trickling_body_meets_the_total_deadline() {
    use tokio::io::AsyncWriteExt;
    let server = TestServer::spawn_with_env(
        Options::default(),
        &[
            ("BILLPAY_BODY_TIMEOUT_SECS", "2"),
            ("BILLPAY_BODY_DEADLINE_SECS", "2"),
        ],
    )
    .await;
    let c = server.customer("1000");
    let mut stream = connect(&server).await;
    let head = format!(
        "POST /v1/airtime/purchase HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
        c.api_key
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    // A byte every half second for 8 s: never stalled for 2 s.
    let trickle = tokio::spawn(async move {
        for _ in 0..16 {
            if writer.write_all(b" ").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
    let mut answer = Vec::new();
    use tokio::io::AsyncReadExt;
    let read = tokio::time::timeout(Duration::from_secs(5), reader.read_to_end(&mut answer)).await;
    trickle.abort();
    assert!(
        read.is_ok(),
        "a trickling body was still being read after 5 s"
    );
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"error\":\"request_timeout\""), "{answer}");
    assert_eq!(server.balance(&c.api_key).await, 1000.0);
}
