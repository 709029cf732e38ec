//! Which suppliers fulfil purchases: `BILLPAY_SUPPLIER` (the sandbox by
//! default, or a real supplier of the registry,
//! `billpay_supplier::registry`) and the config
//! file's `[routes]`, built from the resolved settings; `billpay supplier
//! balance`, the start-up check and the float watcher of `billpay serve`,
//! for every configured real supplier.

use super::config::Settings;
use super::flags::SupplierFlags;
use super::output::Output;
use billpay_domain::supplier_health::HealthState;
use billpay_domain::{Kobo, naira};
use billpay_store::SharedStore;
use billpay_store::clock::{now_ms, rfc3339};
use billpay_supplier::Supplier;
use billpay_supplier::health::{Health, StartCheck, check, float};
use billpay_supplier::registry::{self, SANDBOX};
use billpay_supplier::routing::Routes;
use billpay_supplier::sandbox::SandboxSupplier;
use billpay_webkit::format::lagos_time;
use billpay_worker::supplier_health::report;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// The supplier settings as flags (each also `BILLPAY_<FLAG>` and a key of
/// the config file; the resolved values are in [`Settings`]).
#[derive(clap::Args, Debug, Default, serde::Serialize)]
pub struct SupplierArgs {
    #[arg(long, help = supplier_help())]
    supplier: Option<String>,
    /// Warn (logs; `supplier balance`) when a supplier float is below
    /// this many Naira. Checked at start and every 10 minutes.
    #[arg(long)]
    supplier_low_balance: Option<f64>,
    #[command(flatten)]
    #[serde(flatten)]
    suppliers: SupplierFlags,
}

/// `--supplier`'s help, naming the registry's suppliers.
fn supplier_help() -> String {
    format!(
        "Who fulfils purchases: `sandbox` (simulated, the default) or a real supplier ({})",
        registry::real_names()
    )
}

#[derive(clap::Subcommand, Debug)]
pub enum SupplierCommand {
    /// The float left at every configured real supplier (and at
    /// `--supplier`, else BILLPAY_SUPPLIER), each with its low-balance warning.
    Balance(SupplierArgs),
    /// Each supplier's health, shared by every node: healthy, backing off
    /// (until when, Lagos time) or probing; its failures in a row, last
    /// errors and last known costs.
    Health,
}

pub async fn run(
    cmd: SupplierCommand,
    settings: &Settings,
    store: &SharedStore,
    out: &Output,
) -> anyhow::Result<()> {
    if let SupplierCommand::Health = cmd {
        return health(settings, store, out).await;
    }
    // An unknown name is refused first (it names the registry).
    real(settings, &settings.supplier)?;
    let suppliers = configured(settings)?;
    anyhow::ensure!(
        !suppliers.is_empty(),
        "no real supplier is configured, and the {} supplier keeps no balance: set \
         BILLPAY_SUPPLIER={} and its keys",
        settings.supplier,
        registry::real_names()
    );
    let threshold = low_balance(settings);
    let mut listed = Vec::new();
    let mut lines = Vec::new();
    for supplier in suppliers {
        let name = supplier.name();
        let Some(found) = float(supplier.as_ref(), threshold).await else {
            continue;
        };
        match found.balance {
            Ok(balance) => {
                let low = found.low;
                listed.push(json!({ "supplier": name, "balance": balance, "low_balance_threshold": threshold, "low": low }));
                let warning = match (low, threshold) {
                    (true, Some(t)) => format!(" — LOW (under {})", naira(t)),
                    _ => String::new(),
                };
                lines.push(format!("{name} balance: {}{warning}", naira(balance)));
            }
            Err(e) => {
                listed.push(json!({ "supplier": name, "error": e }));
                lines.push(format!("{name}: cannot read the balance: {e}"));
            }
        }
    }
    out.emit(json!({ "suppliers": listed }), lines.join("\n"));
    Ok(())
}

