//! What PostgreSQL does its own way for webhook events (`areas/events.rs`
//! has the rest): an attempt with its event's next state as one statement of
//! the group-committed lanes.

use super::PostgresStore;
use super::connection::owned;
use crate::clock::now_rfc3339;
use crate::*;

impl PostgresStore {
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
