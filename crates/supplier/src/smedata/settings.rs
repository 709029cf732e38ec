//! One SME-data site's section of billpay's settings: `[suppliers.NAME]`
//! with `kind = "smedata"` in the config file (its token also
//! `BILLPAY_<NAME>_TOKEN`), any number of them. The ids a site gives its
//! networks, discos and cable services are database rows of its copy of
//! the script: the script's seed ids are the defaults, each overridable.
//! The token is a `SecretString`: never printed.

use super::{SmedataConfig, SmedataSupplier};
use crate::SupplierError;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// The kind of a `[suppliers.NAME]` section this adapter serves.
pub const KIND: &str = "smedata";

/// `[suppliers.NAME]`: a site of the family (or, with another `kind`, a
/// registered supplier's section written in this form; the settings layers
/// move those to their own section).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SiteSettings {
    /// `smedata` (the settings refuse any other kind left here).
    pub kind: Option<String>,
    /// The site's API, e.g. `https://www.husmodata.com/api/` (with or
    /// without `/api`).
    pub base_url: Option<String>,
    /// The API token of your account there (`Authorization: Token …`).
    pub token: Option<SecretString>,
    /// Our provider slug → the site's `network` id (default: mtn 1, glo 2,
    /// 9mobile 3, airtel 4).
    pub networks: BTreeMap<String, u32>,
    /// Our electricity provider slug → the site's `disco_name` id (default:
    /// the script's 1 Ikeja … 11 Yola).
    pub discos: BTreeMap<String, u32>,
    /// Our cable provider slug → the site's `cablename` id (default: gotv 1,
    /// dstv 2, startimes 3).
    pub cables: BTreeMap<String, u32>,
    /// Longest a call may take before its outcome counts as unknown (ms;
    /// default 50000).
    pub timeout_ms: Option<u64>,
    /// The site accepts our reference as `ident` and echoes it (Gladtidings).
    pub ident: bool,
    /// `Customer_Phone` for electricity (the site requires one; our
    /// electricity purchases carry none): your own number. Without it the
    /// site sells no electricity for us.
    pub customer_phone: Option<String>,
}

/// The script's seed ids (`db.json`), which Husmodata's, Maskawasub's and
/// Alrahuz's clients list alike.
pub const NETWORKS: &[(&str, u32)] = &[("mtn", 1), ("glo", 2), ("9mobile", 3), ("airtel", 4)];
pub const DISCOS: &[(&str, u32)] = &[
    ("ikeja-electric", 1),
    ("eko-electric", 2),
    ("abuja-electric", 3),
    ("kano-electric", 4),
    ("enugu-electric", 5),
    ("portharcourt-electric", 6),
    ("ibadan-electric", 7),
    ("kaduna-electric", 8),
    ("jos-electric", 9),
    ("benin-electric", 10),
    ("yola-electric", 11),
];
pub const CABLES: &[(&str, u32)] = &[("gotv", 1), ("dstv", 2), ("startimes", 3)];

/// The ids configured, over the defaults.
fn ids(defaults: &[(&str, u32)], configured: &BTreeMap<String, u32>) -> BTreeMap<String, u32> {
    let mut all: BTreeMap<String, u32> = defaults.iter().map(|(k, v)| ((*k).into(), *v)).collect();
    all.extend(configured.clone());
    all
}

impl SiteSettings {
    fn token(&self) -> Option<&str> {
        let token = self.token.as_ref()?.expose_secret().trim();
        (!token.is_empty()).then_some(token)
    }

    /// What keeps the site `name` from being built, as one sentence.
    pub fn problem(&self, name: &str) -> Option<String> {
        let section = format!("[suppliers.{name}]");
        let variable = format!("BILLPAY_{}_TOKEN", name.to_uppercase());
        if !valid_name(name) {
            return Some(format!(
                "{section}: a supplier's name is lower-case letters, digits and `_` (it names \
                 its BILLPAY_<NAME>_TOKEN variable and its routes)"
            ));
        }
        let Some(base_url) = self.base_url.as_deref().map(str::trim) else {
            return Some(format!(
                "{section} needs its `base_url`, e.g. https://www.{name}.com/api/"
            ));
        };
        if !(base_url.starts_with("https://") || base_url.starts_with("http://")) {
            return Some(format!(
                "{section} base_url {base_url:?} has no scheme: write it with https://, e.g. \
                 https://{}",
                base_url.trim_start_matches('/')
            ));
        }
        if self.token().is_none() {
            return Some(format!(
                "{section} needs its API token: `token` in that section or {variable} (the \
                 token on your {name} account's API page)"
            ));
        }
        None
    }
}

/// A site's name: it becomes `BILLPAY_<NAME>_TOKEN`, so letters, digits and `_`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl SmedataSupplier {
    /// The site `name`'s client for these settings; refused while
    /// [`SiteSettings::problem`] has one.
    pub fn from_settings(name: &str, settings: &SiteSettings) -> Result<Self, SupplierError> {
        if let Some(problem) = settings.problem(name) {
            return Err(SupplierError::Unavailable(problem));
        }
        Self::new(SmedataConfig {
            name: name.to_owned(),
            base_url: settings.base_url.clone().unwrap_or_default(),
            token: settings.token().unwrap_or_default().to_owned(),
            timeout: Duration::from_millis(settings.timeout_ms.unwrap_or(50_000)),
            networks: ids(NETWORKS, &settings.networks),
            discos: ids(DISCOS, &settings.discos),
            cables: ids(CABLES, &settings.cables),
            ident: settings.ident,
            customer_phone: settings
                .customer_phone
                .clone()
                .filter(|p| !p.trim().is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(base_url: &str, token: &str) -> SiteSettings {
        SiteSettings {
            kind: Some(KIND.into()),
            base_url: Some(base_url.into()),
            token: Some(token.into()),
            ..SiteSettings::default()
        }
    }

    #[test]
    fn each_problem_is_one_sentence_and_the_token_is_never_printed() {
        assert_eq!(
            site("https://a.example/api/", "tok-123456").problem("a"),
            None
        );
        let no_scheme = site("www.husmodata.com/api/", "t").problem("husmodata");
        assert!(no_scheme.unwrap().contains("has no scheme"));
        let no_token = site("https://x.example", " ").problem("husmodata");
        assert!(no_token.unwrap().contains("BILLPAY_HUSMODATA_TOKEN"));
        assert!(site("https://x", "t").problem("Bad-Name").is_some());
        let settings = site("https://x.example", "tok-secret-99");
        assert!(!format!("{settings:?}").contains("tok-secret-99"));
    }

    #[test]
    fn configured_ids_override_the_scripts() {
        let mut settings = site("https://x.example", "t");
        settings.networks.insert("airtel".into(), 2);
        settings.networks.insert("glo".into(), 3);
        let supplier = SmedataSupplier::from_settings("x", &settings).unwrap();
        assert_eq!(supplier.config.networks["airtel"], 2);
        assert_eq!(supplier.config.networks["mtn"], 1);
        assert_eq!(supplier.config.discos["yola-electric"], 11);
    }
}
