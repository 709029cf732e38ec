//! Paystack's section of billpay's settings (`[paystack]`,
//! `BILLPAY_PAYSTACK_*`). The gateway is on when its secret key is set (the
//! key decides test or live mode). The key is a `SecretString`: never printed.

use crate::secret;
use secrecy::SecretString;
use serde::Deserialize;

/// Paystack's API, for test and live keys alike.
pub const LIVE_URL: &str = "https://api.paystack.co";

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct PaystackSettings {
    /// Scheme and host; a trailing `/` is tolerated.
    pub base_url: String,
    /// `sk_test_…` or `sk_live_…`; also the key of its webhook signatures.
    pub secret_key: Option<SecretString>,
    /// The bank of new dedicated accounts: `wema-bank`, `titan-paystack`
    /// (`test-bank` with a test key).
    pub preferred_bank: String,
    /// Longest a call may take (a verify that takes longer is "ask again").
    pub timeout_ms: u64,
}

impl Default for PaystackSettings {
    fn default() -> Self {
        Self {
            base_url: LIVE_URL.into(),
            secret_key: None,
            preferred_bank: "wema-bank".into(),
            timeout_ms: 3_000,
        }
    }
}

impl PaystackSettings {
    /// Whether the operator set anything of Paystack's (then it must be whole).
    pub fn enabled(&self) -> bool {
        let default = Self::default();
        secret(&self.secret_key).is_some()
            || self.base_url != default.base_url
            || self.preferred_bank != default.preferred_bank
    }

    /// The environment variables still missing or blank.
    pub fn missing(&self) -> Vec<String> {
        let key = secret(&self.secret_key).is_none().then_some("SECRET_KEY");
        let bank = self
            .preferred_bank
            .trim()
            .is_empty()
            .then_some("PREFERRED_BANK");
        let missing = key.into_iter().chain(bank);
        missing
            .map(|name| format!("BILLPAY_PAYSTACK_{name}"))
            .collect()
    }
}
