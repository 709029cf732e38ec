//! What a purchase delivered — electricity tokens, exam and e-pin pins and
//! serials — is money: read from a stolen database file it can be used. So,
//! like webhook secrets, it is stored sealed (ChaCha20-Poly1305 under the
//! master key): [`SealedStore`] wraps either backend, seals a transaction's
//! `result` and its webhook payload as `finalize` writes them, and opens them
//! as they are read, so every reader (API, dashboard, CLI, webhook delivery)
//! sees them in clear and nothing else does.
//!
//! Rows written before sealing existed are read as they are (clear JSON):
//! a sealed value is recognisable (`{"sealed": "sealed:…"}`, `sealed:…`).

use crate::*;
use billpay_domain::sealed::SecretBox;
use serde_json::{Value, json};

const SEALED: &str = "sealed:";

pub struct SealedStore {
    inner: SharedStore,
    /// The master key, or why there is none (said when a value needs it).
    secrets: Result<SecretBox, String>,
}

impl SealedStore {
    pub fn wrap(inner: SharedStore, secrets: Result<SecretBox, String>) -> SharedStore {
        Arc::new(SealedStore { inner, secrets })
    }

    fn secrets(&self) -> StoreResult<&SecretBox> {
        self.secrets.as_ref().map_err(|why| {
            StoreError::Invalid(format!(
                "delivered pins are sealed under the master key: {why}"
            ))
        })
    }

    fn seal_text(&self, clear: &str) -> StoreResult<String> {
        Ok(format!("{SEALED}{}", self.secrets()?.seal(clear)))
    }

    fn open_text(&self, stored: String) -> StoreResult<String> {
        let Some(sealed) = stored.strip_prefix(SEALED) else {
            return Ok(stored); // written before sealing: clear
        };
        self.secrets()?
            .open(sealed)
            .map_err(|e| StoreError::Invalid(format!("cannot open a delivered pin: {e}")))
    }

    /// The result stays a JSON object, so the column remains valid JSON.
    fn seal_result(&self, result: Value) -> StoreResult<Value> {
        if result.as_object().is_some_and(|o| o.is_empty()) {
            return Ok(result);
        }
        Ok(json!({ "sealed": self.seal_text(&result.to_string())? }))
    }

    fn open_result(&self, result: Value) -> StoreResult<Value> {
        let Some(sealed) = result.get("sealed").and_then(Value::as_str) else {
            return Ok(result);
        };
        let clear = self.open_text(sealed.to_owned())?;
        serde_json::from_str(&clear).map_err(|e| StoreError::Backend(e.to_string()))
    }

    fn open_tx(&self, mut tx: Transaction) -> StoreResult<Transaction> {
        tx.result = self.open_result(tx.result)?;
        Ok(tx)
    }

    fn open_txs(&self, txs: Vec<Transaction>) -> StoreResult<Vec<Transaction>> {
        txs.into_iter().map(|tx| self.open_tx(tx)).collect()
    }

    fn open_event(&self, mut event: Event) -> StoreResult<Event> {
        event.payload = self.open_text(event.payload)?;
        Ok(event)
    }

    fn open_events(&self, events: Vec<Event>) -> StoreResult<Vec<Event>> {
        events.into_iter().map(|e| self.open_event(e)).collect()
    }
}

#[async_trait]
impl Store for SealedStore {
    // --- what is sealed: results and webhook payloads ----------------------
    async fn finalize(&self, code: &str, mut fin: Finalization) -> StoreResult<bool> {
        fin.result = self.seal_result(fin.result)?;
        fin.event_payload = self.seal_text(&fin.event_payload)?;
        self.inner.finalize(code, fin).await
    }
    async fn place_purchase(&self, new: NewPurchase) -> StoreResult<Transaction> {
        self.open_tx(self.inner.place_purchase(new).await?)
    }
    async fn transaction(
        &self,
        account: Option<AccountId>,
        lookup: TxLookup,
    ) -> StoreResult<Option<Transaction>> {
        let tx = self.inner.transaction(account, lookup).await?;
        tx.map(|tx| self.open_tx(tx)).transpose()
    }
    async fn transactions(&self, filter: TxFilter) -> StoreResult<Vec<Transaction>> {
        self.open_txs(self.inner.transactions(filter).await?)
    }
    async fn claim_fulfilments(
        &self,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        self.open_txs(self.inner.claim_fulfilments(limit, lease).await?)
    }
    async fn claim_events(
        &self,
        limit: u32,
        lease: Duration,
        skip_keys: Vec<KeyId>,
    ) -> StoreResult<Vec<Event>> {
        self.open_events(self.inner.claim_events(limit, lease, skip_keys).await?)
    }
    async fn events(&self, filter: EventFilter) -> StoreResult<Vec<Event>> {
        self.open_events(self.inner.events(filter).await?)
    }
    async fn event(&self, id_or_code: &str) -> StoreResult<Option<Event>> {
        let event = self.inner.event(id_or_code).await?;
        event.map(|e| self.open_event(e)).transpose()
    }

