//! Which suppliers fulfil purchases: `BILLPAY_SUPPLIER` (the sandbox by
//! default, or a real supplier of the registry, `adapters`) and the config
//! file's `[routes]`; `billpay supplier balance`, and the float watcher of
//! `billpay serve`, for any supplier that keeps a balance.

use super::adapters::{self, AdapterArgs, SANDBOX};
use super::config::{FileConfig, Settings};
use super::output::Output;
use billpay_domain::Kobo;
use billpay_supplier::Supplier;
use billpay_supplier::routing::Routes;
use billpay_supplier::sandbox::SandboxSupplier;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug, Default)]
pub struct SupplierArgs {
    #[arg(long, env = "BILLPAY_SUPPLIER", help = supplier_help())]
    supplier: Option<String>,
    /// Warn (logs; `supplier balance`) when a supplier float is below
    /// this many Naira. Checked at start and every 10 minutes.
    #[arg(long, env = "BILLPAY_SUPPLIER_LOW_BALANCE")]
    supplier_low_balance: Option<f64>,
    #[command(flatten)]
    adapters: AdapterArgs,
}

/// `--supplier`'s help, naming the registry's suppliers.
fn supplier_help() -> String {
    format!(
        "Who fulfils purchases: `sandbox` (simulated, the default) or a real supplier ({})",
        adapters::real_names()
    )
}

#[derive(clap::Subcommand, Debug)]
pub enum SupplierCommand {
    /// The float left at the supplier (`--supplier`, else BILLPAY_SUPPLIER).
    Balance(SupplierArgs),
}

pub async fn run(cmd: SupplierCommand, settings: &Settings, out: &Output) -> anyhow::Result<()> {
    let SupplierCommand::Balance(args) = cmd;
    let file = &settings.file;
    let name = args.name(file);
    let no_balance = || {
        anyhow::anyhow!(
            "the {name} supplier keeps no balance: set BILLPAY_SUPPLIER={} and its keys",
            adapters::real_names()
        )
    };
    let supplier = args.real(&name, file)?.ok_or_else(no_balance)?;
    let balance = supplier.balance().await.ok_or_else(no_balance)??;
    let threshold = args.low_balance(file);
    let low = is_low(balance, threshold);
    out.emit(
        json!({ "supplier": name, "balance": balance, "low_balance_threshold": threshold, "low": low }),
        format!(
            "{name} balance: {balance} Naira{}",
            match (low, threshold) {
                (true, Some(t)) => format!(" — LOW (under {t})"),
                _ => String::new(),
            }
        ),
    );
    Ok(())
}

fn is_low(balance: Kobo, threshold: Option<Kobo>) -> bool {
    threshold.is_some_and(|t| balance < t)
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
        match supplier.balance().await {
            None => {}
            Some(Ok(balance)) if is_low(balance, Some(self.threshold)) => tracing::warn!(
                supplier = name,
                balance = %balance,
                threshold = %self.threshold,
                "supplier balance is low: fund your account at {name}"
            ),
            Some(Ok(balance)) => {
                tracing::info!(supplier = name, balance = %balance, "supplier balance")
            }
            Some(Err(e)) => {
                tracing::warn!(supplier = name, error = %e, "cannot read the supplier balance")
            }
        }
    }
}

impl SupplierArgs {
    pub fn low_balance(&self, file: &FileConfig) -> Option<Kobo> {
        self.supplier_low_balance
            .or(file.supplier_low_balance)
            .map(|naira| Kobo((naira * 100.0).round() as i64))
    }

    /// The float watcher of `billpay serve`, when a low-balance level is set.
    pub fn float_watch(&self, file: &FileConfig, routes: &Routes) -> Option<Float> {
        Some(Float {
            suppliers: routes.suppliers().to_vec(),
            threshold: self.low_balance(file)?,
        })
    }

    pub fn name(&self, file: &FileConfig) -> String {
        self.supplier
            .clone()
            .or(file.supplier.clone())
            .unwrap_or_else(|| SANDBOX.into())
    }

    /// The real supplier `name`, built from its settings; `None` for the
    /// sandbox; an error for a name the registry does not know.
    pub fn real(&self, name: &str, file: &FileConfig) -> anyhow::Result<Option<Arc<dyn Supplier>>> {
        if name == SANDBOX {
            return Ok(None);
        }
        let registration = adapters::registration(name).ok_or_else(|| {
            anyhow::anyhow!(
                "no supplier {name:?}: the suppliers are {}",
                adapters::names()
            )
        })?;
        Ok(Some((registration.build)(&self.adapters, file)?))
    }

    /// The suppliers and the routes between them: `BILLPAY_SUPPLIER` by
    /// default, `[routes]` of the config file per product (and provider).
    /// A real supplier is built (and its keys required) only when something
    /// routes to it; the sandbox is built by the caller (its latency and
    /// outage settings).
    pub fn build(&self, file: &FileConfig, sandbox: SandboxSupplier) -> anyhow::Result<Routes> {
        let default = self.name(file);
        let known = |name: &str| name == SANDBOX || adapters::registration(name).is_some();
        anyhow::ensure!(
            known(&default),
            "BILLPAY_SUPPLIER must be one of {}, not {default:?}",
            adapters::names()
        );
        let routes = file.routes.clone().unwrap_or_default();
        for (key, names) in &routes {
            if let Some(unknown) = names.iter().find(|n| !known(n)) {
                anyhow::bail!(
                    "routes: {key} names {unknown:?}, not a supplier ({})",
                    adapters::names()
                );
            }
        }
        let named = |name: &str| default == name || routes.values().flatten().any(|n| n == name);
        let mut suppliers: Vec<Arc<dyn Supplier>> = vec![Arc::new(sandbox)];
        for registration in adapters::REGISTRY.iter().filter(|r| named(r.name)) {
            suppliers.push((registration.build)(&self.adapters, file)?);
        }
        if suppliers.len() > 1 && named(SANDBOX) {
            tracing::warn!(
                "routes name both a real supplier and the sandbox: the sandbox delivers nothing real"
            );
        }
        Ok(Routes::new(suppliers, vec![default], routes)?)
    }
}
