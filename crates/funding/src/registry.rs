//! The payment gateways, each registered once: its folder's
//! [`Registration`] (its name, its flags, what it misses, its constructor)
//! is one line of [`GATEWAYS`], and its settings section one field of
//! [`GatewaySections`]. The settings sections the layers know, the flags of
//! `serve` and `billpay funding`, `--gateway`'s choices, `validate`'s
//! problems and the worker's gateways are derived from these two; the
//! webhook route (`/callbacks/{name}`) and the once-only credit need nothing.

use crate::monnify::MonnifySettings;
use crate::paystack::PaystackSettings;
use crate::{GatewayError, SharedGateway};
use serde::Deserialize;

/// The gateways, by name.
pub const GATEWAYS: &[Registration] =
    &[crate::monnify::REGISTRATION, crate::paystack::REGISTRATION];

/// Each gateway's settings section (`[monnify]`, `BILLPAY_MONNIFY_*`), a
/// field named like the gateway, its struct owned by its folder.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct GatewaySections {
    pub monnify: MonnifySettings,
    pub paystack: PaystackSettings,
}

/// A funding gateway billpay can take payments through.
pub struct Registration {
    /// Its `Gateway::name`: its section `[<name>]` (so its flags are
    /// `--<name>-…` and its variables `BILLPAY_<NAME>_…`), its webhooks'
    /// `/callbacks/<name>`, `billpay funding reserve --gateway <name>`, its
    /// name in the records.
    pub name: &'static str,
    /// As people write it, in messages: `Monnify`.
    pub title: &'static str,
    /// Adds its flags to a command (its `clap::Args`' `augment_args`).
    pub flags: fn(clap::Command) -> clap::Command,
    /// Whether the operator set any of its settings.
    pub enabled: fn(&GatewaySections) -> bool,
    /// Its settings still missing (environment variable names).
    pub missing: fn(&GatewaySections) -> Vec<String>,
    pub build: fn(&GatewaySections) -> Result<SharedGateway, GatewayError>,
}

/// Every gateway's name: `--gateway`'s choices.
pub fn names() -> Vec<&'static str> {
    GATEWAYS.iter().map(|g| g.name).collect()
}

/// What keeps `serve` from starting: a half-configured gateway, naming what
/// is missing.
pub fn problems(sections: &GatewaySections) -> Vec<String> {
    let enabled = GATEWAYS.iter().filter(|g| (g.enabled)(sections));
    enabled
        .filter_map(|gateway| {
            let missing = (gateway.missing)(sections);
            (!missing.is_empty()).then(|| {
                format!(
                    "{} is half-configured: set {} (or leave all its settings unset)",
                    gateway.title,
                    missing.join(", ")
                )
            })
        })
        .collect()
}

/// The gateways the operator configured, built, each with its registration.
pub fn configured(
    sections: &GatewaySections,
) -> Result<Vec<(&'static Registration, SharedGateway)>, GatewayError> {
    let enabled = GATEWAYS.iter().filter(|g| (g.enabled)(sections));
    enabled.map(|g| Ok((g, (g.build)(sections)?))).collect()
}
