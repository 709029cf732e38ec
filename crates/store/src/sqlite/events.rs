//! What SQLite does its own way for webhook events (`areas/events.rs` has
//! the rest): the claim in one statement, and an attempt with its event's
//! next state as two statements of one writer job.

use super::SqliteStore;
use super::claims::{EVENTS, claim_due};
use super::statements::Lite;
use crate::clock::now_rfc3339;
use crate::db::{Param, Tx, ready};
use crate::rows::event;
use crate::*;
use billpay_domain::KeyId;
use std::time::Duration;

impl SqliteStore {
    pub(crate) async fn claim_events_here(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>> {
        self.engine
            .write(move |conn| claim_due(conn, &EVENTS, (limit, lease), &skip_keys, event))
            .await
    }

    pub(crate) async fn record_delivery_here(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        let event_id = event_id.to_owned();
        self.engine
            .write(move |conn| {
                let tx = Lite(conn);
                let sql = "INSERT INTO webhook_attempts (event_id, url, http_status, error,
                               latency_ms, response_excerpt, created_at)
                           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
                let latency = attempt.latency_ms.min(i64::MAX as u64) as i64;
                let status = attempt.http_status.map(i32::from);
                let params: [&dyn Param; 7] = [
                    &event_id,
                    &attempt.url,
                    &status,
                    &attempt.error,
                    &latency,
                    &attempt.response_excerpt,
                    &now_rfc3339(),
                ];
                ready(tx.execute(sql, &params))?;
                let (status, next_at) = next.state();
                let sql = "UPDATE events SET status = ?1, next_attempt_at = ?2, lease_until = 0,
                               attempts = attempts + 1 WHERE id = ?3";
                ready(tx.execute(sql, &[&status.as_str(), &next_at, &event_id]))?;
                Ok(())
            })
            .await
    }
}
