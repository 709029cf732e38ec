//! The embedded SQLite backend of [`Store`]: one writer thread that
//! group-commits every write, reader threads for the reads, and the point
//! reads of the request path on the caller's own connection ([`engine`]).
//!
//! One module per area of the trait (accounts, keys, wallet, catalogue,
//! purchases, sessions, fulfilment, events, audit); the long statements are
//! in `sql/`.

mod accounts;
mod audit;
pub mod backup;
mod catalogue;
mod claims;
mod engine;
mod events;
mod fulfilment;
mod keys;
mod purchases;
mod rows;
mod sessions;
mod statements;
mod wallet;

use crate::*;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::{AccountId, KeyId, Kobo};
use engine::Engine;
use std::time::Duration;

pub use engine::path_from_url;

pub struct SqliteStore {
    engine: Engine,
}

impl SqliteStore {
    /// Opens (creating and migrating) the database, and seeds the default
    /// catalogue on first start.
    pub async fn open(url: &str) -> StoreResult<SqliteStore> {
        let path = path_from_url(url)?;
        let engine = tokio::task::spawn_blocking(move || Engine::open(path))
            .await
            .map_err(|e| StoreError::Backend(e.to_string()))??;
        catalogue::seed_default(&engine).await?;
        Ok(SqliteStore { engine })
    }
}

/// Each method forwards to its area's module.
#[async_trait]
impl Store for SqliteStore {
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account> {
        accounts::create(&self.engine, new).await
    }

    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
        accounts::by_id(&self.engine, id).await
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        accounts::by_email(&self.engine, email).await
    }

    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()> {
        accounts::set_status(&self.engine, id, status).await
    }

    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()> {
        accounts::set_password(&self.engine, id, password_hash).await
    }

    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey> {
        keys::create(&self.engine, new).await
    }

    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
        keys::by_id(&self.engine, id).await
    }

    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>> {
        keys::of_account(&self.engine, account).await
    }

    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>> {
        keys::authenticate(&self.engine, key_hash)
    }

    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey> {
        keys::update(&self.engine, id, change).await
    }

    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()> {
        keys::touch(&self.engine, id).await
    }

    async fn balance(&self, account: AccountId) -> StoreResult<Kobo> {
        wallet::balance(&self.engine, account)
    }

    async fn credit(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
    ) -> StoreResult<Credit> {
        wallet::credit(&self.engine, account, amount, reference).await
    }

    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>> {
        wallet::ledger(&self.engine, account, limit).await
    }

    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo> {
        wallet::ledger_sum(&self.engine, account).await
    }

    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>> {
        wallet::of_transaction(&self.engine, code).await
    }

    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)> {
        catalogue::current(&self.engine).await
    }

    async fn catalogue_version(&self) -> StoreResult<i64> {
        catalogue::version(&self.engine)
    }

    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()> {
        catalogue::replace(&self.engine, catalogue).await
    }

    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String> {
        catalogue::set_active(&self.engine, target, active).await
    }

    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo> {
        purchases::check(&self.engine, account, reference, amount)
    }

    async fn place_purchase(&self, new: NewPurchase) -> StoreResult<Transaction> {
        purchases::place(&self.engine, new).await
    }

    async fn transaction(
        &self,
        account: Option<AccountId>,
        lookup: TxLookup,
    ) -> StoreResult<Option<Transaction>> {
        purchases::find(&self.engine, account, lookup).await
    }

    async fn transactions(&self, filter: TxFilter) -> StoreResult<Vec<Transaction>> {
        purchases::list(&self.engine, filter).await
    }

    async fn daily_spend(&self, account: AccountId, since: &str) -> StoreResult<Vec<DailySpend>> {
        purchases::daily_spend(&self.engine, account, since).await
    }

    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()> {
        sessions::create(&self.engine, token_hash, account, expires_at_ms).await
    }

    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>> {
        sessions::find(&self.engine, token_hash).await
    }

    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        sessions::delete(&self.engine, token_hash).await
    }

    async fn claim_fulfilments(
        &self,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        fulfilment::claim(&self.engine, limit, lease).await
    }

    async fn renew_fulfilment_leases(
        &self,
        codes: Vec<String>,
        lease: Duration,
    ) -> StoreResult<()> {
        fulfilment::renew_leases(&self.engine, codes, lease).await
    }

    async fn mark_submitted(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()> {
        fulfilment::mark_submitted(&self.engine, code, supplier, supplier_reference).await
    }

    async fn reschedule(&self, code: &str, delay: Duration, note: &str) -> StoreResult<()> {
        fulfilment::reschedule(&self.engine, code, delay, note).await
    }

    async fn finalize(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
        fulfilment::finalize(&self.engine, code, fin).await
    }

    async fn claim_events(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>> {
        events::claim(&self.engine, limit, lease, skip_keys).await
    }

    async fn record_delivery(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        events::record_delivery(&self.engine, event_id, attempt, next).await
    }

    async fn events(&self, filter: EventFilter) -> StoreResult<Vec<Event>> {
        events::list(&self.engine, filter).await
    }

    async fn event(&self, id_or_code: &str) -> StoreResult<Option<Event>> {
        events::find(&self.engine, id_or_code).await
    }

    async fn attempts(&self, event_id: &str) -> StoreResult<Vec<Attempt>> {
        events::attempts(&self.engine, event_id).await
    }

    async fn requeue_event(&self, event_id: &str) -> StoreResult<()> {
        events::requeue(&self.engine, event_id).await
    }

    async fn audit(&self) -> StoreResult<Vec<crate::audit::CheckOutcome>> {
        audit::run(&self.engine).await
    }

    async fn fulfilment_backlog(&self) -> StoreResult<Backlog> {
        fulfilment::backlog(&self.engine).await
    }
}