/// `billpay supplier health`: every configured supplier and every one the
/// store has a record of.
async fn health(settings: &Settings, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    // Those configured (a supplier that cannot be built has no health to show).
    let names: Vec<String> = configured(settings)
        .map(|built| built.iter().map(|s| s.name().to_owned()).collect())
        .unwrap_or_default();
    let reports = report(store, &names, now_ms()).await?;
    let mut listed = Vec::new();
    let mut lines = Vec::new();
    for r in &reports {
        let until = match r.state {
            HealthState::BackingOff { until_ms } | HealthState::Probing { until_ms } => {
                Some(rfc3339(until_ms))
            }
            HealthState::Healthy | HealthState::ProbeDue => None,
        };
        let errors: Vec<_> = r
            .last_errors
            .iter()
            .map(|e| json!({ "at": rfc3339(e.at_ms), "message": e.message }))
            .collect();
        let costs: Vec<_> = r
            .last_costs
            .iter()
            .map(|c| {
                json!({
                    "product": c.product,
                    "provider": c.provider,
                    "plan": (!c.plan.is_empty()).then_some(&c.plan),
                    "cost": c.cost,
                    "face_value": c.face_value,
                    "at": rfc3339(c.at_ms),
                })
            })
            .collect();
        listed.push(json!({
            "supplier": r.supplier,
            "state": r.state.name(),
            "until": until,
            "failures_in_a_row": r.failures,
            "times_unhealthy": r.episodes,
            "last_errors": errors,
            "last_costs": costs,
        }));
        let state = match (r.state, &until) {
            (HealthState::BackingOff { .. }, Some(at)) => {
                format!("backing off until {}", lagos_time(at))
            }
            (HealthState::Probing { .. }, Some(at)) => {
                format!("probing (one purchase tests it, until {})", lagos_time(at))
            }
            (HealthState::ProbeDue, _) => "probing (its next purchase tests it)".to_owned(),
            _ => "healthy".to_owned(),
        };
        lines.push(format!(
            "{}: {state}; {} failure(s) in a row; unhealthy {} time(s)",
            r.supplier, r.failures, r.episodes
        ));
        for e in &r.last_errors {
            lines.push(format!(
                "  error at {}: {}",
                lagos_time(&rfc3339(e.at_ms)),
                e.message
            ));
        }
        for c in &r.last_costs {
            let plan = if c.plan.is_empty() {
                String::new()
            } else {
                format!(" {}", c.plan)
            };
            lines.push(format!(
                "  cost {} {}{plan}: {} (for {}, {})",
                c.product,
                c.provider,
                naira(c.cost),
                naira(c.face_value),
                lagos_time(&rfc3339(c.at_ms))
            ));
        }
    }
    if lines.is_empty() {
        lines.push("No supplier has a health record yet.".into());
    }
    out.emit(json!({ "suppliers": listed }), lines.join("\n"));
    Ok(())
}

/// Every real supplier that is configured (its credentials set) or named
/// (default or a route), built from its settings.
pub fn configured(settings: &Settings) -> anyhow::Result<Vec<Arc<dyn Supplier>>> {
    Ok(settings.wanted().build(&settings.suppliers)?)
}

/// `billpay serve`'s start-up check: each real supplier answers a harmless
/// call (its balance) like itself, else the start stops with what to fix.
/// What it found is kept for the console.
pub async fn check_at_start(
    settings: &Settings,
    routes: &Routes,
    skip: bool,
) -> anyhow::Result<Vec<StartCheck>> {
    let mut problems = Vec::new();
    let mut found = Vec::new();
    for supplier in routes.suppliers() {
        let name = supplier.name();
        let Some((base_url, prefix)) = settings.suppliers.described(name) else {
            continue; // the sandbox
        };
        let at = billpay_store::clock::now_rfc3339();
        if skip {
            tracing::warn!(
                supplier = name,
                "--skip-supplier-check: not checked at start; a wrong key or URL shows only as purchases that stay processing"
            );
            found.push(StartCheck {
                supplier: name.to_owned(),
                at,
                health: None,
            });
            continue;
        }
        let health = check(supplier.as_ref(), &base_url, &prefix).await;
        match &health {
            Health::Ready(balance) => {
                tracing::info!(supplier = name, base_url, balance = ?balance.map(|b| b.to_string()), "supplier answered the start-up check")
            }
            Health::Broken(problem) => problems.push(problem.clone()),
        }
        found.push(StartCheck {
            supplier: name.to_owned(),
            at,
            health: Some(health),
        });
    }
    match problems.as_slice() {
        [] => Ok(found),
        _ => anyhow::bail!(
            "the start-up supplier check failed (fix it, or start with --skip-supplier-check):\n- {}",
            problems.join("\n- ")
        ),
    }
}

