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
use billpay_domain::Product;
use billpay_domain::pricing::{PriceBook, Rule, Scope};
use billpay_domain::sealed::SecretBox;
use serde_json::{Value, json};

const SEALED: &str = "sealed:";

pub struct SealedStore {
    inner: SharedStore,
    sealer: Arc<Sealer>,
}

/// The master key (or why there is none) and what it seals: held by
/// [`SealedStore`], and handed to a unit of work (`crate::work`) whose
/// changes write something sealed.
pub(crate) struct Sealer {
    /// The master key, or why there is none (said when a value needs it).
    secrets: Result<SecretBox, String>,
}

impl SealedStore {
    pub fn wrap(inner: SharedStore, secrets: Result<SecretBox, String>) -> SharedStore {
        let sealer = Arc::new(Sealer { secrets });
        Arc::new(SealedStore { inner, sealer })
    }

    fn seal_text(&self, clear: &str) -> StoreResult<String> {
        self.sealer.seal_text(clear)
    }

    fn open_text(&self, stored: String) -> StoreResult<String> {
        self.sealer.open_text(stored)
    }

    fn seal_result(&self, result: Value) -> StoreResult<Value> {
        self.sealer.seal_result(result)
    }

    fn open_result(&self, result: Value) -> StoreResult<Value> {
        self.sealer.open_result(result)
    }

    fn seal_finalization(&self, fin: Finalization) -> StoreResult<Finalization> {
        self.sealer.seal_finalization(fin)
    }

    fn seal_draft(&self, draft: NoticeDraft) -> StoreResult<NoticeDraft> {
        Ok(NoticeDraft {
            data: self.seal_result(draft.data)?,
            ..draft
        })
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

    /// A notice's data with its secret fields ([`SECRET_NOTICE_FIELDS`])
    /// moved into one sealed field; data without them is unchanged. For a
    /// store area that enqueues a notice with its cause, sealed by the caller.
    pub fn seal_notice_data(&self, mut data: Value) -> StoreResult<Value> {
        let Some(fields) = data.as_object_mut() else {
            return Ok(data);
        };
        let secret: serde_json::Map<String, Value> = SECRET_NOTICE_FIELDS
            .iter()
            .filter_map(|name| fields.remove(*name).map(|v| ((*name).to_owned(), v)))
            .collect();
        if !secret.is_empty() {
            let sealed = self.seal_text(&Value::Object(secret).to_string())?;
            fields.insert("sealed".into(), Value::String(sealed));
        }
        Ok(data)
    }

    /// The notice with its sealed fields back in its data.
    fn open_notice(&self, mut notice: Notice) -> StoreResult<Notice> {
        let opened = self.open_result(notice.data.clone())?;
        if let (Some(fields), Value::Object(secret)) = (notice.data.as_object_mut(), opened)
            && fields.remove("sealed").is_some()
        {
            fields.extend(secret);
        }
        Ok(notice)
    }
}

impl Sealer {
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
        serde_json::from_str(&clear).map_err(StoreError::caused)
    }

    /// A finalization's result and webhook payload, sealed as they are written.
    pub(crate) fn seal_finalization(&self, mut fin: Finalization) -> StoreResult<Finalization> {
        fin.result = self.seal_result(fin.result)?;
        fin.event_payload = self.seal_text(&fin.event_payload)?;
        Ok(fin)
    }
}

/// What a notice's data may hold that must not be readable at rest: a
/// verification or reset code, a link carrying a token.
pub const SECRET_NOTICE_FIELDS: [&str; 2] = ["code", "link"];

/// An area with nothing sealed in it: each method passes through. The
/// methods that do seal something follow in `sealed { … }`, written out.
macro_rules! pass_through {
    ($area:ident { $(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)* }
     $(sealed { $($sealed:tt)* })?) => {
        #[async_trait]
        impl $area for SealedStore {
            $(async fn $name(&self $(, $arg: $ty)*) -> $ret {
                self.inner.$name($($arg),*).await
            })*
            $($($sealed)*)?
        }
    };
}

pass_through!(AccountStore {
    fn create_account(&self, new: NewAccount) -> StoreResult<Account>;
    fn account(&self, id: AccountId) -> StoreResult<Option<Account>>;
    fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>>;
    fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()>;
    fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()>;
});

pass_through!(KeyStore {
    fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey>;
    fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>>;
    fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>>;
    fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>>;
    fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey>;
    fn touch_api_key(&self, id: KeyId) -> StoreResult<()>;
});

