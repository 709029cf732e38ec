//! The real suppliers, each registered once: its folder's [`Registration`]
//! (its name, its flags, its problems, its constructor, its callback reader)
//! is one line of [`SUPPLIERS`], and its settings section one field of
//! [`SupplierSections`]. Everything else is derived from these two: the
//! settings sections the layers know, the `--supplier` help, the names in
//! messages, `Settings::validate`'s supplier problems, the start-up check,
//! `supplier balance`, and the callbacks served at `/callbacks/{name}`
//! ([`crate::callback::all`]).
//!
//! The sandbox is built in: its `[sandbox]` section belongs to `serve`.
//!
//! Besides these, any number of SME-data sites, each a supplier named by its
//! `[suppliers.NAME]` section (`kind = "smedata"`, [`SiteSettings`]): they
//! are in [`SupplierSections::sites`], built whenever configured, and named
//! wherever a registered supplier is (routes, balances, the start-up check,
//! the catalogue sync).

use crate::callback::Callbacks;
use crate::clubkonnect::ClubkonnectSettings;
use crate::smedata::{KIND as SMEDATA, SiteSettings, SmedataSupplier};
use crate::vtpass::VtpassSettings;
use crate::{Supplier, SupplierError};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The built-in supplier's name.
pub const SANDBOX: &str = "sandbox";

/// The real suppliers, by name.
pub const SUPPLIERS: &[Registration] = &[
    crate::vtpass::REGISTRATION,
    crate::clubkonnect::REGISTRATION,
];

/// Each real supplier's settings section (`[vtpass]`, `BILLPAY_VTPASS_*`),
/// a field named like the supplier, its struct owned by its folder.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SupplierSections {
    pub vtpass: VtpassSettings,
    pub clubkonnect: ClubkonnectSettings,
    /// `[suppliers.NAME]`: the SME-data sites, by name (a registered
    /// supplier's `[suppliers.vtpass]` is moved to its own section by the
    /// settings layers).
    #[serde(rename = "suppliers")]
    pub sites: BTreeMap<String, SiteSettings>,
}

impl SupplierSections {
    /// What keeps each configured site from being built, one sentence each.
    pub fn site_problems(&self) -> Vec<String> {
        self.sites
            .iter()
            .filter_map(|(name, site)| {
                let section = format!("[suppliers.{name}]");
                match site.kind.as_deref().map(str::trim) {
                    None => Some(format!("{section} needs `kind = \"{SMEDATA}\"`")),
                    Some(kind) if kind != SMEDATA && registration(kind).is_some() => Some(format!(
                        "{section} has kind {kind:?}: {kind} is one supplier, configured as [suppliers.{kind}] (or [{kind}])"
                    )),
                    Some(kind) if kind != SMEDATA => Some(format!(
                        "{section} has kind {kind:?}, not a kind of supplier ({SMEDATA}, {})",
                        SUPPLIERS.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
                    )),
                    Some(_) if name == SANDBOX || registration(name).is_some() => Some(format!(
                        "{section}: {name} is a built-in supplier's name; give the site another"
                    )),
                    Some(_) => site.problem(name),
                }
            })
            .collect()
    }

    /// The site `name`, built from its section.
    pub fn site(&self, name: &str) -> Option<Result<Arc<dyn Supplier>, BuildError>> {
        let site = self.sites.get(name)?;
        Some(match self.site_problems_of(name) {
            Some(problem) => Err(BuildError::Misconfigured(problem)),
            None => SmedataSupplier::from_settings(name, site)
                .map(|s| {
                    tracing::info!(
                        supplier = name,
                        base_url = s.base_url(),
                        "an SME-data site fulfils purchases"
                    );
                    Arc::new(s) as Arc<dyn Supplier>
                })
                .map_err(BuildError::from),
        })
    }

    fn site_problems_of(&self, name: &str) -> Option<String> {
        let only = SupplierSections {
            sites: self
                .sites
                .iter()
                .filter(|(n, _)| *n == name)
                .map(|(n, s)| (n.clone(), s.clone()))
                .collect(),
            ..SupplierSections::default()
        };
        only.site_problems().into_iter().next()
    }

