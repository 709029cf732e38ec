//! Webhook events (the outbox): claimed under a lease by the delivery
//! worker, their attempts recorded, listed, and queued again on request.

use super::SqliteStore;
use super::claims::{EVENTS, claim_due};
use super::rows::{attempt, event};
use super::statements::{collect, execute, query_row};
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{ATTEMPT_COLUMNS, EVENT_COLUMNS};
use crate::*;
use async_trait::async_trait;
use billpay_domain::KeyId;
use rusqlite::{OptionalExtension, params};
use std::sync::LazyLock;
use std::time::Duration;

#[async_trait]
impl EventStore for SqliteStore {
    /// Leases up to `limit` due events, none of the keys in `skip_keys`.
    async fn claim_events(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>> {
        self.engine
            .write(move |conn| claim_due(conn, &EVENTS, (limit, lease), &skip_keys, event))
            .await
    }

    /// The attempt and the event's next state, in one write.
    async fn record_delivery(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.engine
            .write(move |conn| {
                execute(
                    conn,
                    "INSERT INTO webhook_attempts (event_id, url, http_status, error, latency_ms, response_excerpt, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        event_id,
                        attempt.url,
                        attempt.http_status,
                        attempt.error,
                        attempt.latency_ms,
                        attempt.response_excerpt,
                        now_rfc3339()
                    ],
                )?;
                let (status, next_at) = next.state();
                execute(
                    conn,
                    "UPDATE events SET status = ?1, next_attempt_at = ?2, lease_until = 0, attempts = attempts + 1 WHERE id = ?3",
                    params![status.as_str(), next_at, event_id],
                )?;
                Ok(())
            })
            .await
    }

    /// Newest first.
    async fn events(&self, filter: EventFilter) -> StoreResult<Vec<Event>> {
        static SQL: LazyLock<String> =
            LazyLock::new(|| include_str!("sql/events.sql").replace("{columns}", EVENT_COLUMNS));
        self.engine
            .read(move |conn| {
                let params = params![
                    filter.account_id.map(|a| a.to_string()),
                    filter.failed_only,
                    filter.limit.max(1),
                    filter.key_id.map(|k| k.to_string())
                ];
                collect(conn, &SQL, params, event)
            })
            .await
    }

    /// By id or by its transaction's reference_code.
    async fn event(&self, id_or_code: &str) -> StoreResult<Option<Event>> {
        let key = id_or_code.to_owned();
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1 OR transaction_code = ?1"
                );
                Ok(query_row(conn, &sql, [key], event).optional()?)
            })
            .await
    }

    async fn attempts(&self, event_id: &str) -> StoreResult<Vec<Attempt>> {
        let event_id = event_id.to_owned();
        self.engine
            .read(move |conn| {
                let sql = format!(
                    "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE event_id = ?1 ORDER BY id"
                );
                collect(conn, &sql, [event_id], attempt)
            })
            .await
    }

    /// Queues an event for one more delivery now; refused while one is under way.
    async fn requeue_event(&self, event_id: &str) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.engine
            .write(move |conn| {
                // Not while a delivery holds the event: that would send it twice at once.
                let queued = execute(
                    conn,
                    "UPDATE events SET status = 'pending', next_attempt_at = ?1 WHERE id = ?2 AND lease_until <= ?1",
                    params![now_ms(), event_id],
                )? > 0;
                let sql = "SELECT EXISTS(SELECT 1 FROM events WHERE id = ?1)";
                let exists: bool = query_row(conn, sql, [&event_id], |r| r.get(0))?;
                rules::requeue_outcome(queued, exists)
            })
            .await
    }
}
