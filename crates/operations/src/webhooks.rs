//! Webhook events: one more delivery of an event.

use crate::{Actor, OpsError, OpsResult, Permission};
use billpay_store::{Event, Store};

/// Queues an event (by event id or its purchase's reference_code) for one
/// more delivery now; answers the event.
pub async fn resend(store: &dyn Store, actor: Actor, event_or_code: &str) -> OpsResult<Event> {
    actor.require(Permission::ResendWebhooks)?;
    let event = store.event(event_or_code).await?.ok_or_else(|| {
        OpsError::NotFound(format!(
            "no webhook event with id or reference_code {event_or_code}"
        ))
    })?;
    store.requeue_event(&event.id).await?;
    let mut log = actor.log("webhook.resend", event.transaction_code.clone());
    log.after = Some(format!("event {} queued", event.id));
    store.append_log(log).await?;
    tracing::info!(%actor, event = %event.id, code = %event.transaction_code, "webhook event queued again");
    Ok(event)
}
