//! Monnify in the registry ([`crate::registry::GATEWAYS`]): its flags (read,
//! like its `BILLPAY_MONNIFY_*` variables and `[monnify]` keys, into its
//! section, [`super::MonnifySettings`]) and its constructor. Keys are never
//! logged or printed.

use super::MonnifyGateway;
use crate::registry::Registration;
use std::sync::Arc;

pub const REGISTRATION: Registration = Registration {
    name: "monnify",
    title: "Monnify",
    flags: <MonnifyFlags as clap::Args>::augment_args,
    enabled: |s| s.monnify.enabled(),
    missing: |s| s.monnify.missing(),
    build: |s| Ok(Arc::new(MonnifyGateway::from_settings(&s.monnify)?)),
};

/// Monnify's flags (only their definitions: the settings layers read what
/// was given into its section). Global: `billpay funding`'s subcommands
/// take them too.
#[derive(clap::Args)]
#[allow(dead_code)]
struct MonnifyFlags {
    /// Monnify API base URL: scheme and host (default https://api.monnify.com;
    /// sandbox https://sandbox.monnify.com).
    #[arg(long, global = true)]
    monnify_base_url: Option<String>,
    /// Monnify API key (Developer → API keys).
    #[arg(long, global = true)]
    monnify_api_key: Option<String>,
    /// Monnify secret key (also signs its webhooks).
    #[arg(long, global = true)]
    monnify_secret_key: Option<String>,
    /// Monnify contract code for reserved accounts.
    #[arg(long, global = true)]
    monnify_contract_code: Option<String>,
}