pass_through!(WalletStore {
    fn balance(&self, account: AccountId) -> StoreResult<Kobo>;
    fn credit_from(&self, account: AccountId, amount: Kobo, source: CreditSource, reference: &str) -> StoreResult<Credit>;
    fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>>;
    fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo>;
    fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>>;
});

pass_through!(CatalogueStore {
    fn catalogue(&self) -> StoreResult<(i64, Catalogue)>;
    fn catalogue_version(&self) -> StoreResult<i64>;
    fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()>;
    fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String>;
});

pass_through!(PinStore {
    fn set_transaction_pin(&self, account: AccountId, pin_hash: String, shop_key: NewApiKey) -> StoreResult<KeyId>;
    fn transaction_pin(&self, account: AccountId) -> StoreResult<Option<PinState>>;
    fn take_pin_try(&self, account: AccountId) -> StoreResult<PinTry>;
    fn pin_matched(&self, account: AccountId) -> StoreResult<()>;
});

pass_through!(BeneficiaryStore {
    fn save_beneficiary(&self, new: NewBeneficiary) -> StoreResult<Beneficiary>;
    fn beneficiaries(&self, account: AccountId, product: Product) -> StoreResult<Vec<Beneficiary>>;
    fn delete_beneficiary(&self, account: AccountId, id: &str) -> StoreResult<bool>;
    fn recent_recipients(&self, account: AccountId, product: Product, limit: u32) -> StoreResult<Vec<String>>;
});

pass_through!(PrivacyStore {
    fn account_closure(&self, account: AccountId) -> StoreResult<Option<Closure>>;
    fn ledger_page(&self, account: AccountId, after_id: i64, limit: u32) -> StoreResult<Vec<LedgerEntry>>;
    fn purchases_page(&self, account: AccountId, after: Option<PurchaseCursor>, limit: u32) -> StoreResult<Vec<PurchaseRecord>>;
    fn all_beneficiaries(&self, account: AccountId) -> StoreResult<Vec<Beneficiary>>;
});

pass_through!(SessionStore {
    fn create_session(&self, token_hash: &str, account: AccountId, expires_at_ms: i64) -> StoreResult<()>;
    fn session(&self, token_hash: &str) -> StoreResult<Option<Session>>;
    fn delete_session(&self, token_hash: &str) -> StoreResult<()>;
});

pass_through!(CheckoutStore {
    fn create_checkout(&self, new: NewCheckout) -> StoreResult<Checkout>;
    fn checkout(&self, reference: &str) -> StoreResult<Option<Checkout>>;
    fn open_checkouts(&self, gateway: &str, since: &str) -> StoreResult<Vec<Checkout>>;
    fn account_checkouts(&self, account: AccountId, limit: u32) -> StoreResult<Vec<Checkout>>;
    fn close_checkout(&self, reference: &str, status: CheckoutStatus) -> StoreResult<bool>;
    fn save_reservation_identity(&self, identity: ReservationIdentity) -> StoreResult<()>;
    fn reservation_identity(&self, account: AccountId, gateway: &str) -> StoreResult<Option<ReservationIdentity>>;
});

pass_through!(FundingStore {
    fn save_reservation(&self, new: NewReservation) -> StoreResult<()>;
    fn funding_customer(&self, account: AccountId, gateway: &str) -> StoreResult<Option<String>>;
    fn funding_customers(&self, gateway: &str) -> StoreResult<Vec<String>>;
    fn reserved_accounts(&self, account: Option<AccountId>) -> StoreResult<Vec<ReservedAccount>>;
    fn funding_owner(&self, gateway: &str, customer_ref: Option<&str>, account_number: Option<&str>) -> StoreResult<Option<AccountId>>;
    fn record_funding(&self, new: NewFunding) -> StoreResult<FundingRecorded>;
    fn funding_event(&self, id_or_reference: &str) -> StoreResult<Option<FundingEvent>>;
    fn funding_events(&self, filter: FundingFilter) -> StoreResult<Vec<FundingEvent>>;
    fn take_job_lease(&self, name: &str, holder: &str, lease: Duration) -> StoreResult<bool>;
    fn funding_totals(&self, from: &str, until: &str) -> StoreResult<FundingTotals>;
});

pass_through!(AuditStore {
    fn audit(&self) -> StoreResult<Vec<audit::CheckOutcome>>;
});

