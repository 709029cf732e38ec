//! The catalogue: put a provider or a data/cable plan on or off sale; set a
//! plan's list price.

use crate::{Actor, OpsError, OpsResult, Permission, invalid, quoted};
use billpay_domain::Kobo;
use billpay_store::Store;
use billpay_store::work;

/// What an operator puts on or off sale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sellable {
    Provider,
    Plan,
}

impl Sellable {
    pub fn as_str(self) -> &'static str {
        match self {
            Sellable::Provider => "provider",
            Sellable::Plan => "plan",
        }
    }
}

/// Puts `target` (a provider's slug or id, or a plan's id) on sale or takes
/// it off (its purchases answer invalid_provider / invalid_plan); running
/// servers see it within a second; logged in the same transaction. Answers
/// what changed, as the store names it.
pub async fn set_on_sale(
    store: &dyn Store,
    actor: Actor,
    kind: Sellable,
    target: &str,
    on_sale: bool,
) -> OpsResult<String> {
    actor.require(Permission::ChangeCatalogue)?;
    // Slugs and plan ids are lower case in the catalogue; a person may type "MTN".
    let target = target.trim().to_lowercase();
    let target = target.as_str();
    let (_, catalogue) = store.catalogue().await?;
    let is_provider = catalogue.provider(target).is_some();
    if is_provider != (kind == Sellable::Provider) {
        return Err(OpsError::NotFound(format!(
            "no {} {target} in the catalogue",
            kind.as_str()
        )));
    }
    let mut log = actor.log(&format!("catalogue.{}", kind.as_str()), target);
    log.after = Some(if on_sale { "on sale" } else { "off sale" }.to_owned());
    let changed = store
        .write(
            (target.to_owned(), on_sale, log),
            |tx, (target, on_sale, log)| {
                Box::pin(work::set_catalogue_active_logged(tx, target, *on_sale, log))
            },
        )
        .await?;
    tracing::info!(%actor, kind = kind.as_str(), target, on_sale, "catalogue changed");
    Ok(changed)
}

/// A data or cable plan's list price set to what was typed (`5,000`,
/// `₦600.50`): the catalogue written again with it (as `billpay catalogue
/// import` writes one, validated) and logged in the same transaction
/// (`catalogue.price`, the plan id, the price before → after). Answers the
/// plan id and the prices before and after.
pub async fn set_list_price(
    store: &dyn Store,
    actor: Actor,
    plan: &str,
    price: &str,
) -> OpsResult<(String, Kobo, Kobo)> {
    actor.require(Permission::ChangeCatalogue)?;
    let price = Kobo::parse_typed_naira(price)
        .map_err(|e| invalid(&["price"], format!("{e}, not {}", quoted(price))))?;
    if price <= Kobo::ZERO {
        return Err(invalid(&["price"], "must be more than 0"));
    }
    let (_, mut catalogue) = store.catalogue().await?;
    let wanted = plan.trim().to_lowercase();
    let data = catalogue
        .data_plans
        .iter_mut()
        .find(|p| p.plan_id.to_lowercase() == wanted)
        .map(|p| (p.plan_id.clone(), &mut p.price));
    let found = match data {
        Some(found) => Some(found),
        None => catalogue
            .cable_plans
            .iter_mut()
            .find(|p| p.plan_id.to_lowercase() == wanted)
            .map(|p| (p.plan_id.clone(), &mut p.price)),
    };
    let Some((plan_id, listed)) = found else {
        return Err(OpsError::NotFound(format!(
            "no data or cable plan {} in the catalogue",
            quoted(plan)
        )));
    };
    let before = std::mem::replace(listed, price);
    catalogue.validate().map_err(OpsError::Refused)?;
    let mut log = actor.log("catalogue.price", plan_id.as_str());
    log.before = Some(before.to_string());
    log.after = Some(price.to_string());
    store
        .write((catalogue, log), |tx, (catalogue, log)| {
            Box::pin(work::replace_catalogue_logged(tx, catalogue, log))
        })
        .await?;
    tracing::info!(%actor, plan = plan_id, %before, %price, "list price set");
    Ok((plan_id, before, price))
}
