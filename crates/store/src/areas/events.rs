//! Webhook events (the outbox): claimed under a lease by the delivery
//! worker, their attempts recorded, listed, and queued again on request.
//! Both engines run [`record`] in their group commit (SQLite's writer,
//! PostgreSQL's lanes of units, `postgres/fulfilment.rs`).

use super::claims::{claim, claim_sql};
use crate::clock::{now_ms, now_rfc3339};
use crate::columns::{ATTEMPT_COLUMNS, EVENT_COLUMNS};
use crate::db::{
    Changing, Engine, Guarded, One, Param, PerEngine, ReadTx, Statements, Tx, col,
    for_both_engines, json_list, json_values,
};
use crate::listing::{Filters, Listing};
use crate::rows::{attempt, event};
use crate::*;
use billpay_domain::KeyId;
use std::sync::LazyLock;
use std::time::Duration;

for_both_engines! {
    /// Webhook events (the outbox) and their delivery attempts.
    pub trait EventStore {
        /// Leases up to `limit` due events, none of the keys in `skip_keys` (the
        /// delivery worker's keys that have all the deliveries in flight they may).
        fn claim_events(limit: u32, lease: Duration, skip_keys: Vec<KeyId> => skip_keys)
            -> Vec<Event> = claim opened |tx| claim_due(tx, limit, lease, &skip_keys);
        /// The attempt and the event's next state, in one write (it refuses
        /// only before its first change: the attempt names its event).
        fn record_delivery(event_id: &str, attempt: NewAttempt => attempt, next: EventNext) -> ()
            = guarded |tx| record(tx, &event_id, &attempt, &next),
            postgres |store| store.record_delivery_here(event_id, attempt, next);
        /// Newest first.
        fn events(filter: EventFilter) -> Vec<Event> = read opened |tx| list(tx, &filter);
        /// Event by id or by its transaction's reference_code.
        fn event(id_or_code: &str) -> Option<Event> = read opened |tx| find(tx, &id_or_code);
        fn attempts(event_id: &str) -> Vec<Attempt> = read |tx| attempts(tx, &event_id);
        /// Queues an event for one more delivery now; refused with
        /// [`StoreError::DeliveryInProgress`] while one is under way.
        fn requeue_event(event_id: &str) -> () = write |tx| requeue(tx, &event_id);
    }
}

/// Due pending events, oldest due first, none of the keys in `?4`.
static DUE: PerEngine = PerEngine::new(|engine| {
    let skipped = json_values(engine, "?4");
    let due = format!("status = 'pending' AND next_attempt_at <= ?2 AND key_id NOT IN ({skipped})");
    claim_sql(
        engine,
        "events",
        "id",
        (&due, "next_attempt_at"),
        EVENT_COLUMNS,
    )
});

async fn claim_due<T: Tx>(
    tx: One<'_, T>,
    limit: u32,
    lease: Duration,
    skip_keys: &[KeyId],
) -> Result<Vec<Event>, T::Error> {
    let skip: Vec<String> = skip_keys.iter().map(KeyId::to_string).collect();
    let skip = json_list(&skip)?;
    claim(tx, &DUE, (limit, lease), &[&skip], event).await
}

/// The attempt, then the event's next state (its lease released): a
/// guarded write ([`Guarded`]) with nothing to decide (its one failure, an
/// event that is gone, is its first statement's).
pub(crate) async fn record<'a, T: Tx + 'a>(
    tx: impl Into<Guarded<'a, T>>,
    event_id: &str,
    attempt: &NewAttempt,
    next: &EventNext,
) -> Result<(), T::Error> {
    let change =
        |tx: Changing<'a, T>| async move { write_attempt(&tx, event_id, attempt, next).await };
    tx.into().change(change).await
}

