//! Storage behind one interface, [`Store`]: every area's trait at once
//! ([`AccountStore`], [`WalletStore`], …, in `areas`). The SQLite backend (the embedded
//! default) lives in [`sqlite`]; the PostgreSQL backend (several nodes on one
//! database) in [`postgres`]; both answer alike. Every method is one atomic
//! unit: a purchase's reference, debit, transaction row and ledger entry
//! commit together, as do a final status, its refund and its webhook event
//! (the outbox). What does not depend on the database is stated once, above
//! the backends: [`rules`], `columns` and [`issue`] (credentials).

mod areas;
pub mod audit;
pub mod cadence;
pub mod catalogue_cache;
pub mod clock;
mod columns;
mod db;
pub mod issue;
pub mod limits;
mod listing;
pub mod metrics;
pub mod migrations;
mod model;
pub mod operators;
pub mod postgres;
mod rows;
pub mod rules;
pub mod sealing;
pub mod sqlite;
pub mod work;

/// The sales rollup built from the purchases already final (migration 038's last statement).
pub use areas::sales_rollup::backfill as sales_rollup_backfill;
pub use areas::*;
pub use catalogue_cache::{BrandCache, CatalogueCache, PriceBookCache};
pub use model::*;
pub use operators::*;
pub use rules::redact_url;
pub use work::{WorkError, WorkFuture, WorkStore, WriteTx};

use std::sync::Arc;

/// Both backends' finalize: a transaction has one webhook event; a reversal
/// (the only second finalization) replaces its body with the new status and
/// sends it again, so receivers get the same `reference_code` as `failed`.
pub(crate) const RESEND_ON_REVERSAL: &str = "ON CONFLICT (transaction_code) DO UPDATE SET
    payload = excluded.payload, status = excluded.status, attempts = excluded.attempts,
    next_attempt_at = excluded.next_attempt_at, lease_until = 0";

/// An event's status and attempts when it is written, by whether its key
/// has a webhook URL. A key without one gets no webhook, so its event is
/// written `skipped` with the one attempt that says why, and never waits for
/// the delivery worker (docs/decisions.md, "A webhook's URL is read when its
/// event is written").
pub(crate) fn first_state(webhook: bool) -> (&'static str, i32) {
    if webhook {
        ("pending", 0)
    } else {
        ("skipped", 1)
    }
}

/// [`first_state`] as SQL, read from the event's key (`k`, joined by the
/// statement): a batch's event.
pub(crate) static FIRST_STATE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let (with, without) = (first_state(true), first_state(false));
    format!(
        "CASE WHEN k.webhook_url IS NULL THEN '{}' ELSE '{}' END,
         CASE WHEN k.webhook_url IS NULL THEN {} ELSE {} END",
        without.0, with.0, without.1, with.1
    )
});

/// Both backends' [`Store::fulfilment_backlog`]: a purchase held for review
/// waits for an owner, not for the supplier, so it is not in it.
pub(crate) const BACKLOG: &str = "SELECT COUNT(*), MIN(created_at) FROM transactions
    WHERE status = 'processing' AND held_for IS NULL";

/// Purchases still waiting for a final answer (the fulfilment backlog),
/// those held for review aside (they wait for an owner: `held_purchases`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backlog {
    pub processing: u64,
    /// RFC 3339 creation time of the oldest of them.
    pub oldest_created_at: Option<String>,
}

impl Backlog {
    /// Seconds since the oldest processing purchase was placed (0 when none).
    pub fn oldest_age_secs(&self) -> f64 {
        let oldest = self.oldest_created_at.as_deref();
        oldest
            .and_then(clock::parse_rfc3339_ms)
            .map_or(0.0, |ms| (clock::now_ms() - ms).max(0) as f64 / 1000.0)
    }
}

pub type SharedStore = Arc<dyn Store>;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("{0}")]
    Invalid(String),
    /// `requeue_event` while a delivery of the event is under way.
    #[error("{}", DELIVERY_IN_PROGRESS)]
    DeliveryInProgress,
    /// `update_api_key` on a revoked key: revoking is final.
    #[error("a revoked key cannot be changed")]
    KeyRevoked,
    /// `create_account` with an e-mail address another account has.
    #[error("an account with email {0} exists")]
    EmailTaken(String),
    #[error("database error: {0}")]
    Backend(#[from] BackendError),
}