pass_through!(PricingStore {
    fn price_book(&self) -> StoreResult<(i64, PriceBook)>;
    fn pricing_version(&self) -> StoreResult<i64>;
    fn create_tier(&self, name: &str) -> StoreResult<()>;
    fn set_price_rule(&self, tier: &str, scope: Scope, rule: Option<Rule>) -> StoreResult<bool>;
    fn set_account_tier(&self, account: AccountId, tier: Option<&str>) -> StoreResult<()>;
    fn sales(&self, from: String, until: String) -> StoreResult<Vec<SalesGroup>>;
});

pass_through!(OperatorStore {
    fn operator(&self, id: i64) -> StoreResult<Option<Operator>>;
    fn operator_by_email(&self, email: &str) -> StoreResult<Option<Operator>>;
    fn operators(&self) -> StoreResult<Vec<Operator>>;
    fn create_operator_session(&self, token_hash: &str, operator: i64, expires_at_ms: i64) -> StoreResult<()>;
    fn operator_session(&self, token_hash: &str) -> StoreResult<Option<OperatorSession>>;
    fn touch_operator_session(&self, token_hash: &str) -> StoreResult<()>;
    fn claim_totp_step(&self, operator: i64, step: u64) -> StoreResult<bool>;
    fn delete_operator_session(&self, token_hash: &str) -> StoreResult<()>;
    fn append_log(&self, log: NewLogEntry) -> StoreResult<()>;
    fn operator_log(&self, filter: LogFilter) -> StoreResult<Vec<LogEntry>>;
    fn search_accounts(&self, query: &str, limit: u32) -> StoreResult<Vec<Account>>;
    fn account_names(&self, ids: &[AccountId]) -> StoreResult<std::collections::HashMap<AccountId, String>>;
    fn last_plan_costs(&self) -> StoreResult<Vec<PlanCost>>;
    fn sales_summary(&self, since: &str) -> StoreResult<SalesSummary>;
    fn supplier_outcomes(&self, since: &str) -> StoreResult<Vec<SupplierOutcome>>;
});

pass_through!(AccountCareStore {
    fn check_email_code(&self, account: AccountId, code_hash: String, max_attempts: u32) -> StoreResult<CodeCheck>;
    fn pending_email(&self, account: AccountId) -> StoreResult<Option<String>>;
    fn password_reset_valid(&self, token_hash: &str) -> StoreResult<bool>;
    fn reset_password(&self, token_hash: &str, password_hash: String) -> StoreResult<Option<AccountId>>;
    fn pin_reset_account(&self, token_hash: &str) -> StoreResult<Option<Account>>;
    fn reset_pin(&self, token_hash: &str, pin_hash: String, shop_key: NewApiKey) -> StoreResult<Option<AccountId>>;
    fn change_password(&self, account: AccountId, password_hash: String, keep_session: &str) -> StoreResult<()>;
    fn update_profile(&self, account: AccountId, name: String, phone: Option<String>) -> StoreResult<Account>;
    fn prune_unverified(&self, created_before: &str) -> StoreResult<u64>;
    fn sign_up_counts(&self, today_from: &str, month_from: &str) -> StoreResult<SignUpCounts>;
} sealed {
    // A code or reset link in a notice's data is a secret at rest: sealed
    // whole, as a delivered pin is (`{"sealed": "sealed:…"}`).
    async fn sign_up(&self, mut new: NewSignUp) -> StoreResult<Account> {
        new.code.notice = self.seal_draft(new.code.notice)?;
        self.inner.sign_up(new).await
    }
    async fn issue_email_code(&self, account: AccountId, email: &str, mut code: EmailCode) -> StoreResult<()> {
        code.notice = self.seal_draft(code.notice)?;
        self.inner.issue_email_code(account, email, code).await
    }
    async fn start_password_reset(&self, mut new: NewPasswordReset) -> StoreResult<()> {
        new.notice = self.seal_draft(new.notice)?;
        self.inner.start_password_reset(new).await
    }
});

