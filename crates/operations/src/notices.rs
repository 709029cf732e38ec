//! The notification outbox seen by operators: one more send of a notice
//! ("resend", which support may do too), and the alerts an operator chooses.

use crate::{Actor, OpsError, OpsResult, Permission};
use billpay_domain::phone::Phone;
use billpay_store::work;
use billpay_store::{AlertChannels, Store, StoreError};
use billpay_worker::alerts::ALERTS;

/// Queues a notice for one more send now, logged in the same transaction;
/// refused while a send of it is under way.
pub async fn resend(store: &dyn Store, actor: &Actor, id: &str) -> OpsResult<()> {
    actor.require(Permission::ResendNotices)?;
    let log = actor.log("notice.resend", id);
    match store
        .write((id.to_string(), log), |tx, (id, log)| {
            Box::pin(work::resend_notice(tx, id, log))
        })
        .await
    {
        Ok(true) => {}
        Ok(false) => {
            return Err(OpsError::Refused(
                "this notice is being sent right now; resend it once that attempt is recorded"
                    .into(),
            ));
        }
        Err(StoreError::NotFound(_)) => {
            return Err(OpsError::NotFound(format!("no notice with id {id}")));
        }
        Err(e) => return Err(e.into()),
    }
    tracing::info!(%actor, notice = id, "notice queued again");
    Ok(())
}

/// The alerts an operator of this role may get, each with whether it is on.
pub async fn alert_choices(
    store: &dyn Store,
    actor: &Actor,
) -> OpsResult<Vec<(billpay_worker::alerts::AlertKind, bool)>> {
    let (id, role) = operator_of(actor)?;
    let off = store.alert_opt_outs(id).await?;
    Ok(ALERTS
        .into_iter()
        .filter(|alert| alert.is_for(role))
        .map(|alert| (alert, !off.iter().any(|k| k == alert.kind)))
        .collect())
}

/// Keeps on the alerts named in `on` (unknown names are ignored) and turns
/// the operator's other alerts off.
pub async fn set_alert_choices(store: &dyn Store, actor: &Actor, on: &[&str]) -> OpsResult<()> {
    let (id, _) = operator_of(actor)?;
    let off = ALERTS
        .iter()
        .filter(|alert| !on.contains(&alert.kind))
        .map(|alert| alert.kind.to_owned())
        .collect();
    store.set_alert_opt_outs(id, off).await?;
    Ok(())
}

/// How the operator gets their alerts, with the phone as people type it
/// (`0803…`).
pub async fn alert_channels(store: &dyn Store, actor: &Actor) -> OpsResult<AlertChannels> {
    let (id, _) = operator_of(actor)?;
    let mut channels = store.alert_channels(id).await?;
    channels.phone = channels
        .phone
        .map(|p| format!("0{}", p.trim_start_matches("234")));
    Ok(channels)
}

/// Sets how the operator gets their alerts: `phone` as typed (a Nigerian
/// mobile, stored `234…`; empty: none), by email, by SMS (which needs the
/// phone). Nothing is kept when refused.
pub async fn set_alert_channels(
    store: &dyn Store,
    actor: &Actor,
    phone: &str,
    by_email: bool,
    by_sms: bool,
) -> OpsResult<()> {
    let (id, _) = operator_of(actor)?;
    let phone = match phone.trim() {
        "" => None,
        typed => {
            let parsed = Phone::parse(typed).map_err(|_| {
                crate::invalid(
                    &["phone"],
                    "must be a Nigerian mobile number, like 0803 123 4567",
                )
            })?;
            Some(format!("234{}", parsed.as_str().trim_start_matches('0')))
        }
    };
    if by_sms && phone.is_none() {
        return Err(crate::invalid(&["phone"], "is needed for alerts by SMS"));
    }
    let channels = AlertChannels {
        phone,
        by_email,
        by_sms,
    };
    store.set_alert_channels(id, channels).await?;
    tracing::info!(%actor, by_email, by_sms, "alert channels saved");
    Ok(())
}

/// Alerts are an operator's own: the CLI has none.
fn operator_of(actor: &Actor) -> OpsResult<(i64, billpay_store::OperatorRole)> {
    match actor {
        Actor::Operator { id, role, .. } => Ok((*id, *role)),
        Actor::Cli => Err(OpsError::Refused("alerts are chosen by an operator".into())),
    }
}
