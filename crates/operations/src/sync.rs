//! The catalogue sync with a supplier: compares the data and cable plans of
//! the catalogue with the plans a supplier lists (`Supplier::plans`);
//! applying takes the supplier's prices and takes off sale the plans it no
//! longer sells. Plans new at the supplier are listed for the operator to
//! add (their category and duration are ours to decide). A plan is matched
//! by its code there (`Supplier::plan_code`). A supplier whose list gives
//! what plans cost us (an SME-data site, `Supplier::lists_costs`) is read
//! otherwise: a data plan of ours without its code there is matched to a
//! plan of its list by type, size and validity (`SupplierPlan::traits`), and
//! applying records the code and the expected cost (`codes.<name>.plan`,
//! `codes.<name>.cost`), never our price; a plan it does not list is only
//! unmatched (not routed there), never taken off sale. `billpay catalogue
//! sync` and the console's Prices page both call [`sync`].

use crate::{Actor, OpsError, OpsResult, Permission};
use billpay_domain::catalogue::Catalogue;
use billpay_domain::supplier_health::EXPECTED_COST;
use billpay_domain::{Kobo, Product};
use billpay_store::Store;
use billpay_store::work;
use billpay_supplier::{PlanTraits, Supplier, SupplierPlan};
use serde::Serialize;

/// `theirs` is written under the supplier's name (`"acme": 650.0`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Difference {
    /// The supplier sells it at another price.
    Price {
        provider: String,
        plan_id: String,
        ours: Kobo,
        theirs: Kobo,
    },
    /// On sale here, not sold by the supplier.
    Missing { provider: String, plan_id: String },
    /// Sold by the supplier, not in the catalogue.
    New {
        provider: String,
        variation_code: String,
        name: String,
        price: Kobo,
    },
    /// (A supplier that lists its costs.) A plan of ours without its code
    /// there is this plan of its list: same type, size and validity.
    /// Applied: its code and expected cost recorded.
    Matched {
        provider: String,
        plan_id: String,
        code: String,
        name: String,
        cost: Kobo,
    },
    /// (Likewise.) A mapped plan's listed cost is not the one recorded.
    /// Applied: the listed one recorded.
    Cost {
        provider: String,
        plan_id: String,
        expected: Option<Kobo>,
        theirs: Kobo,
    },
    /// (Likewise.) On sale here, matched to no plan of its list: not sold
    /// there (never routed there); nothing changes.
    Unmatched { provider: String, plan_id: String },
}

/// One of our plans as the sync sees it.
struct Plan<'a> {
    plan_id: &'a str,
    code: String,
    price: Kobo,
    active: bool,
    /// Whether the catalogue names its code at this supplier.
    mapped: bool,
    /// The expected cost recorded there (`codes.<name>.cost`).
    expected: Option<Kobo>,
    /// A data plan's type, size and validity.
    traits: Option<PlanTraits>,
}

fn plans<'a>(catalogue: &'a Catalogue, supplier: &dyn Supplier, provider: &str) -> Vec<Plan<'a>> {
    let data = catalogue.data_plans.iter().map(|p| {
        let size = PlanTraits::megabytes(&p.name).or_else(|| PlanTraits::megabytes(&p.plan_id));
        let traits = size.map(|megabytes| PlanTraits {
            category: PlanTraits::category(&p.category),
            megabytes,
            days: Some(p.duration),
        });
        (&p.provider, &p.plan_id, p.price, p.active, traits)
    });
    let cable = catalogue
        .cable_plans
        .iter()
        .map(|p| (&p.provider, &p.plan_id, p.price, p.active, None));
    data.chain(cable)
        .filter(|plan| plan.0 == provider)
        .map(|(_, plan_id, price, active, traits)| {
            let codes = catalogue.supplier_codes(supplier.name(), provider, Some(plan_id));
            Plan {
                plan_id,
                code: supplier.plan_code(plan_id, &codes),
                price,
                active,
                mapped: codes.contains_key("plan"),
                expected: codes
                    .get(EXPECTED_COST)
                    .and_then(|c| Kobo::parse_naira_half_up(c).ok()),
                traits,
            }
        })
        .collect()
}

/// The differences for one provider.
pub fn compare(
    catalogue: &Catalogue,
    supplier: &dyn Supplier,
    provider: &str,
    sold: &[SupplierPlan],
) -> Vec<Difference> {
    let ours = plans(catalogue, supplier, provider);
    let costs = supplier.lists_costs();
    let mut out = Vec::new();
    let mut matched: Vec<&str> = Vec::new();
    for offer in sold {
        let by_code = ours.iter().find(|p| p.code == offer.code);
        // Listed costs: an unmapped plan of ours of the same type, size and validity.
        let by_traits = || {
            let theirs = offer.traits.as_ref()?;
            ours.iter().find(|p| {
                !p.mapped
                    && !matched.contains(&p.plan_id)
                    && theirs.days.is_some()
                    && p.traits.as_ref() == Some(theirs)
            })
        };
        match (by_code, costs) {
            (Some(plan), true) if plan.expected != Some(offer.price) => {
                out.push(Difference::Cost {
                    provider: provider.into(),
                    plan_id: plan.plan_id.into(),
                    expected: plan.expected,
                    theirs: offer.price,
                })
            }
            (Some(plan), false) if plan.price != offer.price => out.push(Difference::Price {
                provider: provider.into(),
                plan_id: plan.plan_id.into(),
                ours: plan.price,
                theirs: offer.price,
            }),
            (Some(_), _) => {}
            (None, true) if let Some(plan) = by_traits() => {
                matched.push(plan.plan_id);
                out.push(Difference::Matched {
                    provider: provider.into(),
                    plan_id: plan.plan_id.into(),
                    code: offer.code.clone(),
                    name: offer.name.clone(),
                    cost: offer.price,
                });
            }
            (None, _) => out.push(Difference::New {
                provider: provider.into(),
                variation_code: offer.code.clone(),
                name: offer.name.clone(),
                price: offer.price,
            }),
        }
    }
    for plan in ours.iter().filter(|p| p.active) {
        if sold.iter().any(|offer| offer.code == plan.code) || matched.contains(&plan.plan_id) {
            continue;
        }
        let (provider, plan_id) = (provider.into(), plan.plan_id.into());
        out.push(match costs {
            true => Difference::Unmatched { provider, plan_id },
            false => Difference::Missing { provider, plan_id },
        });
    }
    out
}

