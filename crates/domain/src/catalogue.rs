//! The product catalogue: providers, data categories and plans, cable plans
//! and e-pin denominations. Read from TOML (`catalogue/default.toml` is the
//! shipped default), validated as a whole, looked up by the purchase rules.
//! Providers and plans carry each supplier's own codes for them
//! ([`CodesBySupplier`]), which only that supplier's adapter reads.

mod codes;

pub use codes::{CodesBySupplier, SupplierCodes};

use crate::{Kobo, Product};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Catalogue {
    #[serde(default)]
    pub providers: Vec<Provider>,
    #[serde(default)]
    pub data_categories: Vec<DataCategory>,
    #[serde(default)]
    pub data_plans: Vec<DataPlan>,
    #[serde(default)]
    pub cable_plans: Vec<CablePlan>,
    #[serde(default)]
    pub epin_denominations: Vec<EpinDenomination>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provider {
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub services: Vec<Product>,
    pub active: bool,
    /// Price of one exam pin (education providers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Kobo>,
    /// Each supplier's codes for it, when not the ones its adapter derives
    /// from the slug (`codes.<supplier>.service_id = "…"`).
    #[serde(flatten, with = "codes::flat")]
    pub codes: CodesBySupplier,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataCategory {
    pub id: String,
    pub name: String,
    pub provider: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataPlan {
    pub plan_id: String,
    pub provider: String,
    pub category: String,
    pub name: String,
    pub price: Kobo,
    pub duration: u32,
    pub active: bool,
    /// Each supplier's codes for it (`codes.<supplier>.variation_code = "…"`;
    /// without one, an adapter uses the `plan_id`).
    #[serde(flatten, with = "codes::flat")]
    pub codes: CodesBySupplier,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CablePlan {
    pub plan_id: String,
    pub provider: String,
    pub name: String,
    pub price: Kobo,
    pub duration: u32,
    pub active: bool,
    /// Each supplier's codes for it (`codes.<supplier>.variation_code = "…"`;
    /// without one, an adapter uses the `plan_id`).
    #[serde(flatten, with = "codes::flat")]
    pub codes: CodesBySupplier,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpinDenomination {
    pub provider: String,
    pub denomination: Kobo,
}

/// Why a purchase's provider or plan was refused (the contract's 422 slugs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("provider not found, inactive, or not offering this service")]
    InvalidProvider,
    #[error("plan not found, inactive, or not offered by this provider")]
    InvalidPlan,
}

const VALIDITY_WORDS: [&str; 8] = [
    "day", "week", "month", "year", "hour", "hrs", "night", "valid",
];

impl Catalogue {
    /// The catalogue shipped in the binary.
    pub fn default_toml() -> &'static str {
        include_str!("../../../catalogue/default.toml")
    }

    pub fn from_toml(text: &str) -> Result<Catalogue, String> {
        let catalogue: Catalogue = toml::from_str(text).map_err(|e| e.to_string())?;
        catalogue.validate()?;
        Ok(catalogue)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("catalogue always serialises")
    }

    /// Whole-file rules: unique ids, references that resolve, sane prices.
    pub fn validate(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for p in &self.providers {
            if !seen.insert(p.id.to_string()) || !seen.insert(p.slug.clone()) {
                return Err(format!("provider {}: duplicate id or slug", p.slug));
            }
            let slug_ok = !p.slug.is_empty()
                && p.slug
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !slug_ok {
                return Err(format!("provider {}: slug must be [a-z0-9-]", p.slug));
            }
            if p.services.contains(&Product::Education) != p.price.is_some() {
                return Err(format!(
                    "provider {}: education providers, and only they, have a price",
                    p.slug
                ));
            }
            if p.price.is_some_and(|price| price <= Kobo::ZERO) {
                return Err(format!("provider {}: price must be positive", p.slug));
            }
        }
        let offers = |slug: &str, product: Product| {
            self.providers
                .iter()
                .any(|p| p.slug == slug && p.services.contains(&product))
        };
        for c in &self.data_categories {
            if !offers(&c.provider, Product::Data) {
                return Err(format!(
                    "data category {}: provider {} does not sell data",
                    c.id, c.provider
                ));
            }
        }
        let mut plan_ids = std::collections::HashSet::new();
        for plan in &self.data_plans {
            if !self
                .data_categories
                .iter()
                .any(|c| c.id == plan.category && c.provider == plan.provider)
            {
                return Err(format!(
                    "data plan {}: unknown category {}",
                    plan.plan_id, plan.category
                ));
            }
            let lower = plan.name.to_lowercase();
            if let Some(word) = VALIDITY_WORDS.iter().find(|w| lower.contains(*w)) {
                return Err(format!(
                    "data plan {}: name mentions validity ({word}); use duration",
                    plan.plan_id
                ));
            }
            check_plan(&mut plan_ids, &plan.plan_id, plan.price, plan.duration)?;
        }
        for plan in &self.cable_plans {
            if !offers(&plan.provider, Product::Cable) {
                return Err(format!(
                    "cable plan {}: provider {} does not sell cable",
                    plan.plan_id, plan.provider
                ));
            }
            check_plan(&mut plan_ids, &plan.plan_id, plan.price, plan.duration)?;
        }
        for d in &self.epin_denominations {
            if !offers(&d.provider, Product::Epin) || d.denomination <= Kobo::ZERO {
                return Err(format!(
                    "e-pin denomination {} of {}: invalid",
                    d.denomination, d.provider
                ));
            }
        }
        Ok(())
    }

    /// A provider by UUID or slug, active or not.
    pub fn provider(&self, id_or_slug: &str) -> Option<&Provider> {
        self.providers
            .iter()
            .find(|p| p.slug == id_or_slug || p.id.to_string() == id_or_slug.to_lowercase())
    }

    /// An active provider offering `product`, or `InvalidProvider`.
    pub fn provider_for(
        &self,
        id_or_slug: &str,
        product: Product,
    ) -> Result<&Provider, LookupError> {
        self.provider(id_or_slug)
            .filter(|p| p.active && p.services.contains(&product))
            .ok_or(LookupError::InvalidProvider)
    }

    pub fn data_plan(&self, provider: &Provider, plan_id: &str) -> Result<&DataPlan, LookupError> {
        self.data_plans
            .iter()
            .find(|p| p.plan_id == plan_id && p.provider == provider.slug && p.active)
            .ok_or(LookupError::InvalidPlan)
    }

    pub fn cable_plan(
        &self,
        provider: &Provider,
        plan_id: &str,
    ) -> Result<&CablePlan, LookupError> {
        self.cable_plans
            .iter()
            .find(|p| p.plan_id == plan_id && p.provider == provider.slug && p.active)
            .ok_or(LookupError::InvalidPlan)
    }

    /// The active bouquet of `provider` that a supplier's verification
    /// names as a subscriber's bouquet now: by code first (`codes` in the
    /// supplier's order; a plan's id, or its code at any supplier), else by
    /// name (the longest plan name that `name` starts with, case and spacing
    /// aside: "DStv Compact N19000 + ExtraView" is DStv Compact, not Padi).
    pub fn current_cable_plan(
        &self,
        provider: &str,
        codes: &[String],
        name: &str,
    ) -> Option<&CablePlan> {
        let plans = || {
            self.cable_plans
                .iter()
                .filter(move |p| p.active && p.provider == provider)
        };
        let by_code = codes.iter().find_map(|code| {
            plans().find(|p| p.plan_id.eq_ignore_ascii_case(code) || p.codes.has_code(code))
        });
        let words = |text: &str| {
            text.to_lowercase()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let said = words(name);
        by_code.or_else(|| {
            plans()
                .filter(|p| {
                    let plan = words(&p.name);
                    said == plan || said.starts_with(&format!("{plan} "))
                })
                .max_by_key(|p| p.name.len())
        })
    }

    pub fn epin_denomination(
        &self,
        provider: &Provider,
        denomination: Kobo,
    ) -> Option<&EpinDenomination> {
        self.epin_denominations
            .iter()
            .find(|d| d.provider == provider.slug && d.denomination == denomination)
    }

    /// A data plan's type as its category names it ("SME", "Gifting",
    /// "Corporate Gifting"); the category's id when the catalogue has no name.
    pub fn data_plan_type<'a>(&'a self, plan: &'a DataPlan) -> &'a str {
        self.data_categories
            .iter()
            .find(|c| c.id == plan.category && c.provider == plan.provider)
            .map_or(plan.category.as_str(), |c| c.name.as_str())
    }

    /// Where a price rule applies, as a person reads it: "data", "data · MTN",
    /// "data · MTN Nigeria · MTN 1GB (SME, 7 days)", "epin · MTN · ₦200"; a slug or
    /// plan id the catalogue no longer has is shown as stored.
    pub fn scope_label(&self, scope: &crate::pricing::Scope) -> String {
        let mut label = scope.product.to_string();
        let Some(slug) = &scope.provider else {
            return label;
        };
        let provider = self
            .provider(slug)
            .map_or(slug.as_str(), |p| p.name.as_str());
        label.push_str(" · ");
        label.push_str(provider);
        if let Some(plan) = &scope.plan {
            let data = self
                .data_plans
                .iter()
                .find(|p| &p.provider == slug && &p.plan_id == plan)
                .map(|p| {
                    format!(
                        "{} ({}, {} days)",
                        p.name,
                        self.data_plan_type(p),
                        p.duration
                    )
                });
            let cable = || {
                self.cable_plans
                    .iter()
                    .find(|p| &p.provider == slug && &p.plan_id == plan)
                    .map(|p| p.name.clone())
            };
            let named = match scope.product {
                Product::Epin => format!("₦{plan}"),
                _ => data.or_else(cable).unwrap_or_else(|| plan.clone()),
            };
            label.push_str(" · ");
            label.push_str(&named);
        }
        label
    }

    /// `supplier`'s codes for `provider` and, if given, one of its data or
    /// cable plans: the provider's codes, with the plan's added over them.
    pub fn supplier_codes(
        &self,
        supplier: &str,
        provider: &str,
        plan_id: Option<&str>,
    ) -> SupplierCodes {
        let mut codes = self
            .provider(provider)
            .map(|p| p.codes.of(supplier))
            .unwrap_or_default();
        let plan_codes = plan_id.and_then(|id| {
            let data = self
                .data_plans
                .iter()
                .map(|p| (&p.provider, &p.plan_id, &p.codes));
            let cable = self
                .cable_plans
                .iter()
                .map(|p| (&p.provider, &p.plan_id, &p.codes));
            data.chain(cable)
                .find(|(p, plan, _)| *p == provider && *plan == id)
                .map(|(_, _, codes)| codes.of(supplier))
        });
        codes.extend(plan_codes.unwrap_or_default());
        codes
    }

    /// Enables or disables a provider (by UUID or slug) or a plan (by plan_id).
    /// Returns a description of what changed, or None when nothing matched.
    pub fn set_active(&mut self, target: &str, active: bool) -> Option<String> {
        if let Some(p) = self
            .providers
            .iter_mut()
            .find(|p| p.slug == target || p.id.to_string() == target)
        {
            p.active = active;
            return Some(format!("provider {}", p.slug));
        }
        if let Some(p) = self.data_plans.iter_mut().find(|p| p.plan_id == target) {
            p.active = active;
            return Some(format!("data plan {}", p.plan_id));
        }
        if let Some(p) = self.cable_plans.iter_mut().find(|p| p.plan_id == target) {
            p.active = active;
            return Some(format!("cable plan {}", p.plan_id));
        }
        None
    }
}

fn check_plan(
    seen: &mut std::collections::HashSet<String>,
    plan_id: &str,
    price: Kobo,
    duration: u32,
) -> Result<(), String> {
    if !seen.insert(plan_id.to_owned()) {
        return Err(format!("plan {plan_id}: duplicate plan_id"));
    }
    if price <= Kobo::ZERO || duration == 0 {
        return Err(format!(
            "plan {plan_id}: price and duration must be positive"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verified_bouquet_is_found_by_code_then_by_name() {
        let catalogue = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        let found = |codes: &[&str], name: &str| {
            let codes: Vec<String> = codes.iter().map(|c| c.to_string()).collect();
            catalogue
                .current_cable_plan("dstv", &codes, name)
                .map(|p| p.plan_id.as_str())
        };
        assert_eq!(found(&["dstv-yanga"], "whatever"), Some("dstv-yanga"));
        // another supplier's code (ClubKonnect's dstv79 is Compact)
        assert_eq!(found(&["DSTV79"], ""), Some("dstv-compact"));
        // an add-on's code is no bouquet: the name decides
        assert_eq!(
            found(&["extraview"], "DStv  Compact Plus N30000 + ExtraView"),
            Some("dstv-compact-plus")
        );
        assert_eq!(found(&[], "dstv compact"), Some("dstv-compact"));
        assert_eq!(found(&[], "DStv Compactness"), None);
        assert_eq!(found(&[], "GOtv Jolli"), None, "another provider's");
    }

    #[test]
    fn default_catalogue_is_valid_and_complete() {
        let c = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        let count = |kind: &str| c.providers.iter().filter(|p| p.kind == kind).count();
        assert_eq!(count("telco"), 4);
        assert_eq!(count("cable"), 4);
        assert_eq!(count("electricity"), 12);
        assert_eq!(count("education"), 4);
        assert_eq!(count("betting"), 8);
        let mtn = c.provider_for("mtn", Product::Data).unwrap();
        assert_eq!(
            c.provider_for(&mtn.id.to_string(), Product::Data)
                .unwrap()
                .slug,
            "mtn"
        );
        assert_eq!(
            c.provider_for("mtn", Product::Cable),
            Err(LookupError::InvalidProvider)
        );
        assert!(c.data_plan(mtn, "mtn-sme-1gb").is_ok());
        let dstv = c.provider("dstv").unwrap();
        assert_eq!(
            c.data_plan(dstv, "mtn-sme-1gb"),
            Err(LookupError::InvalidPlan)
        );
    }

    #[test]
    fn round_trips_through_toml() {
        let c = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        assert_eq!(Catalogue::from_toml(&c.to_toml()).unwrap(), c);
    }

    #[test]
    fn refuses_broken_files() {
        let mut c = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        c.data_plans[0].name = "MTN 1GB 30 Days".into();
        assert!(c.validate().unwrap_err().contains("validity"));
        let mut c = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        c.data_plans[0].category = "nope".into();
        assert!(c.validate().is_err());
        assert!(Catalogue::from_toml("[[providers]]\nslug = 1").is_err());
    }

    const WITH_CODES: &str = r#"
[[providers]]
id = "6cb0f555-921c-4533-96c4-8a84af46714b"
slug = "9mobile"
name = "9mobile"
type = "telco"
services = ["airtime", "data"]
active = true
acme_service_id = "etisalat"

[[data_categories]]
id = "sme"
name = "SME"
provider = "9mobile"

[[data_plans]]
plan_id = "9mobile-1gb"
provider = "9mobile"
category = "sme"
name = "9mobile 1GB"
price = 600.0
duration = 7
active = true
acme_variation_code = "eti-1gb"
codes = { other = { plan = "9M1" } }
"#;

    #[test]
    fn supplier_codes_are_read_in_both_forms_and_written_in_the_new_one() {
        let c = Catalogue::from_toml(WITH_CODES).unwrap();
        let expected: SupplierCodes = [("service_id", "etisalat"), ("variation_code", "eti-1gb")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into();
        assert_eq!(
            c.supplier_codes("acme", "9mobile", Some("9mobile-1gb")),
            expected
        );
        assert_eq!(
            c.supplier_codes("other", "9mobile", Some("9mobile-1gb"))["plan"],
            "9M1"
        );
        assert_eq!(c.supplier_codes("acme", "9mobile", None).len(), 1);
        assert!(c.supplier_codes("nobody", "9mobile", None).is_empty());
        // Written back in the new form only, through TOML and JSON alike.
        let toml = c.to_toml();
        assert!(!toml.contains("acme_"), "{toml}");
        assert_eq!(Catalogue::from_toml(&toml).unwrap(), c);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Catalogue>(&json).unwrap(), c);
        // A catalogue without codes writes none.
        let mut plain = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        plain
            .providers
            .iter_mut()
            .for_each(|p| p.codes = Default::default());
        plain
            .data_plans
            .iter_mut()
            .for_each(|p| p.codes = Default::default());
        plain
            .cable_plans
            .iter_mut()
            .for_each(|p| p.codes = Default::default());
        assert!(!serde_json::to_string(&plain).unwrap().contains("codes"));
        // The default catalogue names ClubKonnect's codes.
        let default = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        assert_eq!(
            default.supplier_codes("clubkonnect", "glo", None)["network"],
            "02"
        );
        assert_eq!(
            default.supplier_codes("clubkonnect", "mtn", Some("mtn-sme-1gb"))["plan"],
            "1000.0"
        );
    }

    #[test]
    fn disabling_takes_a_provider_off_sale() {
        let mut c = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        assert_eq!(c.set_active("glo", false).as_deref(), Some("provider glo"));
        assert_eq!(
            c.provider_for("glo", Product::Airtime),
            Err(LookupError::InvalidProvider)
        );
        assert!(c.set_active("no-such-thing", false).is_none());
    }
}
