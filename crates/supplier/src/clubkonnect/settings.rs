//! ClubKonnect's section of billpay's settings (`[clubkonnect]` in the
//! config file, `BILLPAY_CLUBKONNECT_*`): what the operator configures, its
//! defaults, and the client built from it. The API key is a `SecretString`:
//! never printed.

use super::{ClubkonnectConfig, ClubkonnectSupplier, LIVE_URL};
use crate::SupplierError;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::time::Duration;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ClubkonnectSettings {
    /// The API's base URL, [`LIVE_URL`] (with or without `/api`).
    pub base_url: String,
    /// Your ClubKonnect UserID (`CK…`), sent on every call.
    pub user_id: Option<String>,
    /// Your API key (ClubKonnect → API settings), sent on every call.
    pub api_key: Option<SecretString>,
    /// Longest a call may take before its outcome counts as unknown.
    pub timeout_ms: u64,
    /// Where ClubKonnect sends its callbacks (`CallBackURL`): this server's
    /// `/callbacks/clubkonnect`, e.g. `https://pay.example.com/callbacks/clubkonnect`.
    pub callback_url: Option<String>,
}

impl Default for ClubkonnectSettings {
    fn default() -> Self {
        Self {
            base_url: LIVE_URL.into(),
            user_id: None,
            api_key: None,
            timeout_ms: 50_000,
            callback_url: None,
        }
    }
}

impl ClubkonnectSettings {
    fn user_id(&self) -> Option<&str> {
        let id = self.user_id.as_deref()?.trim();
        (!id.is_empty()).then_some(id)
    }

    fn api_key(&self) -> Option<&str> {
        let key = self.api_key.as_ref()?.expose_secret().trim();
        (!key.is_empty()).then_some(key)
    }

    /// The credentials (named as in the section) that are not set; blank is unset.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if self.user_id().is_none() {
            missing.push("user_id");
        }
        if self.api_key().is_none() {
            missing.push("api_key");
        }
        missing
    }

    /// Whether any credential is set (then both must be).
    pub fn any_set(&self) -> bool {
        self.missing().len() < 2
    }
}

impl ClubkonnectSupplier {
    /// The ClubKonnect client for these settings; refused while a credential is missing.
    pub fn from_settings(settings: &ClubkonnectSettings) -> Result<Self, SupplierError> {
        let missing =
            |name: &str| SupplierError::Unavailable(format!("ClubKonnect {name} is not set"));
        Self::new(ClubkonnectConfig {
            base_url: settings.base_url.clone(),
            user_id: settings
                .user_id()
                .ok_or_else(|| missing("user_id"))?
                .to_owned(),
            api_key: settings
                .api_key()
                .ok_or_else(|| missing("api_key"))?
                .to_owned(),
            timeout: Duration::from_millis(settings.timeout_ms),
            callback_url: settings
                .callback_url
                .clone()
                .filter(|u| !u.trim().is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_required_together_and_never_printed() {
        let settings = ClubkonnectSettings {
            api_key: Some("ck-secret-key-1".into()),
            user_id: Some(" ".into()),
            ..ClubkonnectSettings::default()
        };
        assert_eq!(settings.missing(), ["user_id"]);
        assert!(settings.any_set());
        assert!(!ClubkonnectSettings::default().any_set());
        assert!(ClubkonnectSupplier::from_settings(&settings).is_err());
        assert!(!format!("{settings:?}").contains("ck-secret-key-1"));
    }
}
