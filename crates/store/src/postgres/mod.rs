//! The PostgreSQL backend of [`Store`]: the same tables, rules and answers as
//! the SQLite backend, for when one machine is not enough and several
//! `billpay serve` processes share one database.
//!
//! - Every trait method is one transaction on a pooled connection
//!   (deadpool-postgres, [`connection`]), or statements that each commit on
//!   their own; serialisation failures and deadlocks are retried ([`error`]).
//! - Live purchases and the workers' single-statement writes that lock no
//!   wallet are **group-committed** by one engine ([`batch`]): up to
//!   [`MAX_BATCH`] queued statements pipelined in one transaction, one
//!   COMMIT, then each caller is answered. Purchases (calls of the
//!   `billpay_place_purchase` function) run in per-wallet lanes; a batch
//!   locks wallets in account order, so batches of different nodes never
//!   deadlock. Should a batch fail as a whole, each of its statements is
//!   retried in a transaction of its own.
//! - Workers claim due rows with `FOR UPDATE SKIP LOCKED` plus a lease
//!   (`lease_until`), so several nodes never take the same work, and a node
//!   that dies mid-lease has its work taken over when the lease expires.
//!
//! One module per area of the trait (accounts, keys, wallet, catalogue,
//! purchases, sessions, fulfilment, events, audit); the long statements are
//! in `sql/`.

mod accounts;
mod audit;
mod batch;
mod catalogue;
mod connection;
mod error;
mod events;
mod fulfilment;
mod keys;
mod migrate;
mod purchases;
mod rows;
pub mod scratch;
mod sessions;
mod statements;
mod wallet;

pub use batch::MAX_BATCH;
pub use error::PgError;

use crate::*;
use batch::Lanes;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::{AccountId, KeyId, Kobo};
use deadpool_postgres::Pool;
use purchases::PurchaseJob;
use statements::StatementJob;
use std::time::Duration;

/// Tuning of the PostgreSQL backend.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// Connections in the pool at most.
    pub pool_size: usize,
    /// Group-commit live purchases (on by default); off, each purchase is its
    /// own transaction (kept for measuring, see docs/benchmarks.md).
    pub group_commit: bool,
    /// Group-commit transactions in flight at once (each on its own
    /// connection). Purchases run in this many lanes, a wallet always in the
    /// same one.
    pub batches_in_flight: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            group_commit: true,
            batches_in_flight: 4,
        }
    }
}

pub struct PostgresStore {
    pool: Pool,
    /// Live purchases, one queue per lane (a wallet always the same lane).
    purchases: Option<Lanes<PurchaseJob>>,
    /// The workers' single-statement writes, lanes sharing one queue.
    statements: Option<Lanes<StatementJob>>,
}

impl PostgresStore {
    /// Connects, migrates (once, whoever comes first), seeds the default
    /// catalogue on first start, and starts the group-commit lanes.
    pub async fn open(url: &str) -> StoreResult<PostgresStore> {
        Self::open_with(url, PostgresOptions::default()).await
    }

    pub async fn open_with(url: &str, options: PostgresOptions) -> StoreResult<PostgresStore> {
        let pool = connection::pool(url, options.pool_size)?;
        migrate::migrate(&pool).await?;
        let lanes = options.batches_in_flight;
        let store = PostgresStore {
            purchases: options
                .group_commit
                .then(|| Lanes::one_queue_each(&pool, lanes)),
            statements: options
                .group_commit
                .then(|| Lanes::one_shared_queue(&pool, lanes)),
            pool,
        };
        catalogue::seed_default(&store).await?;
        Ok(store)
    }
}

/// Each method forwards to its area's module.
#[async_trait]
impl Store for PostgresStore {
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account> {
        accounts::create(self, new).await
    }

    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
        accounts::by_id(self, id).await
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        accounts::by_email(self, email).await
    }

    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()> {
        accounts::set_status(self, id, status).await
    }

    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()> {
        accounts::set_password(self, id, password_hash).await
    }

    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey> {
        keys::create(self, new).await
    }

    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
        keys::by_id(self, id).await
    }

    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>> {
        keys::of_account(self, account).await
    }

    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>> {
        keys::authenticate(self, key_hash).await
    }

    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey> {
        keys::update(self, id, change).await
    }

    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()> {
        keys::touch(self, id).await
    }

    async fn balance(&self, account: AccountId) -> StoreResult<Kobo> {
        wallet::balance(self, account).await
    }

    async fn credit(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
    ) -> StoreResult<Credit> {
        wallet::credit(self, account, amount, reference).await
    }

    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>> {
        wallet::ledger(self, account, limit).await
    }

    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo> {
        wallet::ledger_sum(self, account).await
    }

    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>> {
        wallet::of_transaction(self, code).await
    }

    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)> {
        catalogue::current(self).await
    }

    async fn catalogue_version(&self) -> StoreResult<i64> {
        catalogue::version(self).await
    }

    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()> {
        catalogue::replace(self, catalogue).await
    }

    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String> {
        catalogue::set_active(self, target, active).await
    }

    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo> {
        purchases::check(self, account, reference, amount).await
    }

    async fn place_purchase(&self, new: NewPurchase) -> StoreResult<Transaction> {
        purchases::place(self, new).await
    }

    async fn transaction(
        &self,
        account: Option<AccountId>,
        lookup: TxLookup,
    ) -> StoreResult<Option<Transaction>> {
        purchases::find(self, account, lookup).await
    }

    async fn transactions(&self, filter: TxFilter) -> StoreResult<Vec<Transaction>> {
        purchases::list(self, filter).await
    }

    async fn daily_spend(&self, account: AccountId, since: &str) -> StoreResult<Vec<DailySpend>> {
        purchases::daily_spend(self, account, since).await
    }

    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()> {
        sessions::create(self, token_hash, account, expires_at_ms).await
    }

    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>> {
        sessions::find(self, token_hash).await
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        sessions::delete(self, token_hash).await
    }

    async fn claim_fulfilments(
        &self,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        fulfilment::claim(self, limit, lease).await
    }

    async fn renew_fulfilment_leases(
        &self,
        codes: Vec<String>,
        lease: Duration,
    ) -> StoreResult<()> {
        fulfilment::renew_leases(self, codes, lease).await
    }

    async fn mark_submitted(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()> {
        fulfilment::mark_submitted(self, code, supplier, supplier_reference).await
    }

    async fn reschedule(&self, code: &str, delay: Duration, note: &str) -> StoreResult<()> {
        fulfilment::reschedule(self, code, delay, note).await
    }

    async fn finalize(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
        fulfilment::finalize(self, code, fin).await
    }

    async fn claim_events(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>> {
        events::claim(self, limit, lease, skip_keys).await
    }

    async fn record_delivery(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        events::record_delivery(self, event_id, attempt, next).await
    }

    async fn events(&self, filter: EventFilter) -> StoreResult<Vec<Event>> {
        events::list(self, filter).await
    }

    async fn event(&self, id_or_code: &str) -> StoreResult<Option<Event>> {
        events::find(self, id_or_code).await
    }

    async fn attempts(&self, event_id: &str) -> StoreResult<Vec<Attempt>> {
        events::attempts(self, event_id).await
    }

    async fn requeue_event(&self, event_id: &str) -> StoreResult<()> {
        events::requeue(self, event_id).await
    }

    async fn audit(&self) -> StoreResult<Vec<crate::audit::CheckOutcome>> {
        audit::run(self).await
    }

    async fn fulfilment_backlog(&self) -> StoreResult<Backlog> {
        fulfilment::backlog(self).await
    }
}
