//! Monnify's section of billpay's settings (`[monnify]`, `BILLPAY_MONNIFY_*`).
//! The gateway is on when any credential is set, and then needs all three.
//! Keys are `SecretString`s: never printed.

use crate::secret;
use secrecy::SecretString;
use serde::Deserialize;

/// Monnify's live API (the sandbox is `https://sandbox.monnify.com`).
pub const LIVE_URL: &str = "https://api.monnify.com";

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct MonnifySettings {
    /// Scheme and host; a trailing `/` is tolerated.
    pub base_url: String,
    pub api_key: Option<SecretString>,
    /// Also the key of its webhook signatures.
    pub secret_key: Option<SecretString>,
    /// The contract reserved accounts are opened under.
    pub contract_code: Option<SecretString>,
    /// Longest a call may take (a verify that takes longer is "ask again").
    pub timeout_ms: u64,
}

impl Default for MonnifySettings {
    fn default() -> Self {
        Self {
            base_url: LIVE_URL.into(),
            api_key: None,
            secret_key: None,
            contract_code: None,
            timeout_ms: 3_000,
        }
    }
}

impl MonnifySettings {
    /// Each credential by its name in the section, `None` when unset or blank.
    pub(crate) fn credentials(&self) -> [(&'static str, Option<&str>); 3] {
        [
            ("api_key", secret(&self.api_key)),
            ("secret_key", secret(&self.secret_key)),
            ("contract_code", secret(&self.contract_code)),
        ]
    }

    /// Whether the operator set anything of Monnify's (then it must be whole).
    pub fn enabled(&self) -> bool {
        self.credentials().iter().any(|c| c.1.is_some()) || self.base_url != LIVE_URL
    }

    /// The environment variables still missing or blank.
    pub fn missing(&self) -> Vec<String> {
        let credentials = self.credentials();
        let missing = credentials.iter().filter(|c| c.1.is_none());
        missing
            .map(|c| format!("BILLPAY_MONNIFY_{}", c.0.to_uppercase()))
            .collect()
    }
}
