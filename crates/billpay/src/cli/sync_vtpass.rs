//! `billpay catalogue sync-vtpass [--apply]`: compares the data and cable
//! plans of the catalogue with what VTpass sells (`/api/service-variations`)
//! and prints the differences; `--apply` takes VTpass's prices and takes off
//! sale the plans VTpass no longer sells. Plans new at VTpass are listed for
//! the operator to add (their category and duration are ours to decide).

use super::Output;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::{Kobo, Product};
use billpay_store::SharedStore;
use billpay_supplier::vtpass::{self, Variation};
use serde::Serialize;
use serde_json::json;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Difference {
    /// VTpass sells it at another price.
    Price {
        provider: String,
        plan_id: String,
        ours: Kobo,
        vtpass: Kobo,
    },
    /// On sale here, not sold by VTpass.
    Missing { provider: String, plan_id: String },
    /// Sold by VTpass, not in the catalogue.
    New {
        provider: String,
        variation_code: String,
        name: String,
        price: Kobo,
    },
}

/// One of our plans as the sync sees it.
struct Plan<'a> {
    plan_id: &'a str,
    code: &'a str,
    price: Kobo,
    active: bool,
}

fn plans<'a>(catalogue: &'a Catalogue, provider: &str) -> Vec<Plan<'a>> {
    let data = catalogue.data_plans.iter().map(|p| {
        (
            &p.provider,
            &p.plan_id,
            &p.vtpass_variation_code,
            p.price,
            p.active,
        )
    });
    let cable = catalogue.cable_plans.iter().map(|p| {
        (
            &p.provider,
            &p.plan_id,
            &p.vtpass_variation_code,
            p.price,
            p.active,
        )
    });
    data.chain(cable)
        .filter(|plan| plan.0 == provider)
        .map(|(_, plan_id, code, price, active)| Plan {
            plan_id,
            code: code.as_deref().unwrap_or(plan_id),
            price,
            active,
        })
        .collect()
}

/// The differences for one provider.
pub fn compare(catalogue: &Catalogue, provider: &str, sold: &[Variation]) -> Vec<Difference> {
    let ours = plans(catalogue, provider);
    let mut out = Vec::new();
    for variation in sold {
        match ours.iter().find(|p| p.code == variation.code) {
            Some(plan) if plan.price != variation.price => out.push(Difference::Price {
                provider: provider.into(),
                plan_id: plan.plan_id.into(),
                ours: plan.price,
                vtpass: variation.price,
            }),
            Some(_) => {}
            None => out.push(Difference::New {
                provider: provider.into(),
                variation_code: variation.code.clone(),
                name: variation.name.clone(),
                price: variation.price,
            }),
        }
    }
    for plan in ours.iter().filter(|p| p.active) {
        if !sold.iter().any(|v| v.code == plan.code) {
            out.push(Difference::Missing {
                provider: provider.into(),
                plan_id: plan.plan_id.into(),
            });
        }
    }
    out
}

/// The catalogue with VTpass's prices and without what VTpass stopped selling.
pub fn apply(catalogue: &mut Catalogue, differences: &[Difference]) {
    for difference in differences {
        match difference {
            Difference::Price {
                provider,
                plan_id,
                vtpass,
                ..
            } => edit_plan(catalogue, provider, plan_id, |price, _| *price = *vtpass),
            Difference::Missing { provider, plan_id } => {
                edit_plan(catalogue, provider, plan_id, |_, active| *active = false)
            }
            Difference::New { .. } => {}
        }
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

pub async fn run(
    apply_changes: bool,
    settings: &super::Settings,
    store: &SharedStore,
    out: &Output,
) -> anyhow::Result<()> {
    let supplier = super::supplier::vtpass(settings)?;
    let (_, mut catalogue) = store.catalogue().await?;
    let mut differences = Vec::new();
    for provider in &catalogue.providers {
        for product in [Product::Data, Product::Cable] {
            if !provider.services.contains(&product) {
                continue;
            }
            let named = provider.vtpass_service_id.as_deref();
            let Some(service) = vtpass::service_for(product, &provider.slug, named) else {
                continue;
            };
            let sold = supplier.variations(&service).await?;
            differences.extend(compare(&catalogue, &provider.slug, &sold));
        }
    }
    if apply_changes && !differences.is_empty() {
        apply(&mut catalogue, &differences);
        store.replace_catalogue(&catalogue).await?;
    }
    let text = differences
        .iter()
        .map(describe)
        .collect::<Vec<_>>()
        .join("\n");
    let footer = match (differences.is_empty(), apply_changes) {
        (true, _) => "The catalogue matches VTpass".to_owned(),
        (false, true) => "Applied: prices taken, missing plans disabled; add new plans to the catalogue TOML yourself".to_owned(),
        (false, false) => "Nothing changed: run again with --apply to take VTpass's prices and disable missing plans".to_owned(),
    };
    out.emit(
        json!({ "differences": differences, "applied": apply_changes && !differences.is_empty() }),
        format!("{text}\n{footer}").trim_start().to_owned(),
    );
    Ok(())
}

fn describe(difference: &Difference) -> String {
    match difference {
        Difference::Price {
            provider,
            plan_id,
            ours,
            vtpass,
        } => {
            format!("price    {provider} {plan_id}: ours {ours}, VTpass {vtpass}")
        }
        Difference::Missing { provider, plan_id } => {
            format!("missing  {provider} {plan_id}: not sold by VTpass")
        }
        Difference::New {
            provider,
            variation_code,
            name,
            price,
        } => {
            format!("new      {provider} {variation_code} \"{name}\" at {price}")
        }
    }
}
