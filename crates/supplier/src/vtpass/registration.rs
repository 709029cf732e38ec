//! VTpass in the registry ([`crate::registry::SUPPLIERS`]): its flags (read,
//! like its `BILLPAY_VTPASS_*` variables and `[vtpass]` keys, into its
//! section, [`VtpassSettings`]), its problems and its constructor from those
//! settings, and its callback reader. Keys are never logged or printed.

use super::{VtpassCallbacks, VtpassSettings, VtpassSupplier};
use crate::registry::{BuildError, Registration, SupplierSections, missing_settings};
use std::sync::Arc;

pub const REGISTRATION: Registration = Registration {
    name: "vtpass",
    flags: <VtpassFlags as clap::Args>::augment_args,
    problem: |s, wanted| {
        let vtpass = &s.vtpass;
        (wanted || vtpass.any_key_set())
            .then(|| missing_keys(vtpass))
            .flatten()
    },
    configured: |s| s.vtpass.any_key_set(),
    build,
    base_url: |s| crate::shared::base_url(&s.vtpass.base_url),
    callbacks: Some(|| Arc::new(VtpassCallbacks)),
};

/// VTpass's flags (only their definitions: the settings layers read what
/// was given into [`VtpassSettings`]).
#[derive(clap::Args)]
#[allow(dead_code)]
struct VtpassFlags {
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

fn build(sections: &SupplierSections) -> Result<Arc<dyn crate::Supplier>, BuildError> {
    let vtpass = &sections.vtpass;
    if let Some(missing) = missing_keys(vtpass) {
        return Err(BuildError::Misconfigured(missing));
    }
    let supplier = VtpassSupplier::from_settings(vtpass)?;
    tracing::info!(base_url = supplier.base_url(), "VTpass fulfils purchases");
    Ok(Arc::new(supplier))
}

fn missing_keys(vtpass: &VtpassSettings) -> Option<String> {
    missing_settings(
        "VTpass",
        "vtpass",
        &vtpass.missing_keys(),
        "your keys are under Profile → API keys at vtpass.com",
    )
}
