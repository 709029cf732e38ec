//! ClubKonnect in the registry: its flags (read, like its
//! `BILLPAY_CLUBKONNECT_*` variables and `[clubkonnect]` keys, into
//! `Settings::clubkonnect`), and its constructor and problems from those
//! settings. The API key is never logged or printed.

use super::super::config::Settings;
use billpay_supplier::Supplier;
use billpay_supplier::clubkonnect::{ClubkonnectSettings, ClubkonnectSupplier};
use std::sync::Arc;

/// ClubKonnect's flags; `None` when not given (the lower layers then decide).
#[derive(clap::Args, Default, serde::Serialize)]
pub struct ClubkonnectFlags {
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

/// Never prints the key (clap's parsed commands are `Debug`).
impl std::fmt::Debug for ClubkonnectFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClubkonnectFlags")
            .field("clubkonnect_base_url", &self.clubkonnect_base_url)
            .finish_non_exhaustive()
    }
}

/// The registry's constructor.
pub fn build(settings: &Settings) -> anyhow::Result<Arc<dyn Supplier>> {
    let clubkonnect = &settings.clubkonnect;
    if let Some(missing) = missing(clubkonnect) {
        anyhow::bail!(missing);
    }
    let supplier = ClubkonnectSupplier::from_settings(clubkonnect)?;
    tracing::info!(
        base_url = supplier.base_url(),
        "ClubKonnect fulfils purchases"
    );
    Ok(Arc::new(supplier))
}

/// The base URL it calls (for the start-up check's messages).
pub fn base_url(settings: &Settings) -> String {
    billpay_supplier::shared::base_url(&settings.clubkonnect.base_url)
}

/// Configured: a credential is set.
pub fn configured(settings: &Settings) -> bool {
    settings.clubkonnect.any_set()
}

/// Its credentials are required when it is wanted, or when either is set.
pub fn problem(settings: &Settings, wanted: bool) -> Option<String> {
    let clubkonnect = &settings.clubkonnect;
    (wanted || clubkonnect.any_set())
        .then(|| missing(clubkonnect))
        .flatten()
}

fn missing(clubkonnect: &ClubkonnectSettings) -> Option<String> {
    let missing = clubkonnect.missing();
    let variables = missing
        .iter()
        .map(|key| format!("BILLPAY_CLUBKONNECT_{}", key.to_uppercase()))
        .collect::<Vec<_>>();
    (!missing.is_empty()).then(|| {
        format!(
            "ClubKonnect needs {} (or `{}` in the config file's [clubkonnect] section): your \
             UserID and API key are on your ClubKonnect account's API page",
            variables.join(", "),
            missing.join("`, `")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let flags = ClubkonnectFlags {
            clubkonnect_base_url: Some("https://www.nellobytesystems.com".into()),
            clubkonnect_api_key: Some("ck-secret-1".into()),
            ..ClubkonnectFlags::default()
        };
        let printed = format!("{flags:?}");
        assert!(!printed.contains("ck-secret-1"), "{printed}");
        assert!(printed.contains("nellobytesystems"), "{printed}");
    }
}
