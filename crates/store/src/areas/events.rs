//! Webhook events (the outbox): claimed under a lease by the delivery
//! worker, their attempts recorded, listed, and queued again on request.
//! Claiming, and recording an attempt, differ by engine (SQLite's claim in one
//! statement; PostgreSQL's `SKIP LOCKED` claim and its group-committed
//! statement lanes): `sqlite/claims.rs`, `postgres/events.rs`.

use crate::clock::now_ms;
use crate::columns::{ATTEMPT_COLUMNS, EVENT_COLUMNS};
use crate::db::{Tx, col, for_both_engines};
use crate::rows::{attempt, event};
use crate::*;
use billpay_domain::KeyId;
use std::sync::LazyLock;
use std::time::Duration;

for_both_engines! {
    impl EventStore {
        /// Leases up to `limit` due events, none of the keys in `skip_keys`.
        fn claim_events(limit: u32, lease: Duration, skip_keys: Vec<KeyId>) -> Vec<Event>
            = engine |store| store.claim_events_here(limit, lease, skip_keys);
        /// The attempt and the event's next state, in one write.
        fn record_delivery(event_id: &str, attempt: NewAttempt, next: EventNext) -> ()
            = engine |store| store.record_delivery_here(event_id, attempt, next);
        /// Newest first.
        fn events(filter: EventFilter) -> Vec<Event> = read |tx| list(tx, &filter);
        /// By id or by its transaction's reference_code.
        fn event(id_or_code: &str) -> Option<Event> = read |tx| find(tx, &id_or_code);
        fn attempts(event_id: &str) -> Vec<Attempt> = read |tx| attempts(tx, &event_id);
        /// Queues an event for one more delivery now; refused while one is under way.
        fn requeue_event(event_id: &str) -> () = write |tx| requeue(tx, &event_id);
    }
}

async fn list<T: Tx>(tx: &T, filter: &EventFilter) -> Result<Vec<Event>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {EVENT_COLUMNS} FROM events
             WHERE (CAST(?1 AS TEXT) IS NULL OR account_id = ?1)
               AND (NOT ?2 OR status = 'failed') AND (CAST(?4 AS TEXT) IS NULL OR key_id = ?4)
             ORDER BY created_at DESC LIMIT ?3"
        )
    });
    let account = filter.account_id.map(|a| a.to_string());
    let key = filter.key_id.map(|k| k.to_string());
    let limit = i64::from(filter.limit.max(1));
    tx.query_all(&SQL, &[&account, &filter.failed_only, &limit, &key], event)
        .await
}

async fn find<T: Tx>(tx: &T, key: &str) -> Result<Option<Event>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1 OR transaction_code = ?1
             ORDER BY created_at LIMIT 1"
        )
    });
    tx.query_opt(&SQL, &[&key], event).await
}

async fn attempts<T: Tx>(tx: &T, event_id: &str) -> Result<Vec<Attempt>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT {ATTEMPT_COLUMNS} FROM webhook_attempts WHERE event_id = ?1 ORDER BY id")
    });
    tx.query_all(&SQL, &[&event_id], attempt).await
}

async fn requeue<T: Tx>(tx: &T, event_id: &str) -> Result<(), T::Error> {
    // Not while a delivery holds the event: that would send it twice at once.
    let sql = "UPDATE events SET status = 'pending', next_attempt_at = ?1
               WHERE id = ?2 AND lease_until <= ?1";
    let queued = tx.execute(sql, &[&now_ms(), &event_id]).await? > 0;
    const COLUMNS: &str = "found";
    let sql = "SELECT EXISTS(SELECT 1 FROM events WHERE id = ?1) AS found";
    let exists = tx
        .query_one(sql, &[&event_id], |row| row.get(col!("found")))
        .await?;
    Ok(rules::requeue_outcome(queued, exists)?)
}