pass_through!(NoticeStore {
    fn record_notice(&self, id: &str, outcome: NoticeOutcome) -> StoreResult<()>;
    fn notices(&self, filter: NoticeFilter) -> StoreResult<Vec<Notice>>;
    fn notice(&self, id: &str) -> StoreResult<Option<Notice>>;
    fn requeue_notice(&self, id: &str) -> StoreResult<()>;
    fn notice_preferences(&self, account: AccountId) -> StoreResult<NoticePreferences>;
    fn set_notice_preferences(&self, account: AccountId, choices: NoticePreferences) -> StoreResult<()>;
    fn low_balance_due(&self) -> StoreResult<bool>;
    fn watch_low_balances(&self, limit: u32) -> StoreResult<Vec<AccountId>>;
} sealed {
    /// A verification code or reset link is sealed at rest.
    async fn enqueue_notice(&self, mut notice: NewNotice) -> StoreResult<bool> {
        notice.data = self.seal_notice_data(notice.data)?;
        self.inner.enqueue_notice(notice).await
    }
    /// Only the worker's claim opens them (a listing shows them sealed).
    async fn claim_notices(
        &self,
        channels: Vec<String>,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Notice>> {
        let claimed = self.inner.claim_notices(channels, limit, lease).await?;
        claimed.into_iter().map(|n| self.open_notice(n)).collect()
    }
});

pass_through!(NoticeAdminStore {
    fn alert_opt_outs(&self, operator: i64) -> StoreResult<Vec<String>>;
    fn set_alert_opt_outs(&self, operator: i64, kinds: Vec<String>) -> StoreResult<()>;
    fn alert_recipients(&self, kind: &str) -> StoreResult<Vec<AlertRecipient>>;
    fn alert_channels(&self, operator: i64) -> StoreResult<AlertChannels>;
    fn set_alert_channels(&self, operator: i64, channels: AlertChannels) -> StoreResult<()>;
    fn accounts_created(&self, from: &str, until: &str) -> StoreResult<u64>;
});

pass_through!(LimitStore {
    fn level_limits(&self) -> StoreResult<Vec<crate::limits::LevelLimits>>;
    fn account_limits(&self, account: AccountId) -> StoreResult<crate::limits::AccountLimits>;
    fn blocklist(&self) -> StoreResult<Vec<crate::limits::BlockEntry>>;
    fn prune_usage(&self, before_day: &str, before_hour: i64) -> StoreResult<u64>;
} sealed {
    async fn held_purchases(&self, limit: u32) -> StoreResult<Vec<Transaction>> {
        self.open_txs(self.inner.held_purchases(limit).await?)
    }
});

/// A unit of work's changes seal what they write with this store's key.
#[async_trait]
impl crate::work::WorkStore for SealedStore {
    async fn run_work(
        &self,
        work: crate::work::Work,
    ) -> StoreResult<Box<dyn std::any::Any + Send>> {
        self.inner
            .run_work(work.sealed_with(self.sealer.clone()))
            .await
    }
}

/// A transaction's `result` is opened on every read.
#[async_trait]
impl PurchaseStore for SealedStore {
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
    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        recipient: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo> {
        self.inner
            .check_purchase(account, reference, recipient, amount)
            .await
    }
    async fn daily_spend(&self, account: AccountId, since: &str) -> StoreResult<Vec<DailySpend>> {
        self.inner.daily_spend(account, since).await
    }
}

/// `finalize` seals the result and the webhook payload; claims open them.
#[async_trait]
impl FulfilmentStore for SealedStore {
    async fn finalize(&self, code: &str, fin: Finalization) -> StoreResult<bool> {
        let fin = self.seal_finalization(fin)?;
        self.inner.finalize(code, fin).await
    }
    async fn claim_fulfilments(
        &self,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Transaction>> {
        self.open_txs(self.inner.claim_fulfilments(limit, lease).await?)
    }
    async fn claim_watches(&self, limit: u32, lease: Duration) -> StoreResult<Vec<Transaction>> {
        self.open_txs(self.inner.claim_watches(limit, lease).await?)
    }
    async fn rewatch(&self, code: &str, at_ms: Option<i64>) -> StoreResult<()> {
        self.inner.rewatch(code, at_ms).await
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
    async fn fulfilment_backlog(&self) -> StoreResult<Backlog> {
        self.inner.fulfilment_backlog().await
    }
    async fn needs_review_count(&self, before: &str, cap: u32) -> StoreResult<u64> {
        self.inner.needs_review_count(before, cap).await
    }
}

/// An event's payload is opened on every read.
#[async_trait]
impl EventStore for SealedStore {
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
            sealer: Arc::new(Sealer { secrets: Ok(key) }),
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
            sealer: Arc::new(Sealer {
                secrets: Err("set BILLPAY_MASTER_KEY".into()),
            }),
        };
        let sealed_text = sealed.seal_text("secret").unwrap();
        let err = keyless.open_text(sealed_text).unwrap_err().to_string();
        assert!(err.contains("set BILLPAY_MASTER_KEY"), "{err}");
    }
}
