//! VTpass's section of billpay's settings (`[vtpass]` in the config file,
//! `BILLPAY_VTPASS_*`): what the operator configures, its defaults, and the
//! client built from it. The keys are `SecretString`s: never printed.

use super::{LIVE_URL, VtpassConfig, VtpassSupplier};
use crate::SupplierError;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::time::Duration;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct VtpassSettings {
    /// The API's base URL: [`LIVE_URL`] or [`super::SANDBOX_URL`].
    pub base_url: String,
    /// Profile → API keys at vtpass.com; sent on every call.
    pub api_key: Option<SecretString>,
    /// Sent on POST calls.
    pub secret_key: Option<SecretString>,
    /// Sent on GET calls.
    pub public_key: Option<SecretString>,
    /// Longest a call may take before its outcome counts as unknown
    /// (requeried later, never refunded on a guess).
    pub timeout_ms: u64,
}

impl Default for VtpassSettings {
    fn default() -> Self {
        Self {
            base_url: LIVE_URL.into(),
            api_key: None,
            secret_key: None,
            public_key: None,
            timeout_ms: 50_000,
        }
    }
}

impl VtpassSettings {
    /// Each key by name, `None` when unset or blank.
    fn keys(&self) -> [(&'static str, Option<&str>); 3] {
        [
            ("api_key", set(&self.api_key)),
            ("secret_key", set(&self.secret_key)),
            ("public_key", set(&self.public_key)),
        ]
    }

    /// The keys (named as in the section) that are not set; blank is unset.
    pub fn missing_keys(&self) -> Vec<&'static str> {
        let keys = self.keys();
        keys.iter().filter(|k| k.1.is_none()).map(|k| k.0).collect()
    }

    /// Whether any key is set (then all of them must be).
    pub fn any_key_set(&self) -> bool {
        self.missing_keys().len() < 3
    }
}

fn set(key: &Option<SecretString>) -> Option<&str> {
    let key = key.as_ref()?.expose_secret().trim();
    (!key.is_empty()).then_some(key)
}

impl VtpassSupplier {
    /// The VTpass client for these settings; refused while a key is missing.
    pub fn from_settings(settings: &VtpassSettings) -> Result<Self, SupplierError> {
        let [api_key, secret_key, public_key] = settings.keys().map(|(name, key)| {
            key.map(str::to_owned)
                .ok_or_else(|| SupplierError::Unavailable(format!("VTpass {name} is not set")))
        });
        let timeout = Duration::from_millis(settings.timeout_ms);
        Self::new(VtpassConfig {
            base_url: settings.base_url.clone(),
            api_key: api_key?,
            secret_key: secret_key?,
            public_key: public_key?,
            timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_required_together_and_never_printed() {
        let settings = VtpassSettings {
            api_key: Some("api-secret-1".into()),
            secret_key: Some(" ".into()),
            ..VtpassSettings::default()
        };
        assert_eq!(settings.missing_keys(), ["secret_key", "public_key"]);
        assert!(settings.any_key_set());
        assert!(!VtpassSettings::default().any_key_set());
        assert!(VtpassSupplier::from_settings(&settings).is_err());
        assert!(!format!("{settings:?}").contains("api-secret-1"));
    }
}