    /// Whether `name` is a supplier: the sandbox, a registered one or a site.
    pub fn known(&self, name: &str) -> bool {
        known(name) || self.sites.contains_key(name)
    }

    /// Every supplier name, the sandbox first, then the sites.
    pub fn names(&self) -> String {
        let sites = self.sites.keys().map(String::as_str);
        all_names()
            .into_iter()
            .chain(sites)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every supplier name as a choice: `sandbox, vtpass, clubkonnect or husmodata`.
    pub fn choice(&self) -> String {
        let sites = self.sites.keys().map(String::as_str);
        let all: Vec<&str> = all_names().into_iter().chain(sites).collect();
        match all.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }

    /// A real supplier `name` (registered or a site), built; `None`: no such one.
    pub fn build(&self, name: &str) -> Option<Result<Arc<dyn Supplier>, BuildError>> {
        match registration(name) {
            Some(registration) => Some(registration.build(self)),
            None => self.site(name),
        }
    }

    /// The base URL a real supplier calls (normalized) and where its
    /// settings are (`BILLPAY_VTPASS_`, `[suppliers.husmodata] / BILLPAY_HUSMODATA_`),
    /// for the start-up check's messages.
    pub fn described(&self, name: &str) -> Option<(String, String)> {
        if let Some(registration) = registration(name) {
            return Some(((registration.base_url)(self), registration.env_prefix()));
        }
        let site = self.sites.get(name)?;
        let base_url = crate::shared::base_url(site.base_url.as_deref().unwrap_or_default());
        Some((
            base_url,
            format!("[suppliers.{name}] or BILLPAY_{}_", name.to_uppercase()),
        ))
    }
}

/// A real supplier billpay can sell through.
pub struct Registration {
    /// `BILLPAY_SUPPLIER=<name>`, `[routes]`, its section `[<name>]` (so its
    /// flags are `--<name>-…` and its variables `BILLPAY_<NAME>_…`) and its
    /// callbacks' `/callbacks/<name>`.
    pub name: &'static str,
    /// Adds its flags to a command (its `clap::Args`' `augment_args`); each
    /// is named `<name>_<setting>`, so the settings layers put it in its
    /// section.
    pub flags: fn(clap::Command) -> clap::Command,
    /// What its settings miss to build it (naming each setting), if anything:
    /// a problem for `Settings::validate` when it is wanted or configured.
    pub missing: fn(&SupplierSections) -> Option<String>,
    /// Whether its credentials are set: then it is built (and checked at
    /// start) even when no route names it yet, and must be whole.
    pub configured: fn(&SupplierSections) -> bool,
    /// Builds it from its settings (once nothing is `missing`).
    pub build: fn(&SupplierSections) -> Result<Arc<dyn Supplier>, SupplierError>,
    /// The base URL it calls, as normalized (for messages).
    pub base_url: fn(&SupplierSections) -> String,
    /// Its callback reader, if it sends callbacks.
    pub callbacks: Option<fn() -> Arc<dyn Callbacks>>,
}

impl Registration {
    /// Its settings' environment prefix, for messages: `BILLPAY_VTPASS_`.
    pub fn env_prefix(&self) -> String {
        format!("BILLPAY_{}_", self.name.to_uppercase())
    }

    /// What would keep it from being built, for `Settings::validate`:
    /// `wanted` when the settings name it (default or a route); its settings
    /// are required then, or when any of its credentials is set.
    pub fn problem(&self, sections: &SupplierSections, wanted: bool) -> Option<String> {
        (wanted || (self.configured)(sections))
            .then(|| (self.missing)(sections))
            .flatten()
    }

    /// It, built from its settings; refused, naming them, while some are missing.
    pub fn build(&self, sections: &SupplierSections) -> Result<Arc<dyn Supplier>, BuildError> {
        if let Some(missing) = (self.missing)(sections) {
            return Err(BuildError::Misconfigured(missing));
        }
        Ok((self.build)(sections)?)
    }
}

/// Why a real supplier was not built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A setting it needs is missing; the message names it.
    #[error("{0}")]
    Misconfigured(String),
    #[error(transparent)]
    Supplier(#[from] SupplierError),
}

/// The one of this name.
pub fn registration(name: &str) -> Option<&'static Registration> {
    SUPPLIERS.iter().find(|r| r.name == name)
}

