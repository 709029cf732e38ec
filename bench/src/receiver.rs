//! The webhook receiver of the fan-out run: an axum server on loopback, on
//! a thread and runtime of its own (the harness blocks its own threads on
//! wrk). `POST /hook` answers 200 at once and is counted; `POST /slow` holds
//! every delivery 10 s first, the slowest receiver the spec allows.

use axum::Router;
use axum::routing::post;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Counts {
    fast: AtomicU64,
    slow: AtomicU64,
    /// Microseconds after `start` of the first and the latest fast delivery.
    first_us: AtomicU64,
    last_us: AtomicU64,
}

pub struct Receiver {
    pub base: String,
    counts: Arc<Counts>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let counts = Arc::new(Counts {
            first_us: AtomicU64::new(u64::MAX),
            ..Counts::default()
        });
        let start = Instant::now();
        let (address_tx, address_rx) = std::sync::mpsc::channel();
        let shared = counts.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("receiver runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                address_tx.send(listener.local_addr().unwrap()).unwrap();
                let fast = shared.clone();
                let app = Router::new()
                    .route(
                        "/hook",
                        post(move || {
                            let counts = fast.clone();
                            async move {
                                let now = start.elapsed().as_micros() as u64;
                                counts.first_us.fetch_min(now, Ordering::Relaxed);
                                counts.last_us.fetch_max(now, Ordering::Relaxed);
                                counts.fast.fetch_add(1, Ordering::Relaxed);
                            }
                        }),
                    )
                    .route(
                        "/slow",
                        post(move || {
                            let counts = shared.clone();
                            async move {
                                tokio::time::sleep(Duration::from_secs(10)).await;
                                counts.slow.fetch_add(1, Ordering::Relaxed);
                            }
                        }),
                    );
                axum::serve(listener, app).await.unwrap();
            });
        });
        let address = address_rx.recv().expect("receiver started");
        Receiver {
            base: format!("http://{address}"),
            counts,
        }
    }

    pub fn fast(&self) -> u64 {
        self.counts.fast.load(Ordering::Relaxed)
    }

    pub fn slow(&self) -> u64 {
        self.counts.slow.load(Ordering::Relaxed)
    }

    /// Fast deliveries per second, from the first to the latest.
    pub fn fast_rate(&self) -> f64 {
        let first = self.counts.first_us.load(Ordering::Relaxed);
        let last = self.counts.last_us.load(Ordering::Relaxed);
        if first == u64::MAX || last <= first {
            return 0.0;
        }
        self.fast() as f64 / ((last - first) as f64 / 1e6)
    }

    /// Waits until `expected` fast deliveries arrived; false after `limit`.
    pub fn wait_fast(&self, expected: u64, limit: Duration) -> bool {
        let started = Instant::now();
        while self.fast() < expected {
            if started.elapsed() > limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    }
}
