//! VTpass in the registry: its flags (read, like its `BILLPAY_VTPASS_*`
//! variables and `[vtpass]` keys, into `Settings::vtpass`), and its
//! constructor and problems from those settings. Keys are never logged or
//! printed.

use super::super::config::Settings;
use billpay_supplier::Supplier;
use billpay_supplier::vtpass::{VtpassSettings, VtpassSupplier};
use std::sync::Arc;

/// VTpass's flags; `None` when not given (the lower layers then decide).
#[derive(clap::Args, Default, serde::Serialize)]
pub struct VtpassFlags {
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
}

/// Never prints the keys (clap's parsed commands are `Debug`).
impl std::fmt::Debug for VtpassFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VtpassFlags")
            .field("vtpass_base_url", &self.vtpass_base_url)
            .finish_non_exhaustive()
    }
}

/// The registry's constructor.
pub fn build(settings: &Settings) -> anyhow::Result<Arc<dyn Supplier>> {
    let vtpass = &settings.vtpass;
    if let Some(missing) = missing_keys(vtpass) {
        anyhow::bail!(missing);
    }
    let supplier = VtpassSupplier::from_settings(vtpass)?;
    tracing::info!(base_url = supplier.base_url(), "VTpass fulfils purchases");
    Ok(Arc::new(supplier))
}

/// The base URL it calls (for the start-up check's messages).
pub fn base_url(settings: &Settings) -> String {
    billpay_supplier::shared::base_url(&settings.vtpass.base_url)
}

/// Configured: a key is set.
pub fn configured(settings: &Settings) -> bool {
    settings.vtpass.any_key_set()
}

/// Its keys are required when it is wanted, or when any of them is set.
pub fn problem(settings: &Settings, wanted: bool) -> Option<String> {
    let vtpass = &settings.vtpass;
    (wanted || vtpass.any_key_set())
        .then(|| missing_keys(vtpass))
        .flatten()
}

fn missing_keys(vtpass: &VtpassSettings) -> Option<String> {
    let missing = vtpass.missing_keys();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_keys_never_show_in_debug_output() {
        let flags = VtpassFlags {
            vtpass_base_url: Some("https://sandbox.vtpass.com".into()),
            vtpass_api_key: Some("api-secret-1".into()),
            vtpass_secret_key: Some("SK_secret-2".into()),
            vtpass_public_key: Some("PK_secret-3".into()),
            ..VtpassFlags::default()
        };
        let printed = format!("{flags:?}");
        for key in ["api-secret-1", "SK_secret-2", "PK_secret-3"] {
            assert!(!printed.contains(key), "{printed}");
        }
        assert!(printed.contains("sandbox.vtpass.com"), "{printed}");
    }
}
