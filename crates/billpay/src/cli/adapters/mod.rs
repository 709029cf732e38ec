//! The registry of real suppliers: each one's name, its flags and how it is
//! built from the resolved [`Settings`] (its section, e.g. `[vtpass]`, which
//! its adapter owns). The sandbox is built in (`serve` builds it from
//! `[sandbox]`). Everything else in the CLI reaches suppliers through this
//! list, so adding one is its adapter folder in `crates/supplier`, its
//! section in `Settings` (and `config/layers.rs`'s `SECTIONS`), its flags
//! file here and its lines below.

mod clubkonnect;
mod vtpass;

use super::config::Settings;
use billpay_supplier::Supplier;
use std::sync::Arc;

/// The built-in supplier's name.
pub const SANDBOX: &str = "sandbox";

/// Every real supplier's flags (each also `BILLPAY_<FLAG>` and a key of the
/// config file: the settings layers read them, not this struct).
#[derive(clap::Args, Debug, Default, serde::Serialize)]
pub struct AdapterFlags {
    #[command(flatten)]
    #[serde(flatten)]
    vtpass: vtpass::VtpassFlags,
    #[command(flatten)]
    #[serde(flatten)]
    clubkonnect: clubkonnect::ClubkonnectFlags,
}

/// A real supplier billpay can sell through.
pub struct Registration {
    pub name: &'static str,
    /// Builds it from its settings; an error names what is missing.
    pub build: fn(&Settings) -> anyhow::Result<Arc<dyn Supplier>>,
    /// What would keep it from being built, for `Settings::validate`: asked
    /// with `wanted` true when the settings name it (default or a route).
    pub problem: fn(&Settings, wanted: bool) -> Option<String>,
    /// Whether its credentials are set: then it is built (and checked at
    /// start) even when no route names it yet.
    pub configured: fn(&Settings) -> bool,
    /// The base URL it calls, as normalized (for messages).
    pub base_url: fn(&Settings) -> String,
    /// Its settings' environment prefix, for messages.
    pub env_prefix: &'static str,
}

/// The real suppliers, by name.
pub const REGISTRY: &[Registration] = &[
    Registration {
        name: "vtpass",
        build: vtpass::build,
        problem: vtpass::problem,
        configured: vtpass::configured,
        base_url: vtpass::base_url,
        env_prefix: "BILLPAY_VTPASS_",
    },
    Registration {
        name: "clubkonnect",
        build: clubkonnect::build,
        problem: clubkonnect::problem,
        configured: clubkonnect::configured,
        base_url: clubkonnect::base_url,
        env_prefix: "BILLPAY_CLUBKONNECT_",
    },
];

/// The one of this name.
pub fn registration(name: &str) -> Option<&'static Registration> {
    REGISTRY.iter().find(|r| r.name == name)
}

/// Whether `name` is a supplier: the sandbox or one of the registry.
pub fn known(name: &str) -> bool {
    name == SANDBOX || registration(name).is_some()
}

/// Every supplier's name, the sandbox first.
fn all_names() -> Vec<&'static str> {
    let real = REGISTRY.iter().map(|r| r.name);
    std::iter::once(SANDBOX).chain(real).collect()
}

/// Every supplier name: `sandbox, vtpass, clubkonnect`.
pub fn names() -> String {
    all_names().join(", ")
}

/// Every supplier name as a choice: `sandbox or vtpass` (`a, b or c`).
pub fn choice() -> String {
    match all_names().split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The real suppliers' names as one `BILLPAY_SUPPLIER=` value:
/// `vtpass|clubkonnect`.
pub fn real_names() -> String {
    let real: Vec<_> = REGISTRY.iter().map(|r| r.name).collect();
    real.join("|")
}
