//! The money audit: every invariant of `billpay_store::audit` checked over
//! the whole database (`billpay audit`, the console's Audit page). A read:
//! any operator may run it.

use crate::{Actor, OpsResult, Permission};
use billpay_store::Store;
use billpay_store::audit::CheckOutcome;

/// Each check with the rows that break it (none: passed).
pub async fn run(store: &dyn Store, actor: &Actor) -> OpsResult<Vec<CheckOutcome>> {
    actor.require(Permission::Read)?;
    let outcomes = store.audit().await?;
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    tracing::info!(%actor, checks = outcomes.len(), failed, "money audit run");
    Ok(outcomes)
}
