//! The HTTP foundation over real HTTP: authentication, rate limits, the
//! catalogue endpoints, the OpenAPI document, and what the server does with
//! connections and requests hyper refuses. (The error envelope of refused
//! requests is checked in-process: `crates/api/tests/validation.rs`.)

mod auth;
mod catalogue;
mod connections;
mod identity;
mod nesting;
mod openapi;
mod rate_limits;

use std::time::{Duration, Instant};

/// Polls `check` until it holds, for at most `secs`; returns the time it took.
pub async fn within<F, Fut>(secs: u64, mut check: F) -> Duration
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
