//! The HTTP server loop: hyper with the limits `axum::serve` does not set, so
//! a slow or idle client cannot hold a connection forever.
//!
//! - headers (of the first request, and of every next one on a keep-alive
//!   connection) must arrive within `header_timeout`, else the connection is
//!   closed: this is both the slow-header and the idle keep-alive timeout;
//! - a request body must keep arriving: `body_timeout` between its chunks
//!   (tower-http's `RequestBodyTimeoutLayer`; the API answers 408);
//! - at most `max_connections` are open; further clients wait in the kernel's
//!   accept queue until one closes.

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_http::timeout::RequestBodyTimeoutLayer;

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(15),
            body_timeout: Duration::from_secs(30),
            max_connections: 4096,
        }
    }
}

/// How long open connections get to finish their request at shutdown.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves `app` on `listener` until `shutdown` resolves, then lets open
/// requests finish (at most `DRAIN`).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let app = app.layer(RequestBodyTimeoutLayer::new(limits.body_timeout));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.header_timeout);
    let open = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = open.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // Errors here are the client's (reset, timeout, bad framing).
            if let Err(error) = connection.await {
                tracing::debug!(error = %error, "connection closed with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {DRAIN:?}: closing them");
    }
    Ok(())
}
