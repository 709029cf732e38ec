//! Suppliers: who is configured, the routes per product, each real
//! supplier's float against the low-balance level (asked now, as `billpay
//! supplier balance` does), the last 24 hours' outcomes per supplier, and
//! what `serve`'s start-up check found; each supplier's health (healthy,
//! backing off until when, probing), its last errors and last known costs,
//! as `billpay supplier health` shows them (issue 47).

use super::{Chrome, Done, PageResult, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use billpay_domain::TxStatus;
use billpay_store::SupplierOutcome;
use billpay_supplier::health::{Float, Health, float};
use billpay_webkit::format::{naira, short_time};
use std::time::Duration;

pub struct FloatRow {
    pub supplier: String,
    /// The float, or `—`.
    pub balance: String,
    /// `ok`, `low`, `unreadable` or `none` (it keeps no float).
    pub state: &'static str,
    /// Why it could not be read.
    pub error: String,
}

/// How long a page waits for one supplier's float: a supplier that is down
/// must not hold the overview for its whole request timeout.
const FLOAT_WAIT: Duration = Duration::from_secs(5);

/// Every configured supplier's float, asked now (the sandbox keeps none).
pub async fn floats(state: &ConsoleState) -> Vec<FloatRow> {
    let mut rows = Vec::new();
    for supplier in state.fulfilment.routes().suppliers() {
        let asked = float(supplier.as_ref(), state.low_balance);
        let found = tokio::time::timeout(FLOAT_WAIT, asked)
            .await
            .unwrap_or_else(|_| {
                Some(Float {
                    balance: Err(format!("no answer within {} s", FLOAT_WAIT.as_secs())),
                    low: false,
                })
            });
        let (balance, state, error) = match found {
            None => ("—".into(), "none", String::new()),
            Some(Float {
                balance: Err(e), ..
            }) => ("—".into(), "unreadable", e),
            Some(Float {
                balance: Ok(b),
                low,
            }) => (naira(b), if low { "low" } else { "ok" }, String::new()),
        };
        rows.push(FloatRow {
            supplier: supplier.name().to_owned(),
            balance,
            state,
            error,
        });
    }
    rows
}

pub struct RouteRow {
    pub key: String,
    pub suppliers: String,
}

pub struct OutcomeRow {
    pub supplier: String,
    pub successful: u64,
    pub failed: u64,
    pub processing: u64,
    pub mean_final: String,
}

pub struct HealthRow {
    pub supplier: String,
    /// `healthy`, `backing off` or `probing`.
    pub state: &'static str,
    /// Until when, Lagos time (empty: healthy, or its next purchase probes it).
    pub until: String,
    pub failures: u32,
    pub episodes: u32,
    /// The last errors, newest first: (Lagos time, message).
    pub errors: Vec<(String, String)>,
    /// Its last known costs: (what, cost, for face value, Lagos time).
    pub costs: Vec<(String, String, String, String)>,
}

fn health_row(r: billpay_worker::supplier_health::Report) -> HealthRow {
    use billpay_domain::supplier_health::HealthState;
    let at = |ms: i64| short_time(&billpay_store::clock::rfc3339(ms));
    let until = match r.state {
        HealthState::BackingOff { until_ms } | HealthState::Probing { until_ms } => at(until_ms),
        HealthState::Healthy | HealthState::ProbeDue => String::new(),
    };
    HealthRow {
        state: r.state.name(),
        until,
        failures: r.failures,
        episodes: r.episodes,
        errors: r
            .last_errors
            .iter()
            .map(|e| (at(e.at_ms), e.message.clone()))
            .collect(),
        costs: r
            .last_costs
            .iter()
            .map(|c| {
                let what = [c.product.as_str(), c.provider.as_str(), c.plan.as_str()];
                let what = what
                    .iter()
                    .filter(|w| !w.is_empty())
                    .copied()
                    .collect::<Vec<_>>();
                (
                    what.join(" "),
                    naira(c.cost),
                    naira(c.face_value),
                    at(c.at_ms),
                )
            })
            .collect(),
        supplier: r.supplier,
    }
}

pub struct CheckRow {
    pub supplier: String,
    pub at: String,
    pub state: &'static str,
    pub detail: String,
}

#[derive(Template)]
#[template(path = "suppliers.html")]
struct SuppliersPage {
    chrome: Chrome,
    floats: Vec<FloatRow>,
    low_balance: String,
    routes: Vec<RouteRow>,
    outcomes: Vec<OutcomeRow>,
    checks: Vec<CheckRow>,
    health: Vec<HealthRow>,
    routing: String,
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    let day_ago = time::OffsetDateTime::now_utc() - time::Duration::hours(24);
    let since = billpay_store::clock::rfc3339((day_ago.unix_timestamp_nanos() / 1_000_000) as i64);
    let outcomes = state.store.supplier_outcomes(&since).await?;
    let routes = state.fulfilment.routes().table();
    let names: Vec<String> = (state.fulfilment.routes().suppliers().iter())
        .map(|s| s.name().to_owned())
        .collect();
    let now = billpay_store::clock::now_ms();
    let health = billpay_worker::supplier_health::report(&state.store, &names, now).await?;
    let cheapest: Vec<String> = (state.fulfilment.routes().orderings().into_iter())
        .filter(|(_, o)| *o == billpay_supplier::routing::Ordering::Cheapest)
        .map(|(key, _)| key)
        .collect();
    Ok(render(&SuppliersPage {
        chrome: Chrome::new(&signed_in, "suppliers", &done),
        floats: floats(&state).await,
        low_balance: state
            .low_balance
            .map(naira)
            .unwrap_or_else(|| "not set".into()),
        routes: routes
            .into_iter()
            .map(|(key, names)| RouteRow {
                key,
                suppliers: names.join(" → "),
            })
            .collect(),
        outcomes: outcome_rows(&outcomes),
        checks: state.start_checks.iter().map(check_row).collect(),
        health: health.into_iter().map(health_row).collect(),
        routing: match cheapest.is_empty() {
            true => "every route in its listed order".into(),
            false => format!("cheapest first: {}", cheapest.join(", ")),
        },
    }))
}

/// One row per supplier ("not sent yet" for purchases no supplier took).
fn outcome_rows(outcomes: &[SupplierOutcome]) -> Vec<OutcomeRow> {
    let mut rows: Vec<OutcomeRow> = Vec::new();
    for o in outcomes {
        let supplier = o.supplier.clone().unwrap_or_else(|| "not sent yet".into());
        let at = match rows.iter().position(|r| r.supplier == supplier) {
            Some(at) => at,
            None => {
                rows.push(OutcomeRow {
                    supplier,
                    successful: 0,
                    failed: 0,
                    processing: 0,
                    mean_final: "—".into(),
                });
                rows.len() - 1
            }
        };
        let row = &mut rows[at];
        match o.status {
            TxStatus::Successful => {
                row.successful += o.count;
                if let Some(ms) = o.mean_final_ms {
                    row.mean_final = seconds(ms);
                }
            }
            TxStatus::Failed => row.failed += o.count,
            TxStatus::Processing => row.processing += o.count,
        }
    }
    rows
}

fn seconds(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

fn check_row(check: &billpay_supplier::health::StartCheck) -> CheckRow {
    let (state, detail) = match &check.health {
        None => ("skipped", "--skip-supplier-check: not checked".to_owned()),
        Some(Health::Ready(Some(balance))) => {
            ("ok", format!("answered, float {}", naira(*balance)))
        }
        Some(Health::Ready(None)) => ("ok", "answered".to_owned()),
        Some(Health::Broken(problem)) => ("broken", problem.clone()),
    };
    CheckRow {
        supplier: check.supplier.clone(),
        at: short_time(&check.at),
        state,
        detail,
    }
}
