//! Paystack in the registry ([`crate::registry::GATEWAYS`]): its flags
//! (read, like its `BILLPAY_PAYSTACK_*` variables and `[paystack]` keys, into
//! its section, [`super::PaystackSettings`]) and its constructor. The secret
//! key is never logged or printed.

use super::PaystackGateway;
use crate::registry::Registration;
use std::sync::Arc;

pub const REGISTRATION: Registration = Registration {
    name: "paystack",
    title: "Paystack",
    flags: <PaystackFlags as clap::Args>::augment_args,
    enabled: |s| s.paystack.enabled(),
    missing: |s| s.paystack.missing(),
    build: |s| Ok(Arc::new(PaystackGateway::from_settings(&s.paystack)?)),
};

/// Paystack's flags (only their definitions: the settings layers read what
/// was given into its section). Global: `billpay funding`'s subcommands
/// take them too.
#[derive(clap::Args)]
#[allow(dead_code)]
struct PaystackFlags {
    /// Paystack API base URL (default https://api.paystack.co).
    #[arg(long, global = true)]
    paystack_base_url: Option<String>,
    /// Paystack secret key, sk_test_… or sk_live_… (also signs its webhooks).
    #[arg(long, global = true)]
    paystack_secret_key: Option<String>,
    /// Bank of new Paystack dedicated accounts (default wema-bank).
    #[arg(long, global = true)]
    paystack_preferred_bank: Option<String>,
}