    // --- everything else passes through ------------------------------------
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account> {
        self.inner.create_account(new).await
    }
    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
        self.inner.account(id).await
    }
    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        self.inner.account_by_email(email).await
    }
    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()> {
        self.inner.set_account_status(id, status).await
    }
    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()> {
        self.inner.set_account_password(id, password_hash).await
    }
    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey> {
        self.inner.create_api_key(new).await
    }
    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
        self.inner.api_key(id).await
    }
    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>> {
        self.inner.api_keys(account).await
    }
    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>> {
        self.inner.authenticate(key_hash).await
    }
    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey> {
        self.inner.update_api_key(id, change).await
    }
    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()> {
        self.inner.touch_api_key(id).await
    }
    async fn balance(&self, account: AccountId) -> StoreResult<Kobo> {
        self.inner.balance(account).await
    }
    async fn credit(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
    ) -> StoreResult<Credit> {
        self.inner.credit(account, amount, reference).await
    }
    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>> {
        self.inner.ledger(account, limit).await
    }
    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo> {
        self.inner.ledger_sum(account).await
    }
    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>> {
        self.inner.ledger_for_transaction(code).await
    }
    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)> {
        self.inner.catalogue().await
    }
    async fn catalogue_version(&self) -> StoreResult<i64> {
        self.inner.catalogue_version().await
    }
    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()> {
        self.inner.replace_catalogue(catalogue).await
    }
    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String> {
        self.inner.set_catalogue_active(target, active).await
    }
    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo> {
        self.inner.check_purchase(account, reference, amount).await
    }
    async fn daily_spend(&self, account: AccountId, since: &str) -> StoreResult<Vec<DailySpend>> {
        self.inner.daily_spend(account, since).await
    }
    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()> {
        self.inner
            .create_session(token_hash, account, expires_at_ms)
            .await
    }
    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>> {
        self.inner.session(token_hash).await
    }
    async fn delete_session(&self, token_hash: &str) -> StoreResult<()> {
        self.inner.delete_session(token_hash).await
    }
    async fn renew_fulfilment_leases(
        &self,
        codes: Vec<String>,
        lease: Duration,
    ) -> StoreResult<()> {
        self.inner.renew_fulfilment_leases(codes, lease).await
    }
    async fn mark_submitted(
        &self,
        code: &str,
        supplier: &str,
        supplier_reference: Option<&str>,
    ) -> StoreResult<()> {
        self.inner
            .mark_submitted(code, supplier, supplier_reference)
            .await
    }
    async fn reschedule(&self, code: &str, delay: Duration, note: &str) -> StoreResult<()> {
        self.inner.reschedule(code, delay, note).await
    }
    async fn record_delivery(
        &self,
        event_id: &str,
        attempt: NewAttempt,
        next: EventNext,
    ) -> StoreResult<()> {
        self.inner.record_delivery(event_id, attempt, next).await
    }
    async fn attempts(&self, event_id: &str) -> StoreResult<Vec<Attempt>> {
        self.inner.attempts(event_id).await
    }
    async fn requeue_event(&self, event_id: &str) -> StoreResult<()> {
        self.inner.requeue_event(event_id).await
    }
    async fn audit(&self) -> StoreResult<Vec<audit::CheckOutcome>> {
        self.inner.audit().await
    }

    async fn fulfilment_backlog(&self) -> StoreResult<Backlog> {
        self.inner.fulfilment_backlog().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn seals_what_is_written_and_reads_old_clear_rows() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("s.db").display());
        let key = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
        let sealed = SealedStore {
            inner: open(&url).await.unwrap(),
            secrets: Ok(key),
        };
        let result = json!({ "pin": "1234-5678", "units": 2.5 });
        let stored = sealed.seal_result(result.clone()).unwrap();
        assert!(!stored.to_string().contains("1234-5678"), "{stored}");
        assert_eq!(sealed.open_result(stored).unwrap(), result);
        // a clear row from before sealing reads as it is
        assert_eq!(sealed.open_result(result.clone()).unwrap(), result);
        assert_eq!(sealed.open_text("{\"a\":1}".into()).unwrap(), "{\"a\":1}");
        // without a master key a sealed value cannot be written or read, and says why
        let keyless = SealedStore {
            inner: open(&url).await.unwrap(),
            secrets: Err("set BILLPAY_MASTER_KEY".into()),
        };
        let sealed_text = sealed.seal_text("secret").unwrap();
        let err = keyless.open_text(sealed_text).unwrap_err().to_string();
        assert!(err.contains("set BILLPAY_MASTER_KEY"), "{err}");
    }
}
