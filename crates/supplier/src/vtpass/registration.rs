//! VTpass in the registry ([`crate::registry::SUPPLIERS`]): its flags (read,
//! like its `BILLPAY_VTPASS_*` variables and `[vtpass]` keys, into its
//! section, [`super::VtpassSettings`]), its problems and its constructor from those
//! settings, and its callback reader. Keys are never logged or printed.

use super::{VtpassCallbacks, VtpassSupplier};
use crate::SupplierError;
use crate::registry::{Registration, SupplierSections, missing_settings};
use std::sync::Arc;

pub const REGISTRATION: Registration = Registration {
    name: "vtpass",
    flags: <VtpassFlags as clap::Args>::augment_args,
    missing: |s| {
        missing_settings(
            "VTpass",
            "vtpass",
            &s.vtpass.missing_keys(),
            "your keys are under Profile → API keys at vtpass.com",
        )
    },
    configured: |s| s.vtpass.any_key_set(),
    build,
    base_url: |s| crate::shared::base_url(&s.vtpass.base_url),
    callbacks: Some(|| Arc::new(VtpassCallbacks)),
};

/// VTpass's flags (only their definitions: the settings layers read what
/// was given into [`super::VtpassSettings`]).
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

fn build(sections: &SupplierSections) -> Result<Arc<dyn crate::Supplier>, SupplierError> {
    let supplier = VtpassSupplier::from_settings(&sections.vtpass)?;
    tracing::info!(base_url = supplier.base_url(), "VTpass fulfils purchases");
    Ok(Arc::new(supplier))
}
