//! The brand: an owner's edits (name, colour, support contact, WhatsApp
//! number, the "powered by" credit) laid over the `[brand]` settings, on
//! every customer page and email within a second (the `BrandCache`).

use crate::{Actor, OpsResult, Permission, invalid};
use billpay_domain::brand::BrandEdits;
use billpay_store::Store;
use billpay_store::work;

/// The owner's edits now (none: the settings alone).
pub async fn edits(store: &dyn Store, actor: Actor) -> OpsResult<BrandEdits> {
    actor.require(Permission::Read)?;
    Ok(store.brand_edits().await?.1)
}

/// Stores `edits` in place of the last ones, each checked first (a refusal
/// names its field and changes nothing); logged in the same transaction
/// (`brand.set`, the document before → after).
pub async fn set(store: &dyn Store, actor: Actor, edits: BrandEdits) -> OpsResult<()> {
    actor.require(Permission::ChangeBrand)?;
    let edits = BrandEdits {
        name: edits.name.map(|n| n.trim().to_owned()),
        colour: edits.colour.map(|c| c.trim().to_owned()),
        support: edits.support.map(|s| s.trim().to_owned()),
        whatsapp: edits.whatsapp.map(|w| w.trim().to_owned()),
        credit: edits.credit,
    };
    edits.check().map_err(|(field, rule)| {
        let fields: &'static [&'static str] = match field {
            "name" => &["name"],
            "colour" => &["colour"],
            "whatsapp" => &["whatsapp"],
            _ => &["support"],
        };
        invalid(fields, rule)
    })?;
    let mut line = actor.log("brand.set", "brand");
    line.after = Some(serde_json::to_string(&edits).unwrap_or_default());
    store
        .write((edits, line), |tx, (edits, line)| {
            Box::pin(work::set_brand_logged(tx, edits, line))
        })
        .await?;
    tracing::info!(%actor, "brand changed");
    Ok(())
}
