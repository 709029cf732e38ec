//! The registry of real suppliers: each one's name, its settings (flags,
//! `BILLPAY_<NAME>_*` variables, config-file keys) and how it is built. The
//! sandbox is built in (`serve` sets its latency). Everything else in the
//! CLI reaches suppliers through this list, so adding one is its adapter
//! folder in `crates/supplier`, its settings file here and its lines below.

mod vtpass;

use super::config::FileConfig;
use billpay_supplier::Supplier;
use std::sync::Arc;

/// The built-in supplier's name.
pub const SANDBOX: &str = "sandbox";

/// Every real supplier's settings (each adapter's own flags).
#[derive(clap::Args, Debug, Default)]
pub struct AdapterArgs {
    #[command(flatten)]
    vtpass: vtpass::VtpassArgs,
}

/// A real supplier billpay can sell through.
pub struct Registration {
    pub name: &'static str,
    /// Builds it from its settings; an error names what is missing.
    pub build: fn(&AdapterArgs, &FileConfig) -> anyhow::Result<Arc<dyn Supplier>>,
}

/// The real suppliers, by name.
pub const REGISTRY: &[Registration] = &[Registration {
    name: "vtpass",
    build: |args, file| vtpass::build(&args.vtpass, file),
}];

/// The one of this name.
pub fn registration(name: &str) -> Option<&'static Registration> {
    REGISTRY.iter().find(|r| r.name == name)
}

/// Every supplier name, the sandbox first: `sandbox, vtpass`.
pub fn names() -> String {
    let real = REGISTRY.iter().map(|r| r.name);
    std::iter::once(SANDBOX)
        .chain(real)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The real suppliers' names as one `BILLPAY_SUPPLIER=` value: `vtpass`, or
/// `vtpass|other` when there are several.
pub fn real_names() -> String {
    let real: Vec<_> = REGISTRY.iter().map(|r| r.name).collect();
    real.join("|")
}
