//! Which supplier fulfils purchases: `BILLPAY_SUPPLIER=sandbox|vtpass`, and
//! VTpass's URL and keys (flags > env > config file, like every setting).
//! Keys are never logged or printed.

use super::config::{FileConfig, Settings};
use super::output::Output;
use billpay_domain::Kobo;
use billpay_supplier::Supplier;
use billpay_supplier::routing::Routes;
use billpay_supplier::sandbox::SandboxSupplier;
use billpay_supplier::vtpass::{LIVE_URL, VtpassConfig, VtpassSupplier};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Default)]
pub struct SupplierArgs {
    /// Who fulfils purchases: `sandbox` (simulated, the default) or `vtpass`.
    #[arg(long, env = "BILLPAY_SUPPLIER")]
    supplier: Option<String>,
    /// VTpass API base URL (default the live https://vtpass.com; sandbox:
    /// https://sandbox.vtpass.com).
    #[arg(long, env = "BILLPAY_VTPASS_BASE_URL")]
    vtpass_base_url: Option<String>,
    /// VTpass API key (Profile → API keys).
    #[arg(long, env = "BILLPAY_VTPASS_API_KEY", hide_env_values = true)]
    vtpass_api_key: Option<String>,
    /// VTpass secret key (sent on POST calls).
    #[arg(long, env = "BILLPAY_VTPASS_SECRET_KEY", hide_env_values = true)]
    vtpass_secret_key: Option<String>,
    /// VTpass public key (sent on GET calls).
    #[arg(long, env = "BILLPAY_VTPASS_PUBLIC_KEY", hide_env_values = true)]
    vtpass_public_key: Option<String>,
    /// Longest a VTpass call may take before its outcome counts as unknown
    /// (requeried later), milliseconds (default 50000).
    #[arg(long, env = "BILLPAY_VTPASS_TIMEOUT_MS")]
    vtpass_timeout_ms: Option<u64>,
    /// Warn (logs; `supplier balance`) when the supplier float is below
    /// this many Naira. Checked at start and every 10 minutes.
    #[arg(long, env = "BILLPAY_SUPPLIER_LOW_BALANCE")]
    supplier_low_balance: Option<f64>,
}

/// Never prints the keys (clap's parsed commands are `Debug`).
impl std::fmt::Debug for SupplierArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SupplierArgs")
            .field("supplier", &self.supplier)
            .field("vtpass_base_url", &self.vtpass_base_url)
            .finish_non_exhaustive()
    }
}

#[derive(clap::Subcommand, Debug)]
pub enum SupplierCommand {
    /// The float left at the supplier (VTpass `/api/balance`).
    Balance(SupplierArgs),
}

