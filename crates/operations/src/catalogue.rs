//! The catalogue: put a provider or a data/cable plan on or off sale.

use crate::{Actor, OpsError, OpsResult, Permission};
use billpay_store::Store;

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
        .set_catalogue_active_logged(target, on_sale, log)
        .await?;
    tracing::info!(%actor, kind = kind.as_str(), target, on_sale, "catalogue changed");
    Ok(changed)
}
