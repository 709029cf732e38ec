//! Where settings come from, as figment providers: the TOML file, the
//! `BILLPAY_*` environment and the command line's flags.
//!
//! All three name a setting the same flat way (`vtpass_api_key`, i.e.
//! `BILLPAY_VTPASS_API_KEY` and `--vtpass-api-key`); a name that starts with
//! a section's name lands in that section (`vtpass.api_key`). The file may
//! also use the section itself (`[vtpass]` with `api_key = …`), its preferred
//! spelling; giving one setting both ways is refused.

use anyhow::Context;
use figment::value::{Dict, Map, Value};
use figment::{Metadata, Profile, Provider};
use serde::de::DeserializeOwned;
use std::path::Path;

/// The sections: the sandbox's, the funding fee's, sign-up's and the brand's (fields of `Settings`)
/// and each registered supplier's and gateway's (named like it, fields of
/// `SupplierSections` and `GatewaySections`, which their registries hold),
/// and the notification channels' (`[email]`, each provider's).
fn sections() -> impl Iterator<Item = &'static str> {
    let suppliers = billpay_supplier::registry::SUPPLIERS.iter().map(|r| r.name);
    let gateways = billpay_funding::registry::GATEWAYS.iter().map(|g| g.name);
    let sandbox = billpay_supplier::registry::SANDBOX;
    std::iter::once(sandbox)
        .chain(suppliers)
        .chain(gateways)
        .chain(["funding", "signup", "brand"])
        .chain(billpay_notify::registry::section_names())
}

const ENV_PREFIX: &str = "BILLPAY_";

/// One layer of settings, with the metadata figment names it by in errors
/// (`for key "BILLPAY_SANDBOX_LATENCY_MS" in environment`).
pub struct Layer {
    metadata: Metadata,
    dict: Dict,
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        self.metadata.clone()
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Ok(Profile::Default.collect(self.dict.clone()))
    }
}

impl Layer {
    /// The TOML file at `path`.
    pub fn file(path: &Path) -> anyhow::Result<Layer> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let invalid = || format!("invalid config file {}", path.display());
        let table: toml::Table = toml::from_str(&text).with_context(invalid)?;
        let table = Value::serialize(table).map_err(|e| anyhow::anyhow!("{}: {e}", invalid()))?;
        let mut entries = Vec::new();
        for (key, value) in table.into_dict().unwrap_or_default() {
            let value = match (key.as_str(), value) {
                ("suppliers", Value::Dict(tag, sites)) => {
                    let (registered, sites) = registered_in_suppliers(sites)
                        .map_err(|e| anyhow::anyhow!("config file {}: {e}", path.display()))?;
                    entries.extend(registered);
                    Value::Dict(tag, sites)
                }
                (_, value) => value,
            };
            match value {
                Value::Dict(_, section) if sections().any(|s| s == key) => entries.extend(
                    section
                        .into_iter()
                        .map(|(name, v)| (format!("{key}_{name}"), v)),
                ),
                value => entries.push((key, value)),
            }
        }
        let dict = nest(entries).map_err(|GivenTwice(key)| {
            anyhow::anyhow!(
                "config file {}: `{key}` is given twice (flat and in its section)",
                path.display()
            )
        })?;
        let metadata = Metadata::from("config file", path).interpolater(|_, keys| keys.join("."));
        Ok(Layer { metadata, dict })
    }

    /// The `BILLPAY_*` variables (upper case), each value a string: it is
    /// read as a number or a boolean only where the setting is one, so an
    /// all-digit key stays the string it is.
    pub fn environment() -> anyhow::Result<Layer> {
        let entries = std::env::vars_os().filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            let key = name.strip_prefix(ENV_PREFIX)?;
            let value = value.into_string().ok()?;
            (key == key.to_uppercase()).then(|| (key.to_lowercase(), Value::from(value)))
        });
        let dict = nest(entries).map_err(|GivenTwice(key)| {
            anyhow::anyhow!("{ENV_PREFIX}{} is not a setting", key.to_uppercase())
        })?;
        let metadata = Metadata::named("the environment")
            .interpolater(|_, keys| format!("{ENV_PREFIX}{}", keys.join("_").to_uppercase()));
        Ok(Layer { metadata, dict })
    }

    /// The flags given on the command line: `sets` are clap's parsed
    /// arguments serialized (a flag not given is `None`, and left out).
    pub fn flags(sets: Vec<Value>) -> anyhow::Result<Layer> {
        let entries = sets
            .into_iter()
            .filter_map(|set| set.into_dict())
            .flatten()
            .filter(|(_, value)| !matches!(value, Value::Empty(..)));
        let dict =
            nest(entries).map_err(|GivenTwice(key)| anyhow::anyhow!("--{key} is given twice"))?;
        let metadata = Metadata::named("command line")
            .interpolater(|_, keys| format!("--{}", keys.join("-").replace('_', "-")));
        Ok(Layer { metadata, dict })
    }

    /// The keys of this layer that no reader takes (e.g. a typo); the
    /// settings are read by several (`ignored::<T>` of each struct read
    /// from the layers), each taking its own keys.
    pub fn unknown_keys(&self, readers: &[fn(&Value) -> Vec<String>]) -> Vec<String> {
        let value = Value::from(self.dict.clone());
        let ignored: Vec<Vec<String>> = readers.iter().map(|read| read(&value)).collect();
        // A key ignored by a reader: it, or a table holding it, is no key of its.
        let ignores = |by: &Vec<String>, key: &str| {
            by.iter().any(|i| {
                key == i
                    || key
                        .strip_prefix(i.as_str())
                        .is_some_and(|k| k.starts_with('.'))
            })
        };
        let mut unknown = Vec::new();
        for key in ignored.iter().flatten() {
            if !unknown.contains(key) && ignored.iter().all(|by| ignores(by, key)) {
                unknown.push(key.clone());
            }
        }
        unknown
    }
}

