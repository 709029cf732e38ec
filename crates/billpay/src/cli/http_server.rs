//! The HTTP server loop: hyper with the limits `axum::serve` does not set, so
//! a slow, silent or idle client cannot hold a connection slot forever.
//!
//! Every phase of a connection has a deadline:
//! - **no request in flight** (before the first bytes, inside a partial
//!   HTTP/2 preface or partial headers on either protocol, idle keep-alive
//!   on HTTP/1 and HTTP/2 alike): a complete request must arrive within
//!   `header_timeout` of the connection going quiet, else it is closed
//!   (HTTP/2 gets a GOAWAY first). Our own watchdog does this, because
//!   hyper's auto builder reads the protocol version with no timer and
//!   HTTP/2 has no idle timeout (its PINGs only prove the peer alive);
//! - **a request body** must keep arriving, `body_timeout` between chunks
//!   (tower-http's `RequestBodyTimeoutLayer`), and be complete within
//!   `body_deadline` however it trickles; both answer 408 in the API;
//! - at most `max_connections` are open; further clients wait in the kernel's
//!   accept queue until one closes.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use http_body::Frame;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore, watch};
use tokio::time::{Instant, Sleep};
use tower_http::timeout::RequestBodyTimeoutLayer;

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub body_deadline: Duration,
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(15),
            body_timeout: Duration::from_secs(30),
            body_deadline: Duration::from_secs(60),
            max_connections: 4096,
        }
    }
}

/// How long open connections get to finish their request at shutdown.
const DRAIN: Duration = Duration::from_secs(10);
/// How long an idle connection gets to close politely (HTTP/2's GOAWAY)
/// before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Serves `app` on `listener` until `shutdown` resolves, then lets open
/// requests finish (at most `DRAIN`).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let body_deadline = limits.body_deadline;
    let app = app
        .layer(RequestBodyTimeoutLayer::new(limits.body_timeout))
        .layer(axum::middleware::map_request(move |request: Request| {
            std::future::ready(
                request.map(|body| Body::new(DeadlineBody::new(body, body_deadline))),
            )
        }));
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
    let (stop, stopping) = watch::channel(false);
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
        let activity = Arc::new(Activity::new());
        let service = Tracked {
            inner: TowerToHyperService::new(app.clone()),
            activity: activity.clone(),
        };
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let idle_limit = limits.header_timeout;
        let mut stopping = stopping.clone();
        tokio::spawn(async move {
            tokio::pin!(connection);
            let grace = tokio::select! {
                closed = connection.as_mut() => {
                    // Errors here are the client's (reset, timeout, bad framing).
                    if let Err(error) = closed {
                        tracing::debug!(error = %error, "connection closed with an error");
                    }
                    None
                }
                () = activity.quiet_for(idle_limit) => Some(CLOSE_GRACE),
                _ = stopping.wait_for(|stop| *stop) => Some(DRAIN),
            };
            if let Some(grace) = grace {
                connection.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(grace, connection).await;
            }
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(DRAIN + CLOSE_GRACE, open.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {DRAIN:?}: closing them");
    }
    Ok(())
}

/// Whether a connection has a request in flight, and since when it has not.
struct Activity {
    state: Mutex<ActivityState>,
    went_quiet: Notify,
}

struct ActivityState {
    in_flight: usize,
    quiet_since: Instant,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            state: Mutex::new(ActivityState {
                in_flight: 0,
                quiet_since: Instant::now(),
            }),
            went_quiet: Notify::new(),
        }
    }

    fn begin(self: &Arc<Self>) -> Busy {
        self.state.lock().expect("never poisoned").in_flight += 1;
        Busy(self.clone())
    }

    /// When the connection has no request in flight, the moment it went quiet.
    fn quiet_since(&self) -> Option<Instant> {
        let state = self.state.lock().expect("never poisoned");
        (state.in_flight == 0).then_some(state.quiet_since)
    }

    /// Resolves once the connection has had no request in flight for `limit`.
    async fn quiet_for(&self, limit: Duration) {
        loop {
            let went_quiet = self.went_quiet.notified();
            tokio::pin!(went_quiet);
            went_quiet.as_mut().enable();
            match self.quiet_since() {
                None => went_quiet.await,
                Some(since) if since.elapsed() >= limit => return,
                Some(since) => {
                    // Woken early by a request that began and ended meanwhile:
                    // the loop reads the new moment it went quiet.
                    tokio::select! {
                        () = tokio::time::sleep_until(since + limit) => {}
                        () = went_quiet => {}
                    }
                }
            }
        }
    }
}

/// A request in flight; dropping it (the response is ready) may leave the
/// connection quiet.
struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().expect("never poisoned");
        state.in_flight -= 1;
        if state.in_flight == 0 {
            state.quiet_since = Instant::now();
            drop(state);
            self.0.went_quiet.notify_waiters();
        }
    }
}

/// The app as hyper calls it, counting the connection's requests in flight.
#[derive(Clone)]
struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S> hyper::service::Service<hyper::Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<hyper::Request<Incoming>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<Result<S::Response, S::Error>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let busy = self.activity.begin();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await;
            drop(busy);
            response
        })
    }
}

/// A request body that must be complete within a total deadline, however
/// slowly it trickles: past it, reading fails with `TimedOut` (the API
/// answers 408).
struct DeadlineBody {
    inner: Body,
    deadline: Pin<Box<Sleep>>,
}

impl DeadlineBody {
    fn new(inner: Body, limit: Duration) -> DeadlineBody {
        DeadlineBody {
            inner,
            deadline: Box::pin(tokio::time::sleep(limit)),
        }
    }
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        match this.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the request body took longer than the body deadline",
            ))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