/// `billpay serve`'s watch over the floats of the suppliers that keep one.
pub struct Float {
    suppliers: Vec<Arc<dyn Supplier>>,
    threshold: Kobo,
}

impl Float {
    /// Logs a warning whenever a float is low (checked now and every 10
    /// minutes); suppliers without a balance are left out.
    pub async fn watch(self) {
        let mut every = tokio::time::interval(Duration::from_secs(600));
        loop {
            every.tick().await;
            for supplier in &self.suppliers {
                self.check(supplier.as_ref()).await;
            }
        }
    }

    async fn check(&self, supplier: &dyn Supplier) {
        let name = supplier.name();
        let Some(found) = float(supplier, Some(self.threshold)).await else {
            return;
        };
        match found.balance {
            Ok(balance) if found.low => tracing::warn!(
                supplier = name,
                balance = %balance,
                threshold = %self.threshold,
                "supplier balance is low: fund your account at {name}"
            ),
            Ok(balance) => {
                tracing::info!(supplier = name, balance = %balance, "supplier balance")
            }
            Err(e) => {
                tracing::warn!(supplier = name, error = %e, "cannot read the supplier balance")
            }
        }
    }
}

/// The low-balance level of the floats (`--supplier-low-balance`), if set.
pub fn low_balance(settings: &Settings) -> Option<Kobo> {
    settings
        .supplier_low_balance
        .map(|naira| Kobo((naira * 100.0).round() as i64))
}

/// The float watcher of `billpay serve`, when a low-balance level is set.
pub fn float_watch(settings: &Settings, routes: &Routes) -> Option<Float> {
    Some(Float {
        suppliers: routes.suppliers().to_vec(),
        threshold: low_balance(settings)?,
    })
}

/// The real supplier `name`, built from its settings; `None` for the
/// sandbox; an error for a name the registry does not know.
pub fn real(settings: &Settings, name: &str) -> anyhow::Result<Option<Arc<dyn Supplier>>> {
    if name == SANDBOX {
        return Ok(None);
    }
    let built = settings.suppliers.build(name).ok_or_else(|| {
        anyhow::anyhow!(
            "no supplier {name:?}: the suppliers are {}",
            settings.suppliers.names()
        )
    })?;
    Ok(Some(built?))
}

/// The suppliers and the routes between them: `BILLPAY_SUPPLIER` by default,
/// `[routes]` of the config file per product (and provider). A real supplier
/// is built when its credentials are set or something routes to it (then
/// they are required); the sandbox is built by the caller (its `[sandbox]`
/// settings). The settings are validated first (`Settings::validate`).
pub fn build(settings: &Settings, sandbox: SandboxSupplier) -> anyhow::Result<Routes> {
    let mut suppliers: Vec<Arc<dyn Supplier>> = vec![Arc::new(sandbox)];
    suppliers.extend(configured(settings)?);
    if suppliers.len() > 1 && settings.wanted().names(SANDBOX) {
        tracing::warn!(
            "routes name both a real supplier and the sandbox: the sandbox delivers nothing real"
        );
    }
    let routes = Routes::new(
        suppliers,
        vec![settings.supplier.clone()],
        settings.routes.clone(),
    )?;
    Ok(routes.with_ordering(&settings.routing.order)?)
}
