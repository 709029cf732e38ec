//! Storage behind one interface, [`Store`]. The SQLite backend (the embedded
//! default) lives in [`sqlite`]; the PostgreSQL backend (several nodes on one
//! database) in [`postgres`]; both answer alike. Every method is one atomic
//! unit: a purchase's reference, debit, transaction row and ledger entry
//! commit together, as do a final status, its refund and its webhook event
//! (the outbox). What does not depend on the database is stated once, above
//! the backends: [`rules`], `columns` and [`issue`] (credentials).

pub mod audit;
pub mod catalogue_cache;
pub mod clock;
mod columns;
pub mod issue;
pub mod metrics;
mod model;
pub mod postgres;
pub mod rules;
pub mod sealing;
pub mod sqlite;

pub use catalogue_cache::CatalogueCache;
pub use model::*;
pub use rules::redact_url;

use async_trait::async_trait;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::{AccountId, KeyId, Kobo};
use std::sync::Arc;
use std::time::Duration;

/// Both backends' finalize: a transaction has one webhook event; a reversal
/// (the only second finalization) replaces its body with the new status and
/// sends it again, so receivers get the same `reference_code` as `failed`.
pub(crate) const RESEND_ON_REVERSAL: &str = "ON CONFLICT (transaction_code) DO UPDATE SET
    payload = excluded.payload, status = 'pending', attempts = 0,
    next_attempt_at = excluded.next_attempt_at, lease_until = 0";

/// Both backends' [`Store::fulfilment_backlog`].
pub(crate) const BACKLOG: &str =
    "SELECT COUNT(*), MIN(created_at) FROM transactions WHERE status = 'processing'";

/// Purchases still waiting for a final answer (the fulfilment backlog).
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
    #[error("database error: {0}")]
    Backend(String),
}

/// Business refusals of a purchase: both change nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("reference already used")]
    DuplicateReference,
    #[error("insufficient wallet balance")]
    InsufficientBalance,
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Why `requeue_event` refused: a delivery of the event is under way.
pub const DELIVERY_IN_PROGRESS: &str =
    "a delivery of this event is in progress; resend it once that attempt is recorded";

/// Whether a database URL names the PostgreSQL backend.
pub fn is_postgres_url(database_url: &str) -> bool {
    database_url.starts_with("postgres:") || database_url.starts_with("postgresql:")
}

/// Opens the backend named by a database URL: `sqlite://…` (embedded, the
/// default) or `postgres://…` / `postgresql://…` (several nodes may share it).
pub async fn open(database_url: &str) -> StoreResult<SharedStore> {
    if database_url.starts_with("sqlite:") {
        let store = sqlite::SqliteStore::open(database_url).await?;
        Ok(Arc::new(store))
    } else if is_postgres_url(database_url) {
        let store = postgres::PostgresStore::open(database_url).await?;
        Ok(Arc::new(store))
    } else {
        Err(StoreError::Invalid(format!(
            "unsupported database URL (expected sqlite://PATH or postgres://…): {}",
            rules::redact_url(database_url)
        )))
    }
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    // --- accounts -------------------------------------------------------
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account>;
    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>>;
    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>>;
    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()>;
    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()>;

    // --- API keys -------------------------------------------------------
    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey>;
    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>>;
    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>>;
    /// The key with this hash and its account's status; also stamps last use.
    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>>;
    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey>;
    /// Stamps `last_used_at` (callers throttle this; it is a write).
    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()>;

    // --- wallet ---------------------------------------------------------
    async fn balance(&self, account: AccountId) -> StoreResult<Kobo>;
    /// Credits once per (account, reference); a repeat is `applied: false`.
    async fn credit(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
    ) -> StoreResult<Credit>;
    /// Newest first.
    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>>;
    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo>;
    /// The entries of one transaction (its debit, and its refund if any).
    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>>;

    // --- catalogue ------------------------------------------------------
    /// The catalogue and its version (bumped on every change).
    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)>;
    async fn catalogue_version(&self) -> StoreResult<i64>;
    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()>;
    /// Enables/disables a provider (UUID or slug) or plan; says what changed.
    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String>;

    // --- purchases ------------------------------------------------------
    /// Test mode: the checks of a live purchase, changing nothing; returns the balance.
    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo>;
    /// One atomic write: reference, debit, transaction (`processing`), ledger entry.
    async fn place_purchase(&self, new: NewPurchase) -> StoreResult<Transaction>;
    async fn transaction(
        &self,
        account: Option<AccountId>,
        lookup: TxLookup,
    ) -> StoreResult<Option<Transaction>>;
    /// Newest first, filtered, paginated with `limit`/`offset`.
    async fn transactions(&self, filter: TxFilter) -> StoreResult<Vec<Transaction>>;
    /// Spend per UTC day and product since `since` (RFC 3339), failed purchases excluded.
    async fn daily_spend(&self, account: AccountId, since: &str) -> StoreResult<Vec<DailySpend>>;

    // --- dashboard sessions --------------------------------------------------
    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()>;
    /// The unexpired session with this token hash.
    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>>;
    async fn delete_session(&self, token_hash: &str) -> StoreResult<()>;

    // --- fulfilment (worker) ---------------------------------------------
    /// Leases up to `limit` processing transactions that are due.
    async fn claim_fulfilments(&self, limit: u32, lease: Duration)
    -> StoreResult<Vec<Transaction>>;
    /// Extends the lease of transactions still being processed (the worker's
    /// heartbeat), so a short lease never expires under a live worker while a
    /// crashed worker's transactions are picked up again soon.
    async fn renew_fulfilment_leases(&self, codes: Vec<String>, lease: Duration)
    -> StoreResult<()>;
    /// Records that the supplier was asked, before asking: after a crash we requery instead.
    async fn mark_submitted(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()>;
    /// Outcome unknown or pending: check again after `delay`.
    async fn reschedule(&self, code: &str, delay: Duration, note: &str) -> StoreResult<()>;
    /// Final status + refund (if failed) + outbox event, in one transaction.
    /// `false` when the transaction was already final (nothing changed).
    async fn finalize(&self, code: &str, fin: Finalization) -> StoreResult<bool>;

    // --- webhook events (outbox) -----------------------------------------
    /// Leases up to `limit` due events, none of the keys in `skip_keys` (the
    /// delivery worker's keys that have all the deliveries in flight they may).
    async fn claim_events(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>>;
    async fn record_delivery(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()>;
    async fn events(&self, filter: EventFilter) -> StoreResult<Vec<Event>>;
    /// Event by id or by its transaction's reference_code.
    async fn event(&self, id_or_code: &str) -> StoreResult<Option<Event>>;
    async fn attempts(&self, event_id: &str) -> StoreResult<Vec<Attempt>>;
    /// Queues an event for one more delivery now; refused while one is under way.
    async fn requeue_event(&self, event_id: &str) -> StoreResult<()>;

    // --- audit ------------------------------------------------------------
    /// Runs every [`audit::CHECKS`] query on one consistent snapshot.
    async fn audit(&self) -> StoreResult<Vec<audit::CheckOutcome>>;

    /// How many purchases are `processing`, and since when the oldest.
    async fn fulfilment_backlog(&self) -> StoreResult<Backlog>;
}
