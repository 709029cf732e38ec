//! What PostgreSQL does its own way for webhook events (`areas/events.rs`
//! has the rest): the claim with `SKIP LOCKED`, and an attempt with its
//! event's next state as one statement of the group-committed lanes.

use super::PostgresStore;
use super::connection::{mapped, owned, query, with_columns};
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{EVENT_COLUMNS, qualified};
use crate::rows::event;
use crate::*;
use billpay_domain::KeyId;
use std::sync::LazyLock;
use std::time::Duration;

impl PostgresStore {
    pub(crate) async fn claim_events_here(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>> {
        static SQL: LazyLock<String> = LazyLock::new(|| {
            with_columns(
                include_str!("sql/claim_events.sql"),
                &qualified(EVENT_COLUMNS, "e"),
            )
        });
        let skip: Vec<String> = skip_keys.iter().map(KeyId::to_string).collect();
        self.autocommit(|c| {
            Box::pin(async move {
                let now = now_ms();
                let until = now + lease.as_millis() as i64;
                let rows = query(c, &SQL, &[&until, &now, &i64::from(limit), &skip]).await?;
                rows.iter().map(|row| mapped(row, event)).collect()
            })
        })
        .await
    }

    /// The attempt and the event's next state, in one statement.
    pub(crate) async fn record_delivery_here(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        let (status, next_at) = next.state();
        let params = owned![
            event_id.to_owned(),
            attempt.url,
            attempt.http_status.map(i32::from),
            attempt.error,
            attempt.latency_ms.min(i64::MAX as u64) as i64,
            attempt.response_excerpt,
            now_rfc3339(),
            status.as_str(),
            next_at,
        ];
        self.write_statement(include_str!("sql/record_delivery.sql"), params)
            .await?;
        Ok(())
    }
}
