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
//! - **a request body** must keep arriving, `body_timeout` between chunks,
//!   and be complete within `body_deadline` however it trickles; both answer
//!   408 in the API ([`TimedBody`], wrapped around the body as hyper hands
//!   it over, so it costs no router layer per request);
//! - at most `max_connections` are open; further clients wait in the kernel's
//!   accept queue until one closes.

use axum::BoxError;
use axum::Router;
use axum::body::Bytes;
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
    let body_limits = BodyLimits {
        between_chunks: limits.body_timeout,
        in_all: limits.body_deadline,
    };
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
        let peer = stream.peer_addr().ok();
        let activity = Arc::new(Activity::new());
        let service = Tracked {
            inner: TowerToHyperService::new(app.clone()),
            activity: activity.clone(),
            body_limits,
            peer,
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
    /// Sleeps to the deadline of the moment it last saw, not woken by each
    /// request: requests meanwhile only move that moment later, read again
    /// when the sleep ends.
    async fn quiet_for(&self, limit: Duration) {
        loop {
            match self.quiet_since() {
                None => self.until_quiet().await,
                Some(since) if since.elapsed() >= limit => return,
                Some(since) => tokio::time::sleep_until(since + limit).await,
            }
        }
    }

    /// Resolves once no request is in flight.
    async fn until_quiet(&self) {
        let went_quiet = self.went_quiet.notified();
        tokio::pin!(went_quiet);
        // Registered before the check, so a request ending in between wakes it.
        went_quiet.as_mut().enable();
        if self.quiet_since().is_none() {
            went_quiet.await;
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

/// The app as hyper calls it: counts the connection's requests in flight
/// and bounds each request body in time.
#[derive(Clone)]
struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
    body_limits: BodyLimits,
    /// The connection's peer, given to handlers as `ConnectInfo` (the
    /// shop's sign-up throttle counts per address).
    peer: Option<std::net::SocketAddr>,
}

impl<S> hyper::service::Service<hyper::Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<hyper::Request<TimedBody<Incoming>>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = InFlight<S::Future>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let busy = self.activity.begin();
        let mut request = request.map(|body| TimedBody::new(body, self.body_limits));
        if let Some(peer) = self.peer {
            request
                .extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
        }
        InFlight {
            response: self.inner.call(request),
            busy: Some(busy),
        }
    }
}

pin_project_lite::pin_project! {
    /// A response being made: its request is in flight until it is ready
    /// (or dropped). A named future, not a boxed one: no allocation.
    struct InFlight<F> {
        #[pin]
        response: F,
        busy: Option<Busy>,
    }
}

impl<F: Future> Future for InFlight<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let response = std::task::ready!(this.response.poll(cx));
        this.busy.take();
        Poll::Ready(response)
    }
}

/// How long a request body may take.
#[derive(Debug, Clone, Copy)]
struct BodyLimits {
    between_chunks: Duration,
    in_all: Duration,
}

/// A request body that must keep arriving, each chunk within
/// `between_chunks` of the wait for it starting, and be complete within
/// `in_all` of the request's start, however slowly it trickles: past either,
/// reading fails with `TimedOut` (the API answers 408). The timer exists only
/// while a chunk is awaited: most bodies arrive whole and never need one.
struct TimedBody<B> {
    inner: B,
    between_chunks: Duration,
    deadline: Instant,
    waiting: Option<(Pin<Box<Sleep>>, &'static str)>,
}

impl<B> TimedBody<B> {
    fn new(inner: B, limits: BodyLimits) -> TimedBody<B> {
        TimedBody {
            inner,
            between_chunks: limits.between_chunks,
            deadline: Instant::now() + limits.in_all,
            waiting: None,
        }
    }

    /// The timer for the chunk awaited: the nearer of its own limit and the
    /// body's deadline, with what to say when it fires.
    fn timer(&mut self) -> &mut (Pin<Box<Sleep>>, &'static str) {
        let (deadline, between_chunks) = (self.deadline, self.between_chunks);
        self.waiting.get_or_insert_with(|| {
            let stalled = Instant::now() + between_chunks;
            let (due, why) = if stalled < deadline {
                (
                    stalled,
                    "the request body stalled longer than the body timeout",
                )
            } else {
                (
                    deadline,
                    "the request body took longer than the body deadline",
                )
            };
            (Box::pin(tokio::time::sleep_until(due)), why)
        })
    }
}

impl<B> http_body::Body for TimedBody<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            this.waiting = None;
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let (timer, why) = this.timer();
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                *why,
            )
            .into()))),
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