/// The catalogue with the supplier's prices and without what it stopped
/// selling; for one that lists its costs, with its codes and expected costs.
pub fn apply(catalogue: &mut Catalogue, supplier: &str, differences: &[Difference]) {
    for difference in differences {
        match difference {
            Difference::Price {
                provider,
                plan_id,
                theirs,
                ..
            } => edit_plan(catalogue, provider, plan_id, |price, _| *price = *theirs),
            Difference::Missing { provider, plan_id } => {
                edit_plan(catalogue, provider, plan_id, |_, active| *active = false)
            }
            Difference::Matched {
                provider,
                plan_id,
                code,
                cost,
                ..
            } => {
                set_code(catalogue, supplier, provider, plan_id, "plan", code);
                set_code(
                    catalogue,
                    supplier,
                    provider,
                    plan_id,
                    EXPECTED_COST,
                    &cost.to_string(),
                );
            }
            Difference::Cost {
                provider,
                plan_id,
                theirs,
                ..
            } => set_code(
                catalogue,
                supplier,
                provider,
                plan_id,
                EXPECTED_COST,
                &theirs.to_string(),
            ),
            Difference::New { .. } | Difference::Unmatched { .. } => {}
        }
    }
}

/// Sets a data plan's code at `supplier` (`codes.<supplier>.<name>`).
fn set_code(
    catalogue: &mut Catalogue,
    supplier: &str,
    provider: &str,
    plan_id: &str,
    name: &str,
    value: &str,
) {
    for plan in catalogue
        .data_plans
        .iter_mut()
        .filter(|p| p.provider == provider && p.plan_id == plan_id)
    {
        plan.codes.set(supplier, name, value);
    }
}

/// Edits the price and on-sale flag of a data or cable plan.
fn edit_plan(
    catalogue: &mut Catalogue,
    provider: &str,
    plan_id: &str,
    edit: impl Fn(&mut Kobo, &mut bool),
) {
    let data = catalogue
        .data_plans
        .iter_mut()
        .map(|p| (&p.provider, &p.plan_id, &mut p.price, &mut p.active));
    let cable = catalogue
        .cable_plans
        .iter_mut()
        .map(|p| (&p.provider, &p.plan_id, &mut p.price, &mut p.active));
    for (_, _, price, active) in data
        .chain(cable)
        .filter(|p| p.0 == provider && p.1 == plan_id)
    {
        edit(price, active);
    }
}

/// What a sync found, and whether it changed the catalogue.
#[derive(Debug, Clone)]
pub struct Synced {
    pub differences: Vec<Difference>,
    pub applied: bool,
}

/// Compares the catalogue with `supplier`'s plan lists; with `apply_changes`
/// (an owner or the CLI only) takes its prices and disables the plans it no
/// longer sells, logged as `catalogue.sync`.
pub async fn sync(
    store: &dyn Store,
    actor: Actor,
    supplier: &dyn Supplier,
    apply_changes: bool,
) -> OpsResult<Synced> {
    let needed = if apply_changes {
        Permission::ChangeCatalogue
    } else {
        Permission::Read
    };
    actor.require(needed)?;
    let (_, mut catalogue) = store.catalogue().await?;
    let differences = differences(&catalogue, supplier).await?;
    let applied = apply_changes && !differences.is_empty();
    if applied {
        apply(&mut catalogue, supplier.name(), &differences);
        crate::pricing::check_catalogue_floor(store, &catalogue).await?;
        let mut log = actor.log("catalogue.sync", supplier.name());
        log.after = Some(format!("{} differences applied", differences.len()));
        store
            .write((catalogue.clone(), log), |tx, (catalogue, log)| {
                Box::pin(work::replace_catalogue_logged(tx, catalogue, log))
            })
            .await?;
        tracing::info!(%actor, supplier = supplier.name(), count = differences.len(), "catalogue synced");
    }
    Ok(Synced {
        differences,
        applied,
    })
}

/// The differences with every plan list `supplier` publishes for the
/// catalogue's data and cable providers; refused if it publishes none.
async fn differences(catalogue: &Catalogue, supplier: &dyn Supplier) -> OpsResult<Vec<Difference>> {
    let mut differences = Vec::new();
    let mut listed = false;
    for provider in &catalogue.providers {
        for product in [Product::Data, Product::Cable] {
            if !provider.services.contains(&product) {
                continue;
            }
            let codes = catalogue.supplier_codes(supplier.name(), &provider.slug, None);
            let Some(sold) = supplier.plans(product, &provider.slug, &codes).await else {
                continue;
            };
            listed = true;
            let sold = sold.map_err(|e| {
                OpsError::Refused(format!("{} did not list its plans: {e}", supplier.name()))
            })?;
            differences.extend(compare(catalogue, supplier, &provider.slug, &sold));
        }
    }
    if !listed {
        return Err(OpsError::Refused(format!(
            "{} publishes no plan list for the catalogue's data and cable providers",
            supplier.name()
        )));
    }
    Ok(differences)
}
