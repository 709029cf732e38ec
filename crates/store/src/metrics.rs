//! What the group-commit engines report to the `metrics` facade (exported by
//! `billpay serve` at `/metrics`; a no-op when nothing is installed).

use std::time::Instant;

/// One group commit: how many operations it carried and how long it took
/// from taking its connection or lock to its COMMIT answering.
pub(crate) fn record_batch(
    backend: &'static str,
    queue: &'static str,
    size: usize,
    started: Instant,
) {
    let labels = [("backend", backend), ("queue", queue)];
    metrics::histogram!("billpay_db_batch_size", &labels).record(size as f64);
    metrics::histogram!("billpay_db_commit_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
}
