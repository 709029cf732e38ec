//! A real HTTP webhook receiver on loopback that records what it gets.
//! Paths choose its behaviour: `/ok` answers 200, `/fail` 500, `/slow`
//! sleeps 12 s before answering (past the 10 s limit).

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::routing::post;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Received {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("webhook body is JSON")
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    }
}

#[derive(Clone, Default)]
pub struct Receiver {
    pub base: String,
    log: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let log: Arc<Mutex<Vec<Received>>> = Arc::default();
        let app = Router::new()
            .route("/{*path}", post(record))
            .with_state(log.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { base, log }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }

    /// Those received for a `reference_code`.
    pub fn for_code(&self, code: &str) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.json()["reference_code"] == code)
            .collect()
    }

    /// Waits until `count` webhooks for `code` have arrived.
    pub async fn wait_for(&self, code: &str, count: usize) -> Vec<Received> {
        self.wait_until(code, count, || self.for_code(code)).await
    }

    /// Waits until the first webhook sent to `path` has arrived.
    pub async fn wait_for_path(&self, path: &str) -> Received {
        let on_path = || {
            let received = self.received().into_iter();
            received.filter(|r| r.path == path).collect::<Vec<_>>()
        };
        self.wait_until(path, 1, on_path).await.remove(0)
    }

    async fn wait_until(
        &self,
        what: &str,
        count: usize,
        got: impl Fn() -> Vec<Received>,
    ) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = got();
            if got.len() >= count {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "webhook for {what} not received ({} of {count})",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn record(
    State(log): State<Arc<Mutex<Vec<Received>>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let path = uri.path().to_owned();
    log.lock().unwrap().push(Received {
        path: path.clone(),
        headers,
        body: body.to_vec(),
        at: Instant::now(),
    });
    match path.as_str() {
        "/fail" => StatusCode::INTERNAL_SERVER_ERROR,
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(12)).await;
            StatusCode::OK
        }
        _ => StatusCode::OK,
    }
}
