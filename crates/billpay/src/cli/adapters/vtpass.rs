//! VTpass's settings: its URL, keys and timeout (flags > env > config file,
//! like every setting). Keys are never logged or printed.

use super::super::config::FileConfig;
use billpay_supplier::Supplier;
use billpay_supplier::vtpass::{LIVE_URL, VtpassConfig, VtpassSupplier};
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Default)]
pub struct VtpassArgs {
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
}

/// Never prints the keys (clap's parsed commands are `Debug`).
impl std::fmt::Debug for VtpassArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VtpassArgs")
            .field("vtpass_base_url", &self.vtpass_base_url)
            .finish_non_exhaustive()
    }
}

/// The registry's constructor.
pub fn build(args: &VtpassArgs, file: &FileConfig) -> anyhow::Result<Arc<dyn Supplier>> {
    let config = args.config(file)?;
    tracing::info!(base_url = %config.base_url, "VTpass fulfils purchases");
    Ok(Arc::new(VtpassSupplier::new(config)?))
}

impl VtpassArgs {
    /// VTpass's settings; an error naming what is missing.
    fn config(&self, file: &FileConfig) -> anyhow::Result<VtpassConfig> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_show_in_debug_output() {
        let args = VtpassArgs {
            vtpass_api_key: Some("api-secret-1".into()),
            vtpass_secret_key: Some("SK_secret-2".into()),
            vtpass_public_key: Some("PK_secret-3".into()),
            ..VtpassArgs::default()
        };
        let config = args.config(&FileConfig::default()).unwrap();
        let printed = format!("{args:?} {config:?}");
        for key in ["api-secret-1", "SK_secret-2", "PK_secret-3"] {
            assert!(!printed.contains(key), "{printed}");
        }
        assert!(printed.contains("Vtpass"));
    }
}
