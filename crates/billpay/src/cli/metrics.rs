//! Prometheus metrics: the `metrics` facade is recorded into by the API
//! (requests, rate-limit refusals), the workers (purchases, supplier calls,
//! webhook deliveries) and the store (group-commit batches); this module
//! installs the exporter and serves `GET /metrics`, sampling the fulfilment
//! backlog from the database at each scrape.

use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use billpay_store::SharedStore;
use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::time::Instant;

/// Latency buckets (seconds) for every duration histogram.
const SECONDS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
/// Operations per group commit (the engines take at most 256).
const BATCH_SIZES: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
    store: SharedStore,
}

impl Metrics {
    /// Installs the process-wide Prometheus recorder (once, at `serve`).
    pub fn install(store: SharedStore) -> anyhow::Result<Metrics> {
        let handle = PrometheusBuilder::new()
            .set_buckets(SECONDS)?
            .set_buckets_for_metric(Matcher::Full("billpay_db_batch_size".into()), BATCH_SIZES)?
            .install_recorder()?;
        describe();
        Ok(Metrics { handle, store })
    }

    /// `GET /metrics` in the Prometheus text format.
    pub fn router(self) -> axum::Router {
        axum::Router::new()
            .route("/metrics", axum::routing::get(scrape))
            .with_state(self)
    }
}

async fn scrape(State(metrics): State<Metrics>) -> Response {
    match metrics.store.fulfilment_backlog().await {
        Ok(backlog) => {
            metrics::gauge!("billpay_fulfilment_backlog").set(backlog.processing as f64);
            metrics::gauge!("billpay_fulfilment_oldest_processing_age_seconds")
                .set(backlog.oldest_age_secs());
        }
        Err(e) => tracing::warn!(error = %e, "cannot read the fulfilment backlog for /metrics"),
    }
    metrics.handle.run_upkeep();
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics.handle.render(),
    )
        .into_response()
}

/// Middleware: every request counted and timed by method (a known one, else
/// `other`), route template (`/v1/transaction/status`, `/dashboard/keys/{id}`;
/// `unmatched` for a 404 from a fallback) and status: every label comes from
/// a fixed set, so no client can grow the series without bound.
pub async fn track_requests(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let response = next.run(request).await;
    let labels = [
        ("method", method.to_owned()),
        ("route", route),
        ("status", response.status().as_u16().to_string()),
    ];
    metrics::counter!("billpay_http_requests_total", &labels).increment(1);
    metrics::histogram!("billpay_http_request_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
    response
}

/// The standard methods by name; any other (clients may send any token) is
/// `other`.
fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::OPTIONS,
        Method::TRACE,
        Method::CONNECT,
    ];
    KNOWN
        .iter()
        .find(|known| *known == method)
        .map_or("other", Method::as_str)
}

fn describe() {
    describe_counter!(
        "billpay_http_requests_total",
        "HTTP requests by method, route template and status"
    );
    describe_histogram!(
        "billpay_http_request_duration_seconds",
        Unit::Seconds,
        "HTTP request latency by method, route template and status"
    );
    describe_counter!(
        "billpay_notices_total",
        "Notice sends by channel (email, sms), provider and outcome (sent, retrying, failed, refused)"
    );
    describe_counter!(
        "billpay_purchases_total",
        "Purchases reaching a final status (successful, failed, reversed) by product"
    );
    describe_gauge!(
        "billpay_fulfilment_backlog",
        "Purchases still processing (all nodes), sampled at each scrape"
    );
    describe_gauge!(
        "billpay_fulfilment_oldest_processing_age_seconds",
        Unit::Seconds,
        "Age of the oldest processing purchase (0 when none)"
    );
    describe_counter!(
        "billpay_supplier_calls_total",
        "Supplier calls by supplier, operation (purchase, requery) and outcome"
    );
    describe_counter!(
        "billpay_supplier_misconfigured_total",
        "Supplier answers that mean billpay is misconfigured (credentials refused, a base URL that is not the supplier's), by supplier"
    );
    describe_histogram!(
        "billpay_supplier_call_duration_seconds",
        Unit::Seconds,
        "Supplier call latency by supplier, operation and outcome"
    );
    describe_counter!(
        "billpay_webhook_deliveries_total",
        "Webhook delivery attempts by result (delivered, retrying, failed, skipped)"
    );
    describe_counter!(
        "billpay_rate_limited_total",
        "Requests refused with 429 by the per-key rate limit"
    );
    describe_counter!(
        "billpay_funding_credited_total",
        "Bank-transfer payments credited to a wallet, by gateway"
    );
    describe_counter!(
        "billpay_funding_credited_kobo_total",
        "Kobo paid by the bank-transfer payments credited (before the fee), by gateway"
    );
    describe_counter!(
        "billpay_funding_unmatched_total",
        "Payments into no account billpay holds (kept for the operator), by gateway"
    );
    describe_counter!(
        "billpay_funding_rejected_total",
        "Payments the gateway's verify reports not paid or not in NGN, by gateway"
    );
    describe_counter!(
        "billpay_funding_verify_failures_total",
        "Payments the gateway could not verify (left pending, verified again later), by gateway"
    );
    describe_counter!(
        "billpay_funding_reconciler_found_total",
        "Payments credited by reconciliation (their webhook was lost or failed), by gateway"
    );
    describe_histogram!(
        "billpay_db_batch_size",
        "Operations per group commit, by backend and queue"
    );
    describe_histogram!(
        "billpay_db_commit_duration_seconds",
        Unit::Seconds,
        "Time from a group commit's start to its COMMIT, by backend and queue"
    );
}