/// A failure below the store's operations: what it says, and the error that
/// caused it when there is one, kept whole so a caller or a log can walk
/// `source()` (the driver's error code, a PostgreSQL `SqlState`…).
#[derive(Debug, Clone)]
pub struct BackendError {
    message: String,
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl BackendError {
    /// A failure with no underlying error (a row that breaks an invariant).
    pub(crate) fn new(message: impl Into<String>) -> BackendError {
        BackendError {
            message: message.into(),
            cause: None,
        }
    }
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_deref().map(|e| e as _)
    }
}

impl StoreError {
    /// A backend failure with no underlying error (a stopped thread, a row
    /// that breaks an invariant).
    pub fn backend(message: impl Into<String>) -> StoreError {
        StoreError::Backend(BackendError::new(message))
    }

    /// A backend failure caused by `cause`, saying what it says.
    pub fn caused(cause: impl std::error::Error + Send + Sync + 'static) -> StoreError {
        StoreError::Backend(BackendError {
            message: cause.to_string(),
            cause: Some(Arc::new(cause)),
        })
    }

    /// A backend failure caused by `cause`, saying `message` (which already
    /// describes the cause, as PostgreSQL's detail and hint do).
    pub(crate) fn described(
        message: String,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::Backend(BackendError {
            message,
            cause: Some(Arc::new(cause)),
        })
    }

    /// A backend failure caused by `cause` while doing `context`.
    pub fn caused_in(
        context: impl std::fmt::Display,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        StoreError::Backend(BackendError {
            message: format!("{context}: {cause}"),
            cause: Some(Arc::new(cause)),
        })
    }
}

/// Business refusals of a purchase: both change nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("reference already used")]
    DuplicateReference,
    #[error("insufficient wallet balance")]
    InsufficientBalance,
    /// Over one of the account's limits (issue 32): which, and what is left.
    #[error("{0}")]
    LimitExceeded(limits::LimitRefusal),
    /// The account or the recipient is on the operator's blocklist.
    #[error("{}", BLOCKED)]
    Blocked,
}

/// What a blocked purchase says: not which entry matched, so a fraudster
/// learns nothing by trying.
pub const BLOCKED: &str =
    "This purchase is not allowed by the operator's fraud controls; contact the operator";

pub type StoreResult<T> = Result<T, StoreError>;

/// What [`StoreError::DeliveryInProgress`] says.
pub const DELIVERY_IN_PROGRESS: &str =
    "a delivery of this event is in progress; resend it once that attempt is recorded";

/// Whether a database URL names the PostgreSQL backend.
pub fn is_postgres_url(database_url: &str) -> bool {
    database_url.starts_with("postgres:") || database_url.starts_with("postgresql:")
}

/// Opens the backend named by a database URL: `sqlite://…` (embedded, the
/// default) or `postgres://…` / `postgresql://…` (several nodes may share it).
/// What purchases deliver is stored as it is: see [`open_sealed`].
pub async fn open(database_url: &str) -> StoreResult<SharedStore> {
    open_with(database_url, sealing::Sealer::clear()).await
}

/// [`open`], sealing what purchases deliver and notices' codes and links
/// under the master key (`secrets`: the key, or why there is none, said
/// when a value needs it).
pub async fn open_sealed(
    database_url: &str,
    secrets: Result<billpay_domain::sealed::SecretBox, String>,
) -> StoreResult<SharedStore> {
    open_with(database_url, sealing::Sealer::with(secrets)).await
}

async fn open_with(database_url: &str, sealer: sealing::Sealer) -> StoreResult<SharedStore> {
    let sealer = Arc::new(sealer);
    if database_url.starts_with("sqlite:") {
        let mut store = sqlite::SqliteStore::open(database_url).await?;
        store.sealer = sealer;
        Ok(Arc::new(store))
    } else if is_postgres_url(database_url) {
        let mut store = postgres::PostgresStore::open(database_url).await?;
        store.sealer = sealer;
        Ok(Arc::new(store))
    } else {
        Err(StoreError::Invalid(format!(
            "unsupported database URL (expected sqlite://PATH or postgres://…): {}",
            rules::redact_url(database_url)
        )))
    }
}
