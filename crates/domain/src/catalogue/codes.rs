//! Each supplier's own codes for a provider or plan (its service id, its
//! plan's code…), kept apart per supplier so that adding a supplier adds a
//! key here, never a field to the catalogue:
//!
//! ```toml
//! [[data_plans]]
//! plan_id = "mtn-1gb"
//! codes = { acme = { variation_code = "MTN-1GB-SME" } }
//! ```
//!
//! Catalogues written before this form named one supplier's codes as flat
//! keys, `<supplier>_service_id` and `<supplier>_variation_code`; they are
//! still read, into the same map (and written back in the new form).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// One supplier's codes for one provider or plan: code name → value.
pub type SupplierCodes = BTreeMap<String, String>;

/// Every supplier's codes for one provider or plan, by supplier name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CodesBySupplier(BTreeMap<String, SupplierCodes>);

/// The code names the flat form knew (`<supplier>_<code>`).
const FLAT_CODE_NAMES: [&str; 2] = ["service_id", "variation_code"];

impl CodesBySupplier {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The codes `supplier` has here (empty when the catalogue names none).
    pub fn of(&self, supplier: &str) -> SupplierCodes {
        self.0.get(supplier).cloned().unwrap_or_default()
    }

    /// Whether any supplier knows it by `code` (case aside).
    pub fn has_code(&self, code: &str) -> bool {
        self.0
            .values()
            .flat_map(|codes| codes.values())
            .any(|value| value.eq_ignore_ascii_case(code))
    }

    /// Sets one code of one supplier.
    pub fn set(&mut self, supplier: &str, name: &str, value: &str) {
        self.0
            .entry(supplier.to_owned())
            .or_default()
            .insert(name.to_owned(), value.to_owned());
    }

    /// A flat `<supplier>_<code>` key of the old form, split.
    fn flat_key(key: &str) -> Option<(&str, &str)> {
        FLAT_CODE_NAMES.iter().find_map(|name| {
            let supplier = key.strip_suffix(name)?.strip_suffix('_')?;
            (!supplier.is_empty()).then_some((supplier, *name))
        })
    }
}

/// `#[serde(flatten, with = "codes::flat")]`: the field is read from the
/// entries its struct did not claim (`codes`, and flat keys of the old form)
/// and written as one `codes` entry, or none when empty.
pub(crate) mod flat {
    use super::*;
    use serde::ser::SerializeMap;

    pub fn serialize<S: Serializer>(codes: &CodesBySupplier, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        if !codes.is_empty() {
            map.serialize_entry("codes", codes)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CodesBySupplier, D::Error> {
        // Other unclaimed keys are ignored, as they were before.
        let rest = BTreeMap::<String, serde_json::Value>::deserialize(d)?;
        let mut codes = match rest.get("codes") {
            Some(table) => CodesBySupplier::deserialize(table).map_err(serde::de::Error::custom)?,
            None => CodesBySupplier::default(),
        };
        for (key, value) in &rest {
            if let (Some((supplier, name)), Some(value)) =
                (CodesBySupplier::flat_key(key), value.as_str())
            {
                codes.set(supplier, name, value);
            }
        }
        Ok(codes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_keys_name_a_supplier_and_a_code() {
        assert_eq!(
            CodesBySupplier::flat_key("acme_service_id"),
            Some(("acme", "service_id"))
        );
        assert_eq!(
            CodesBySupplier::flat_key("acme_variation_code"),
            Some(("acme", "variation_code"))
        );
        assert_eq!(CodesBySupplier::flat_key("service_id"), None);
        assert_eq!(CodesBySupplier::flat_key("_service_id"), None);
        assert_eq!(CodesBySupplier::flat_key("plan_id"), None);
    }
}
