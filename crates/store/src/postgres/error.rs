//! Errors inside the PostgreSQL backend, and retrying what may be retried.

use crate::{Refusal, StoreError};
use std::future::Future;
use std::time::Duration;
use tokio_postgres::error::SqlState;

/// Attempts of a transaction that failed on a serialisation failure or deadlock.
pub(super) const TRIES: u32 = 8;

/// Errors inside the backend: the database's (kept whole, so serialisation
/// failures can be retried) or the store's own.
#[derive(Debug)]
pub enum PgError {
    Db(tokio_postgres::Error),
    Store(StoreError),
}

pub(super) type PgResult<T> = Result<T, PgError>;

impl From<tokio_postgres::Error> for PgError {
    fn from(e: tokio_postgres::Error) -> Self {
        PgError::Db(e)
    }
}

impl From<StoreError> for PgError {
    fn from(e: StoreError) -> Self {
        PgError::Store(e)
    }
}

impl From<crate::BackendError> for PgError {
    fn from(e: crate::BackendError) -> Self {
        PgError::Store(e.into())
    }
}

impl From<Refusal> for PgError {
    fn from(e: Refusal) -> Self {
        PgError::Store(StoreError::Refused(e))
    }
}

impl From<deadpool_postgres::PoolError> for PgError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        PgError::Store(StoreError::caused_in("PostgreSQL pool", e))
    }
}

impl From<PgError> for StoreError {
    fn from(e: PgError) -> Self {
        match e {
            PgError::Store(e) => e,
            PgError::Db(e) => StoreError::described(describe(&e), e),
        }
    }
}

/// A backend error with this message.
pub(super) fn backend(message: impl Into<String>) -> PgError {
    PgError::Store(StoreError::backend(message))
}

/// The error of a group-commit queue whose lanes have stopped.
pub(super) fn stopped_queue(queue: &str) -> PgError {
    backend(format!("{queue} writer stopped"))
}

/// The server's SQLSTATE and message, or the client's error.
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    }
}

/// A serialisation failure, a deadlock, or the server terminating the
/// connection (an operator's `pg_terminate_backend`, a shutdown, a failover):
/// the server answered with an error, so the statement or transaction did
/// not commit, and running it again (on a fresh connection: the pool drops
/// closed ones) may succeed.
pub(super) fn retryable(e: &PgError) -> bool {
    matches!(e, PgError::Db(e) if e.code().is_some_and(|c| {
        *c == SqlState::T_R_SERIALIZATION_FAILURE
            || *c == SqlState::T_R_DEADLOCK_DETECTED
            || *c == SqlState::ADMIN_SHUTDOWN
            || *c == SqlState::CRASH_SHUTDOWN
            || *c == SqlState::CANNOT_CONNECT_NOW
    }))
}

/// The connection was closed under the statement with no answer from the
/// server. Safe to run again only where a second run cannot do twice what
/// the first did (a purchase: its reference is unique, so a first run that
/// did commit makes the second a `duplicate_reference`, never a second debit).
pub(super) fn connection_lost(e: &PgError) -> bool {
    matches!(e, PgError::Db(e) if e.is_closed())
}

/// How long a purchase keeps trying while its connections are being ended
/// under it (a failover, an operator terminating backends): past a fixed
/// count of tries, a burst of terminations could fail a purchase the next
/// connection would have placed.
pub(super) const RECONNECT_WINDOW: Duration = Duration::from_secs(5);

/// The connection ended under the statement: closed with no answer, or the
/// server ending it (admin or crash shutdown, not accepting connections yet).
pub(super) fn connection_ended(e: &PgError) -> bool {
    connection_lost(e)
        || matches!(e, PgError::Db(e) if e.code().is_some_and(|c| {
            *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
        }))
}

/// Whether `e` is a unique violation of `constraint`.
pub(super) fn violates(e: &PgError, constraint: &str) -> bool {
    matches!(e, PgError::Db(e) if e.as_db_error().is_some_and(|db| {
        *db.code() == SqlState::UNIQUE_VIOLATION && db.constraint() == Some(constraint)
    }))
}

/// Runs `op` again after a serialisation failure or deadlock, up to [`TRIES`]
/// times in all (so `op` may run more than once).
pub(super) async fn retried<T, Fut>(mut op: impl FnMut() -> Fut) -> PgResult<T>
where
    Fut: Future<Output = PgResult<T>>,
{
    let mut attempt = 0;
    loop {
        match op().await {
            Err(e) if retryable(&e) && attempt + 1 < TRIES => {
                attempt += 1;
                tracing::debug!(error = ?e, attempt, "retrying a PostgreSQL transaction");
                backoff(attempt).await;
            }
            other => return other,
        }
    }
}

/// Whether [`retried`] would run a failed attempt again.
pub(super) fn retry_after(e: &PgError, attempt: u32) -> bool {
    retryable(e) && attempt + 1 < TRIES
}

/// A short pause before retrying, spread so retrying transactions do not collide again.
pub(super) async fn backoff(attempt: u32) {
    use rand::Rng;
    let ms = rand::rng().random_range(1..=(5u64 << attempt.min(6)));
    tokio::time::sleep(Duration::from_millis(ms)).await;
}