pub async fn run(cmd: SupplierCommand, settings: &Settings, out: &Output) -> anyhow::Result<()> {
    let SupplierCommand::Balance(args) = cmd;
    let file = &settings.file;
    let name = args.name(file);
    anyhow::ensure!(
        name == "vtpass",
        "the {name} supplier keeps no balance: set BILLPAY_SUPPLIER=vtpass and its keys"
    );
    let float = Float::new(
        VtpassSupplier::new(args.vtpass(file)?)?,
        args.low_balance(file),
    );
    let balance = float.balance().await?;
    let low = float.is_low(balance);
    let threshold = float.threshold.map(|t| t.to_string());
    out.emit(
        json!({ "supplier": name, "balance": balance, "low_balance_threshold": float.threshold, "low": low }),
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

/// The supplier float and the level under which it is low.
pub struct Float {
    supplier: VtpassSupplier,
    threshold: Option<Kobo>,
}

impl Float {
    pub fn new(supplier: VtpassSupplier, threshold: Option<Kobo>) -> Self {
        Self {
            supplier,
            threshold,
        }
    }

    async fn balance(&self) -> anyhow::Result<Kobo> {
        Ok(self.supplier.balance().await?)
    }

    fn is_low(&self, balance: Kobo) -> bool {
        self.threshold.is_some_and(|t| balance < t)
    }

    /// `billpay serve`: logs a warning whenever the float is low (checked
    /// now and every 10 minutes).
    pub async fn watch(self) {
        let mut every = tokio::time::interval(Duration::from_secs(600));
        loop {
            every.tick().await;
            match self.balance().await {
                Ok(balance) if self.is_low(balance) => tracing::warn!(
                    balance = %balance,
                    threshold = %self.threshold.unwrap_or_default(),
                    "supplier balance is low: fund your VTpass wallet"
                ),
                Ok(balance) => tracing::info!(balance = %balance, "supplier balance"),
                Err(e) => tracing::warn!(error = %e, "cannot read the supplier balance"),
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

    /// The float watcher of `billpay serve`, when VTpass is the supplier
    /// and a low-balance level is set.
    pub fn float_watch(&self, file: &FileConfig) -> anyhow::Result<Option<Float>> {
        let threshold = self.low_balance(file);
        if self.name(file) != "vtpass" || threshold.is_none() {
            return Ok(None);
        }
        let supplier = VtpassSupplier::new(self.vtpass(file)?)?;
        Ok(Some(Float::new(supplier, threshold)))
    }

    pub fn name(&self, file: &FileConfig) -> String {
        self.supplier
            .clone()
            .or(file.supplier.clone())
            .unwrap_or_else(|| "sandbox".into())
    }

    /// VTpass's settings; an error naming what is missing.
    pub fn vtpass(&self, file: &FileConfig) -> anyhow::Result<VtpassConfig> {
        let key = |flag: &Option<String>, from_file: &Option<String>, name: &str| {
            flag.clone()
                .or(from_file.clone())
                .filter(|k| !k.trim().is_empty())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "BILLPAY_SUPPLIER=vtpass needs {name} (or `{}` in the config file): \
                         your keys are under Profile → API keys at vtpass.com",
                        name.trim_start_matches("BILLPAY_").to_lowercase()
                    )
                })
        };
        let timeout = self
            .vtpass_timeout_ms
            .or(file.vtpass_timeout_ms)
            .unwrap_or(50_000);
        Ok(VtpassConfig {
            base_url: self
                .vtpass_base_url
                .clone()
                .or(file.vtpass_base_url.clone())
                .unwrap_or_else(|| LIVE_URL.into()),
            api_key: key(
                &self.vtpass_api_key,
                &file.vtpass_api_key,
                "BILLPAY_VTPASS_API_KEY",
            )?,
            secret_key: key(
                &self.vtpass_secret_key,
                &file.vtpass_secret_key,
                "BILLPAY_VTPASS_SECRET_KEY",
            )?,
            public_key: key(
                &self.vtpass_public_key,
                &file.vtpass_public_key,
                "BILLPAY_VTPASS_PUBLIC_KEY",
            )?,
            connect_timeout: Duration::from_millis(timeout.min(10_000)),
            timeout: Duration::from_millis(timeout),
        })
    }

    /// The suppliers and the routes between them: `BILLPAY_SUPPLIER` by
    /// default, `[routes]` of the config file per product (and provider).
    /// VTpass is built (and its keys required) only when something routes to
    /// it; the sandbox is built by the caller (its latency and outage
    /// settings).
    pub fn build(&self, file: &FileConfig, sandbox: SandboxSupplier) -> anyhow::Result<Routes> {
        let default = self.name(file);
        anyhow::ensure!(
            ["sandbox", "vtpass"].contains(&default.as_str()),
            "BILLPAY_SUPPLIER must be sandbox or vtpass, not {default:?}"
        );
        let routes = file.routes.clone().unwrap_or_default();
        let named = |name: &str| default == name || routes.values().flatten().any(|n| n == name);
        let mut suppliers: Vec<Arc<dyn Supplier>> = vec![Arc::new(sandbox)];
        if named("vtpass") {
            let config = self.vtpass(file)?;
            tracing::info!(base_url = %config.base_url, "VTpass fulfils purchases");
            suppliers.push(Arc::new(VtpassSupplier::new(config)?));
        }
        if named("vtpass") && named("sandbox") {
            tracing::warn!(
                "routes name both vtpass and the sandbox: the sandbox delivers nothing real"
            );
        }
        Ok(Routes::new(suppliers, vec![default], routes)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_show_in_debug_output() {
        let args = SupplierArgs {
            supplier: Some("vtpass".into()),
            vtpass_api_key: Some("api-secret-1".into()),
            vtpass_secret_key: Some("SK_secret-2".into()),
            vtpass_public_key: Some("PK_secret-3".into()),
            ..SupplierArgs::default()
        };
        let config = args.vtpass(&FileConfig::default()).unwrap();
        let printed = format!("{args:?} {config:?}");
        for key in ["api-secret-1", "SK_secret-2", "PK_secret-3"] {
            assert!(!printed.contains(key), "{printed}");
        }
        assert!(printed.contains("vtpass"));
    }
}
