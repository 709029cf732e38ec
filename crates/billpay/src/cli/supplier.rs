//! Which supplier fulfils purchases: `BILLPAY_SUPPLIER=sandbox|vtpass` and
//! `[routes]`, built from the resolved settings (VTpass's URL and keys are its
//! `[vtpass]` section). Keys are never logged or printed.

use super::config::Settings;
use super::output::Output;
use billpay_domain::Kobo;
use billpay_supplier::Supplier;
use billpay_supplier::routing::Routes;
use billpay_supplier::sandbox::SandboxSupplier;
use billpay_supplier::vtpass::VtpassSupplier;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// The supplier settings as flags (each also `BILLPAY_<FLAG>` and a key of
/// the config file; the resolved values are in [`Settings`]).
#[derive(clap::Args, Default, serde::Serialize)]
pub struct SupplierArgs {
    /// Who fulfils purchases: `sandbox` (simulated, the default) or `vtpass`.
    #[arg(long)]
    supplier: Option<String>,
    /// VTpass API base URL (default the live https://vtpass.com; sandbox:
    /// https://sandbox.vtpass.com).
    #[arg(long)]
    vtpass_base_url: Option<String>,
    /// VTpass API key (Profile → API keys).
    #[arg(long)]
    vtpass_api_key: Option<String>,
    /// VTpass secret key (sent on POST calls).
    #[arg(long)]
    vtpass_secret_key: Option<String>,
    /// VTpass public key (sent on GET calls).
    #[arg(long)]
    vtpass_public_key: Option<String>,
    /// Longest a VTpass call may take before its outcome counts as unknown
    /// (requeried later), milliseconds (default 50000).
    #[arg(long)]
    vtpass_timeout_ms: Option<u64>,
    /// Warn (logs; `supplier balance`) when the supplier float is below
    /// this many Naira. Checked at start and every 10 minutes.
    #[arg(long)]
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
    let SupplierCommand::Balance(_) = cmd;
    let name = &settings.supplier;
    anyhow::ensure!(
        name == "vtpass",
        "the {name} supplier keeps no balance: set BILLPAY_SUPPLIER=vtpass and its keys"
    );
    let float = Float::new(vtpass(settings)?, low_balance(settings));
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

pub fn low_balance(settings: &Settings) -> Option<Kobo> {
    settings
        .supplier_low_balance
        .map(|naira| Kobo((naira * 100.0).round() as i64))
}

/// The float watcher of `billpay serve`, when VTpass is the supplier and a
/// low-balance level is set.
pub fn float_watch(settings: &Settings) -> anyhow::Result<Option<Float>> {
    let threshold = low_balance(settings);
    if settings.supplier != "vtpass" || threshold.is_none() {
        return Ok(None);
    }
    Ok(Some(Float::new(vtpass(settings)?, threshold)))
}

/// The VTpass client; an error naming what is missing.
pub fn vtpass(settings: &Settings) -> anyhow::Result<VtpassSupplier> {
    if let Some(missing) = vtpass_missing_keys(settings) {
        anyhow::bail!(missing);
    }
    Ok(VtpassSupplier::from_settings(&settings.vtpass)?)
}

/// What would keep the suppliers from being built (for `Settings::validate`):
/// an unknown supplier, or VTpass used or half-configured without all its keys.
pub fn problems(settings: &Settings) -> Vec<String> {
    let vtpass_wanted = named(settings, "vtpass") || settings.vtpass.any_key_set();
    let unknown = unknown_supplier(&settings.supplier);
    let missing = vtpass_wanted
        .then(|| vtpass_missing_keys(settings))
        .flatten();
    unknown.into_iter().chain(missing).collect()
}

fn unknown_supplier(name: &str) -> Option<String> {
    (!["sandbox", "vtpass"].contains(&name))
        .then(|| format!("BILLPAY_SUPPLIER must be sandbox or vtpass, not {name:?}"))
}

/// Whether `name` is the default supplier or on a route.
fn named(settings: &Settings, name: &str) -> bool {
    settings.supplier == name || settings.routes.values().flatten().any(|n| n == name)
}

fn vtpass_missing_keys(settings: &Settings) -> Option<String> {
    let missing = settings.vtpass.missing_keys();
    let variables = missing
        .iter()
        .map(|key| format!("BILLPAY_VTPASS_{}", key.to_uppercase()))
        .collect::<Vec<_>>();
    (!missing.is_empty()).then(|| {
        format!(
            "VTpass needs {} (or `{}` in the config file's [vtpass] section): your keys are \
             under Profile → API keys at vtpass.com",
            variables.join(", "),
            missing.join("`, `")
        )
    })
}

/// The suppliers and the routes between them: `BILLPAY_SUPPLIER` by default,
/// `[routes]` of the config file per product (and provider). VTpass is built
/// (and its keys required) only when something routes to it; the sandbox is
/// built by the caller (its latency and outage settings).
pub fn build(settings: &Settings, sandbox: SandboxSupplier) -> anyhow::Result<Routes> {
    let default = settings.supplier.clone();
    if let Some(unknown) = unknown_supplier(&default) {
        anyhow::bail!(unknown);
    }
    let mut suppliers: Vec<Arc<dyn Supplier>> = vec![Arc::new(sandbox)];
    if named(settings, "vtpass") {
        tracing::info!(base_url = %settings.vtpass.base_url, "VTpass fulfils purchases");
        suppliers.push(Arc::new(vtpass(settings)?));
    }
    if named(settings, "vtpass") && named(settings, "sandbox") {
        tracing::warn!(
            "routes name both vtpass and the sandbox: the sandbox delivers nothing real"
        );
    }
    Ok(Routes::new(
        suppliers,
        vec![default],
        settings.routes.clone(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_keys_never_show_in_debug_output() {
        let args = SupplierArgs {
            supplier: Some("vtpass".into()),
            vtpass_api_key: Some("api-secret-1".into()),
            vtpass_secret_key: Some("SK_secret-2".into()),
            vtpass_public_key: Some("PK_secret-3".into()),
            ..SupplierArgs::default()
        };
        let printed = format!("{args:?}");
        for key in ["api-secret-1", "SK_secret-2", "PK_secret-3"] {
            assert!(!printed.contains(key), "{printed}");
        }
        assert!(printed.contains("vtpass"));
    }
}
