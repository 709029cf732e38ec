//! Webhook events (the outbox): claimed under a lease by the delivery
//! worker, their attempts recorded, listed, and queued again on request.

use super::PostgresStore;
use super::connection::{execute, map_opt, map_rows, owned, query, query_opt, with_columns};
use super::rows::{attempt, event};
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{ATTEMPT_COLUMNS, EVENT_COLUMNS, qualified};
use crate::*;
use async_trait::async_trait;
use billpay_domain::KeyId;
use std::sync::LazyLock;
use std::time::Duration;

#[async_trait]
impl EventStore for PostgresStore {
    /// Leases up to `limit` due events, none of the keys in `skip_keys`.
    async fn claim_events(
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
                map_rows(rows, event)
            })
        })
        .await
    }

    /// The attempt and the event's next state, in one statement.
    async fn record_delivery(
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

    /// Newest first.
    async fn events(&self, filter: EventFilter) -> StoreResult<Vec<Event>> {
        static SQL: LazyLock<String> =
            LazyLock::new(|| with_columns(include_str!("sql/events.sql"), EVENT_COLUMNS));
        self.autocommit(|c| {
            Box::pin(async move {
                let account = filter.account_id.map(|a| a.to_string());
                let key = filter.key_id.map(|k| k.to_string());
                let limit = i64::from(filter.limit.max(1));
                let rows = query(c, &SQL, &[&account, &filter.failed_only, &limit, &key]).await?;
                map_rows(rows, event)
            })
        })
        .await
    }

    /// By id or by its transaction's reference_code.
    async fn event(&self, id_or_code: &str) -> StoreResult<Option<Event>> {
        let key = id_or_code.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {EVENT_COLUMNS} FROM events WHERE id = $1 OR transaction_code = $1
                         ORDER BY created_at LIMIT 1"
                );
                map_opt(query_opt(c, &sql, &[&key]).await?, event)
            })
        })
        .await
    }

    async fn attempts(&self, event_id: &str) -> StoreResult<Vec<Attempt>> {
        let event_id = event_id.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                let sql = format!(
                    "SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE event_id = $1 ORDER BY id"
                );
                map_rows(query(c, &sql, &[&event_id]).await?, attempt)
            })
        })
        .await
    }

    /// Queues an event for one more delivery now; refused while one is under way.
    async fn requeue_event(&self, event_id: &str) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.autocommit(|c| {
            Box::pin(async move {
                // Not while a delivery holds the event: that would send it twice at once.
                let queue = "UPDATE events SET status = 'pending', next_attempt_at = $1
                                 WHERE id = $2 AND lease_until <= $1";
                let queued = execute(c, queue, &[&now_ms(), &event_id]).await? > 0;
                let exists = "SELECT 1 FROM events WHERE id = $1";
                let exists = execute(c, exists, &[&event_id]).await? > 0;
                Ok(rules::requeue_outcome(queued, exists)?)
            })
        })
        .await
    }
}
