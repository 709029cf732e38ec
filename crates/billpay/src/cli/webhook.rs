//! `billpay webhook …`

use super::Output;
use super::output::action_error;
use billpay_domain::AccountId;
use billpay_operations::{Actor, webhooks};
use billpay_store::{EventFilter, SharedStore};
use billpay_webkit::format::sortable_time;
use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum WebhookCommand {
    /// Queue an event (by event id or reference_code) for one more delivery now.
    Resend { event_or_reference_code: String },
    /// An account's webhook events with their delivery attempts.
    List {
        #[arg(long)]
        account: AccountId,
        /// Only events whose delivery failed.
        #[arg(long)]
        failed: bool,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
}

pub async fn run(cmd: WebhookCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    match cmd {
        WebhookCommand::Resend {
            event_or_reference_code,
        } => {
            let event = webhooks::resend(store.as_ref(), Actor::Cli, &event_or_reference_code)
                .await
                .map_err(action_error)?;
            out.emit(
                json!({ "event_id": event.id, "reference_code": event.transaction_code, "queued": true }),
                format!("Event {} ({}) queued for delivery; a running server sends it within a second", event.id, event.transaction_code),
            );
        }
        WebhookCommand::List {
            account,
            failed,
            limit,
        } => {
            let events = store
                .events(EventFilter {
                    account_id: Some(account),
                    failed_only: failed,
                    limit,
                    ..EventFilter::default()
                })
                .await?;
            let mut listed = Vec::with_capacity(events.len());
            let mut text = Vec::new();
            for event in events {
                let attempts = store.attempts(&event.id).await?;
                let last = attempts.last().map(|a| match (a.http_status, &a.error) {
                    (_, Some(error)) => error.clone(),
                    (Some(status), None) => format!("HTTP {status}"),
                    (None, None) => String::new(),
                });
                text.push(format!(
                    "{} WAT  {:<9}  {:<22}  {}  {}",
                    sortable_time(&event.created_at),
                    event.status.as_str(),
                    event.event,
                    event.transaction_code,
                    last.unwrap_or_default()
                ));
                listed.push(json!({ "event": event, "attempts": attempts }));
            }
            out.emit(
                json!({ "events": listed }),
                if text.is_empty() {
                    "No webhook events".into()
                } else {
                    text.join("\n")
                },
            );
        }
    }
    Ok(())
}