/// On PostgreSQL one statement (the attempt's `INSERT` in a `WITH`), one
/// round trip of its lane's batch instead of two; SQLite has no `INSERT` in
/// a `WITH`, so two statements there (in-process, no round trip).
async fn write_attempt<T: Statements>(
    tx: &T,
    event_id: &str,
    attempt: &NewAttempt,
    next: &EventNext,
) -> Result<(), T::Error> {
    const ATTEMPT: &str = "INSERT INTO webhook_attempts (event_id, url, http_status, error,
                   latency_ms, response_excerpt, created_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    const NEXT: &str = "UPDATE events SET status = ?8, next_attempt_at = ?9, lease_until = 0,
                   attempts = attempts + 1 WHERE id = ?1";
    static BOTH: LazyLock<String> = LazyLock::new(|| format!("WITH attempt AS ({ATTEMPT}) {NEXT}"));
    let latency = attempt.latency_ms.min(i64::MAX as u64) as i64;
    let http_status = attempt.http_status.map(i32::from);
    let (status, next_at) = next.state();
    let params: [&dyn Param; 9] = [
        &event_id,
        &attempt.url,
        &http_status,
        &attempt.error,
        &latency,
        &attempt.response_excerpt,
        &now_rfc3339(),
        &status.as_str(),
        &next_at,
    ];
    match T::ENGINE {
        Engine::Postgres => {
            tx.execute(&BOTH, &params).await?;
        }
        Engine::Sqlite => {
            tx.execute(ATTEMPT, &params[..7]).await?;
            tx.execute(NEXT, &params).await?;
        }
    }
    Ok(())
}

/// The one attempt of the event of transaction `code`, if it was written
/// skipped ([`NewAttempt::no_webhook_url`], from the event's row).
pub(super) async fn add_skipped_attempt<T: Statements>(tx: &T, code: &str) -> Result<(), T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        let skipped = "events WHERE transaction_code = ?1 AND status = 'skipped'";
        skipped_attempts(skipped, ("?2", "?3"))
    });
    tx.execute(&SQL, &[&code, &crate::NO_WEBHOOK_URL, &now_rfc3339()])
        .await?;
    Ok(())
}

/// The one attempt of event `id`, just written skipped: its id is known,
/// so nothing is read back.
pub(super) async fn add_skipped_attempt_to<T: Statements>(
    tx: &T,
    id: &str,
) -> Result<(), T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "{SKIPPED_INTO} VALUES ({})",
            skipped_row("?1", ("?2", "?3"))
        )
    });
    tx.execute(&SQL, &[&id, &crate::NO_WEBHOOK_URL, &now_rfc3339()])
        .await?;
    Ok(())
}

/// The skipped attempt of each event of `source` (a `FROM` clause giving
/// the events' `id`s), its error and time the placeholders `error` and `at`
/// (the error [`crate::NO_WEBHOOK_URL`]).
pub(super) fn skipped_attempts(source: &str, error_at: (&str, &str)) -> String {
    format!(
        "{SKIPPED_INTO} SELECT {} FROM {source}",
        skipped_row("id", error_at)
    )
}

/// The `INSERT` of a skipped attempt, before its row ([`skipped_row`]).
const SKIPPED_INTO: &str = "INSERT INTO webhook_attempts (event_id, url, http_status, error,
    latency_ms, response_excerpt, created_at)";

/// A skipped attempt's row: of event `id`, with its error and time.
fn skipped_row(id: &str, (error, at): (&str, &str)) -> String {
    format!("{id}, NULL, NULL, {error}, 0, '', {at}")
}

async fn list<T: ReadTx>(tx: &T, filter: &EventFilter) -> Result<Vec<Event>, T::Error> {
    let listing = listing(filter);
    tx.query_all(&listing.sql, &listing.params(), event).await
}

/// The listing's statement: only the filters set (`crate::listing`).
pub(crate) fn listing(filter: &EventFilter) -> Listing {
    Filters::default()
        .and("account_id = ?", filter.account_id.map(|a| a.to_string()))
        .and("key_id = ?", filter.key_id.map(|k| k.to_string()))
        .and_sql(filter.failed_only.then(|| "status = 'failed'".into()))
        .page(
            &format!("SELECT {EVENT_COLUMNS} FROM events"),
            "ORDER BY created_at DESC",
            filter.limit.max(1),
            None,
        )
}

async fn find<T: ReadTx>(tx: &T, key: &str) -> Result<Option<Event>, T::Error> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE id = ?1 OR transaction_code = ?1
             ORDER BY created_at LIMIT 1"
        )
    });
    tx.query_opt(&SQL, &[&key], event).await
}

async fn attempts<T: ReadTx>(tx: &T, event_id: &str) -> Result<Vec<Attempt>, T::Error> {
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