/// `[suppliers.vtpass]` with `kind = "vtpass"` (a registered supplier in the
/// `[suppliers.NAME]` form) is its `[vtpass]` section: its keys, flat
/// (`vtpass_api_key`), are returned apart; the sites stay. A registered
/// supplier's kind under another name is refused: it is one supplier.
fn registered_in_suppliers(sites: Dict) -> anyhow::Result<(Vec<(String, Value)>, Dict)> {
    let mut flat = Vec::new();
    let mut rest = Dict::new();
    for (name, site) in sites {
        let registered = billpay_supplier::registry::registration(&name).is_some();
        let kind = match &site {
            Value::Dict(_, section) => section.get("kind").and_then(Value::as_str),
            _ => None,
        };
        if let Some(kind) = kind
            && kind != name
            && billpay_supplier::registry::registration(kind).is_some()
        {
            anyhow::bail!(
                "[suppliers.{name}] has kind {kind:?}: {kind} is one supplier, configured as \
                 [suppliers.{kind}] (or [{kind}])"
            );
        }
        match site {
            Value::Dict(_, mut section)
                if registered
                    && section.get("kind").and_then(Value::as_str) == Some(name.as_str()) =>
            {
                section.remove("kind");
                flat.extend(
                    section
                        .into_iter()
                        .map(|(key, v)| (format!("{name}_{key}"), v)),
                );
            }
            other => {
                rest.insert(name, other);
            }
        }
    }
    Ok((flat, rest))
}

/// The keys of `value` that are no setting of `T`. Only the unknown keys are
/// wanted here; a value of the wrong type is reported, with its source, when
/// the layers are extracted.
pub fn ignored<T: DeserializeOwned>(value: &Value) -> Vec<String> {
    let mut unknown = Vec::new();
    let _ = serde_ignored::deserialize::<_, _, T>(value, |path| unknown.push(path.to_string()));
    unknown
}

/// A setting given twice in one layer, by its flat name.
#[derive(Debug, PartialEq)]
struct GivenTwice(String);

/// Flat names nested into their sections (`vtpass_api_key` →
/// `vtpass.api_key`); a setting given twice is refused.
fn nest(entries: impl IntoIterator<Item = (String, Value)>) -> Result<Dict, GivenTwice> {
    let mut dict = Dict::new();
    for (key, value) in entries {
        let section = sections().find_map(|s| Some((s, key.strip_prefix(s)?.strip_prefix('_')?)));
        let (slot, name) = match section {
            Some((section, name)) => {
                let entry = dict
                    .entry(section.to_owned())
                    .or_insert_with(|| Value::from(Dict::new()));
                let Value::Dict(_, inner) = entry else {
                    return Err(GivenTwice(key));
                };
                (inner, name.to_owned())
            }
            None => (&mut dict, key.clone()),
        };
        if slot.insert(name, value).is_some() {
            return Err(GivenTwice(key));
        }
    }
    Ok(dict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_names_land_in_their_section_once() {
        let entries = |names: &[&str]| {
            names
                .iter()
                .map(|n| (n.to_string(), Value::from(1)))
                .collect::<Vec<_>>()
        };
        let dict = nest(entries(&[
            "vtpass_api_key",
            "sandbox_latency_ms",
            "supplier_low_balance",
        ]))
        .unwrap();
        let value = Value::from(dict);
        assert!(value.find_ref("vtpass.api_key").is_some());
        assert!(value.find_ref("sandbox.latency_ms").is_some());
        assert!(
            value.find_ref("supplier_low_balance").is_some(),
            "not a section"
        );
        assert_eq!(
            nest(entries(&["vtpass_timeout_ms", "vtpass_timeout_ms"])),
            Err(GivenTwice("vtpass_timeout_ms".into()))
        );
    }
}