/// Whether `name` is a supplier: the sandbox or a registered one.
pub fn known(name: &str) -> bool {
    name == SANDBOX || registration(name).is_some()
}

/// Every supplier's name, the sandbox first.
fn all_names() -> Vec<&'static str> {
    let real = SUPPLIERS.iter().map(|r| r.name);
    std::iter::once(SANDBOX).chain(real).collect()
}

/// Every supplier name: `sandbox, vtpass, clubkonnect`.
pub fn names() -> String {
    all_names().join(", ")
}

/// Every supplier name as a choice: `sandbox or vtpass` (`a, b or c`).
pub fn choice() -> String {
    SupplierSections::default().choice()
}

/// The real suppliers' names as one `BILLPAY_SUPPLIER=` value:
/// `vtpass|clubkonnect`.
pub fn real_names() -> String {
    let real: Vec<_> = SUPPLIERS.iter().map(|r| r.name).collect();
    real.join("|")
}

/// Which suppliers the settings name: the default (`BILLPAY_SUPPLIER`) and
/// the config file's `[routes]`.
pub struct Wanted<'a> {
    pub default: &'a str,
    pub routes: &'a HashMap<String, Vec<String>>,
}

impl Wanted<'_> {
    /// Whether `name` is the default supplier or on a route.
    pub fn names(&self, name: &str) -> bool {
        self.default == name || self.routes.values().flatten().any(|n| n == name)
    }

    /// What would keep the suppliers from being built (for
    /// `Settings::validate`): a name that is no supplier, or a real supplier
    /// wanted (or half configured) without its settings.
    pub fn problems(&self, sections: &SupplierSections) -> Vec<String> {
        let default = self.default;
        let unknown_default = (!sections.known(default)).then(|| {
            format!(
                "BILLPAY_SUPPLIER must be {}, not {default:?}",
                sections.choice()
            )
        });
        let unknown_on_routes = self.routes.iter().filter_map(|(key, route)| {
            let unknown = route.iter().find(|n| !sections.known(n))?;
            Some(format!(
                "routes: {key} names {unknown:?}, not a supplier ({})",
                sections.names()
            ))
        });
        let unconfigured = SUPPLIERS
            .iter()
            .filter_map(|r| r.problem(sections, self.names(r.name)));
        unknown_default
            .into_iter()
            .chain(unknown_on_routes)
            .chain(unconfigured)
            .chain(sections.site_problems())
            .collect()
    }

    /// Every real supplier that is configured (its credentials set) or
    /// named, built from its settings.
    /// Every site is configured by its section: all are built.
    pub fn build(&self, sections: &SupplierSections) -> Result<Vec<Arc<dyn Supplier>>, BuildError> {
        let registered = SUPPLIERS
            .iter()
            .filter(|r| (r.configured)(sections) || self.names(r.name))
            .map(|r| r.build(sections));
        let sites = sections.sites.keys().filter_map(|name| sections.site(name));
        registered.chain(sites).collect()
    }
}

/// "VTpass needs BILLPAY_VTPASS_API_KEY, BILLPAY_VTPASS_SECRET_KEY (or
/// `api_key`, `secret_key` in the config file's [vtpass] section): `where`",
/// for `missing` keys of the section `name` of the supplier called `title`;
/// `None` when nothing is missing.
pub fn missing_settings(
    title: &str,
    name: &str,
    missing: &[&str],
    where_to_find: &str,
) -> Option<String> {
    let variables = missing
        .iter()
        .map(|key| format!("BILLPAY_{}_{}", name.to_uppercase(), key.to_uppercase()))
        .collect::<Vec<_>>();
    (!missing.is_empty()).then(|| {
        format!(
            "{title} needs {} (or `{}` in the config file's [{name}] section): {where_to_find}",
            variables.join(", "),
            missing.join("`, `")
        )
    })
}
