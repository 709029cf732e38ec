//! ClubKonnect in the registry ([`crate::registry::SUPPLIERS`]): its flags
//! (read, like its `BILLPAY_CLUBKONNECT_*` variables and `[clubkonnect]`
//! keys, into its section, [`super::ClubkonnectSettings`]), its problems and its
//! constructor from those settings, and its callback reader. The API key is
//! never logged or printed.

use super::{ClubkonnectCallbacks, ClubkonnectSupplier};
use crate::SupplierError;
use crate::registry::{Registration, SupplierSections, missing_settings};
use std::sync::Arc;

pub const REGISTRATION: Registration = Registration {
    name: "clubkonnect",
    flags: <ClubkonnectFlags as clap::Args>::augment_args,
    missing: |s| {
        missing_settings(
            "ClubKonnect",
            "clubkonnect",
            &s.clubkonnect.missing(),
            "your UserID and API key are on your ClubKonnect account's API page",
        )
    },
    configured: |s| s.clubkonnect.any_set(),
    build,
    base_url: |s| crate::shared::base_url(&s.clubkonnect.base_url),
    callbacks: Some(|| Arc::new(ClubkonnectCallbacks)),
};

/// ClubKonnect's flags (only their definitions: the settings layers read
/// what was given into [`super::ClubkonnectSettings`]).
#[derive(clap::Args)]
#[allow(dead_code)]
struct ClubkonnectFlags {
    /// ClubKonnect API base URL (default https://www.nellobytesystems.com).
    #[arg(long)]
    clubkonnect_base_url: Option<String>,
    /// ClubKonnect UserID (CK…).
    #[arg(long)]
    clubkonnect_user_id: Option<String>,
    /// ClubKonnect API key.
    #[arg(long)]
    clubkonnect_api_key: Option<String>,
    /// Longest a ClubKonnect call may take before its outcome counts as
    /// unknown (requeried later), milliseconds (default 50000).
    #[arg(long)]
    clubkonnect_timeout_ms: Option<u64>,
    /// The CallBackURL sent with purchases: this server's public
    /// /callbacks/clubkonnect (optional; purchases are also requeried).
    #[arg(long)]
    clubkonnect_callback_url: Option<String>,
}

fn build(sections: &SupplierSections) -> Result<Arc<dyn crate::Supplier>, SupplierError> {
    let supplier = ClubkonnectSupplier::from_settings(&sections.clubkonnect)?;
    tracing::info!(
        base_url = supplier.base_url(),
        "ClubKonnect fulfils purchases"
    );
    Ok(Arc::new(supplier))
}
