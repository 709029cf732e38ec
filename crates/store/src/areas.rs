//! What the store does, one trait per area, so a new area (funding, pricing,
//! operators) adds its own trait instead of growing one long list. An area's
//! statements are written once in its module below (`areas/wallet.rs`), which
//! both engines run through `db.rs` (`for_both_engines!`); only purchase
//! placement is each engine's own (`place_purchase_here`); [`Store`] is every area at
//! once, implemented for whatever implements them all, and is what callers
//! hold (`SharedStore`): its areas' methods need no import.

mod account_care;
pub(crate) mod accounts;
mod audit;
pub(crate) mod beneficiaries;
pub(crate) mod catalogue;
pub(crate) mod checkouts;
mod claims;
pub(crate) mod events;
pub(crate) mod fulfilment;
pub(crate) mod funding;
pub(crate) mod keys;
pub(crate) mod limits;
mod low_balance;
pub(crate) mod notice_admin;
pub(crate) mod notices;
pub(crate) mod operators;
pub(crate) mod pins;
pub(crate) mod pricing;
pub(crate) mod privacy;
pub(crate) mod purchases;
mod sessions;
pub(crate) mod wallet;

use crate::*;
use async_trait::async_trait;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::pricing::{PriceBook, Rule, Scope};
use billpay_domain::{AccountId, KeyId, Kobo, Product};
pub use checkouts::{Checkout, CheckoutStatus, NewCheckout, ReservationIdentity};
use std::time::Duration;

pub use beneficiaries::{Beneficiary, NewBeneficiary};
pub use pins::{PinState, PinTry};
pub use privacy::{Closure, Erasure, PurchaseCursor, PurchaseRecord, tombstone};

/// Every area: what a backend (or a wrapper such as `SealedStore`) is.
pub trait Store:
    AccountStore
    + KeyStore
    + WalletStore
    + CatalogueStore
    + PurchaseStore
    + SessionStore
    + FulfilmentStore
    + EventStore
    + AuditStore
    + PricingStore
    + FundingStore
    + CheckoutStore
    + OperatorStore
    + crate::work::WorkStore
    + NoticeStore
    + NoticeAdminStore
    + AccountCareStore
    + PinStore
    + BeneficiaryStore
    + PrivacyStore
    + LimitStore
{
}

impl<T> Store for T where
    T: AccountStore
        + KeyStore
        + WalletStore
        + CatalogueStore
        + PurchaseStore
        + SessionStore
        + FulfilmentStore
        + EventStore
        + AuditStore
        + PricingStore
        + FundingStore
        + CheckoutStore
        + OperatorStore
        + crate::work::WorkStore
        + NoticeStore
        + NoticeAdminStore
        + AccountCareStore
        + PinStore
        + BeneficiaryStore
        + PrivacyStore
        + LimitStore
{
}

/// Pay now through a gateway's hosted checkout, and the identity numbers
/// (last 4 digits) given to reserve accounts (`areas/checkouts.rs`).
#[async_trait]
pub trait CheckoutStore: Send + Sync + 'static {
    async fn create_checkout(&self, new: NewCheckout) -> StoreResult<Checkout>;
    async fn checkout(&self, reference: &str) -> StoreResult<Option<Checkout>>;
    async fn open_checkouts(&self, gateway: &str, since: &str) -> StoreResult<Vec<Checkout>>;
    async fn account_checkouts(&self, account: AccountId, limit: u32)
    -> StoreResult<Vec<Checkout>>;
    async fn close_checkout(&self, reference: &str, status: CheckoutStatus) -> StoreResult<bool>;
    async fn save_reservation_identity(&self, identity: ReservationIdentity) -> StoreResult<()>;
    async fn reservation_identity(
        &self,
        account: AccountId,
        gateway: &str,
    ) -> StoreResult<Option<ReservationIdentity>>;
}

/// The notification outbox: notices written with their cause, sent by the worker.
#[async_trait]
pub trait NoticeStore: Send + Sync + 'static {
    async fn enqueue_notice(&self, notice: NewNotice) -> StoreResult<bool>;
    /// Leases up to `limit` due notices (PostgreSQL: skipping those another
    /// node is claiming), each counted as one more attempt.
    async fn claim_notices(
        &self,
        channels: Vec<String>,
        limit: u32,
        lease: Duration,
    ) -> StoreResult<Vec<Notice>>;
    /// How a send went; a notice no longer queued is left as it is. A
    /// [`NoticeOutcome::Refused`] also suppresses its address.
    async fn record_notice(&self, id: &str, outcome: NoticeOutcome) -> StoreResult<()>;
    /// Newest first.
    async fn notices(&self, filter: NoticeFilter) -> StoreResult<Vec<Notice>>;
    async fn notice(&self, id: &str) -> StoreResult<Option<Notice>>;
    /// Queues it to be sent again now, lifting a suppression of its address;
    /// refused with [`StoreError::DeliveryInProgress`] while a send holds it.
    async fn requeue_notice(&self, id: &str) -> StoreResult<()>;
    /// The customer's choices of optional notices (the defaults if never set).
    async fn notice_preferences(&self, account: AccountId) -> StoreResult<NoticePreferences>;
    async fn set_notice_preferences(
        &self,
        account: AccountId,
        choices: NoticePreferences,
    ) -> StoreResult<()>;
    /// Whether [`NoticeStore::watch_low_balances`] has anything to do (a read).
    async fn low_balance_due(&self) -> StoreResult<bool>;
    /// The low-balance watch, edge-triggered: arms again each watch whose
    /// balance is back at or above its mark, and tells up to `limit`
    /// customers with an armed watch under their mark (disarming it), once
    /// per episode. Answers the accounts told.
    async fn watch_low_balances(&self, limit: u32) -> StoreResult<Vec<AccountId>>;
}

/// The operators' side of the outbox: "resend one" with its log line,
/// which operator gets which alert, and the reads the alerts need.
#[async_trait]
pub trait NoticeAdminStore: Send + Sync + 'static {
    /// The alert kinds the operator turned off.
    async fn alert_opt_outs(&self, operator: i64) -> StoreResult<Vec<String>>;
    /// Replaces the alert kinds the operator turned off.
    async fn set_alert_opt_outs(&self, operator: i64, kinds: Vec<String>) -> StoreResult<()>;
    /// Active operators who have not turned `kind` off, whatever their role,
    /// with where it goes by each channel they chose.
    async fn alert_recipients(&self, kind: &str) -> StoreResult<Vec<AlertRecipient>>;
    /// How the operator gets alerts (the defaults when never changed).
    async fn alert_channels(&self, operator: i64) -> StoreResult<AlertChannels>;
    async fn set_alert_channels(&self, operator: i64, channels: AlertChannels) -> StoreResult<()>;
    /// Accounts created in `[from, until)` (RFC 3339 bounds).
    async fn accounts_created(&self, from: &str, until: &str) -> StoreResult<u64>;
}

/// Sign-up and account care: codes that prove an email address, password
/// resets, the profile (`areas/account_care.rs`). Each code or link is used
/// once, atomically; its notice is written with it.
#[async_trait]
pub trait AccountCareStore: Send + Sync + 'static {
    /// A customer's own account, unverified, with its first code and the
    /// code's notice; [`StoreError::EmailTaken`] (nothing written) when the
    /// address is anyone's.
    async fn sign_up(&self, new: NewSignUp) -> StoreResult<Account>;
    /// A fresh code (replacing any) proving `email` for `account` — its own
    /// address, or a new one that becomes its address once proven.
    async fn issue_email_code(
        &self,
        account: AccountId,
        email: &str,
        code: EmailCode,
    ) -> StoreResult<()>;
    /// One try of a code: counted atomically, at most `max_attempts` per code.
    async fn check_email_code(
        &self,
        account: AccountId,
        code_hash: String,
        max_attempts: u32,
    ) -> StoreResult<CodeCheck>;
    /// The new address an account asked to move to, while its code is live.
    async fn pending_email(&self, account: AccountId) -> StoreResult<Option<String>>;
    async fn start_password_reset(&self, new: NewPasswordReset) -> StoreResult<()>;
    /// Whether a reset link is unused and unexpired (to show its form).
    async fn password_reset_valid(&self, token_hash: &str) -> StoreResult<bool>;
    /// Uses a reset link once: the new password, every session ended.
    async fn reset_password(
        &self,
        token_hash: &str,
        password_hash: String,
    ) -> StoreResult<Option<AccountId>>;
    /// The active account a live PIN-reset link is for.
    async fn pin_reset_account(&self, token_hash: &str) -> StoreResult<Option<Account>>;
    /// Uses a PIN-reset link once and sets the new PIN (an argon2id hash),
    /// ending any lock; `shop_key` as for a first PIN. `None`: no live link.
    async fn reset_pin(
        &self,
        token_hash: &str,
        pin_hash: String,
        shop_key: NewApiKey,
    ) -> StoreResult<Option<AccountId>>;
    /// A signed-in customer's new password: their other sessions end.
    async fn change_password(
        &self,
        account: AccountId,
        password_hash: String,
        keep_session: &str,
    ) -> StoreResult<()>;
    async fn update_profile(
        &self,
        account: AccountId,
        name: String,
        phone: Option<String>,
    ) -> StoreResult<Account>;
    /// Removes self sign-ups created before `created_before` (RFC 3339),
    /// never verified, that hold no money, purchase, key or funding.
    async fn prune_unverified(&self, created_before: &str) -> StoreResult<u64>;
    /// Self sign-ups since each bound (RFC 3339).
    async fn sign_up_counts(&self, today_from: &str, month_from: &str)
    -> StoreResult<SignUpCounts>;
}

/// KYC levels, limits and the blocklist (issue 32; the checks run inside the
/// purchase's own transaction, see `PurchaseStore::place_purchase`).
#[async_trait]
pub trait LimitStore: Send + Sync + 'static {
    /// Every level and its limits, level 0 first.
    async fn level_limits(&self) -> StoreResult<Vec<crate::limits::LevelLimits>>;
    /// An account's level, the limits that apply, its own, and today's and
    /// the last 30 days' usage.
    async fn account_limits(&self, account: AccountId)
    -> StoreResult<crate::limits::AccountLimits>;
    async fn blocklist(&self) -> StoreResult<Vec<crate::limits::BlockEntry>>;
    /// Purchases held for review by a velocity rule or the largest balance
    /// (`held_for` says which), oldest first.
    async fn held_purchases(&self, limit: u32) -> StoreResult<Vec<Transaction>>;
    /// Deletes the usage no limit reads any more: the day's and the
    /// recipients' rows of Lagos days before `before_day` (`YYYY-MM-DD`) and
    /// the hourly counts of clock hours (UTC hours since 1970) before
    /// `before_hour`; answers the rows deleted. `limits::usage_prune_bounds`
    /// gives the bounds that keep what every limit reads.
    async fn prune_usage(&self, before_day: &str, before_hour: i64) -> StoreResult<u64>;
}

#[async_trait]
pub trait AccountStore: Send + Sync + 'static {
    async fn create_account(&self, new: NewAccount) -> StoreResult<Account>;
    async fn account(&self, id: AccountId) -> StoreResult<Option<Account>>;
    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>>;
    async fn set_account_status(&self, id: AccountId, status: AccountStatus) -> StoreResult<()>;
    async fn set_account_password(&self, id: AccountId, password_hash: String) -> StoreResult<()>;
}

#[async_trait]
pub trait KeyStore: Send + Sync + 'static {
    async fn create_api_key(&self, new: NewApiKey) -> StoreResult<ApiKey>;
    async fn api_key(&self, id: KeyId) -> StoreResult<Option<ApiKey>>;
    async fn api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>>;
    /// The key with this hash and its account's status; also stamps last use.
    async fn authenticate(&self, key_hash: &str) -> StoreResult<Option<(ApiKey, AccountStatus)>>;
    /// Refused with [`StoreError::KeyRevoked`] for a revoked key.
    async fn update_api_key(&self, id: KeyId, change: KeyChange) -> StoreResult<ApiKey>;
    /// Stamps `last_used_at` (callers throttle this; it is a write).
    async fn touch_api_key(&self, id: KeyId) -> StoreResult<()>;
}

#[async_trait]
pub trait WalletStore: Send + Sync + 'static {
    async fn balance(&self, account: AccountId) -> StoreResult<Kobo>;
    /// An operator's credit (`billpay wallet credit`): [`Self::credit_from`]
    /// with [`CreditSource::Operator`].
    async fn credit(
        &self,
        account: AccountId,
        amount: Kobo,
        reference: &str,
    ) -> StoreResult<Credit> {
        let operator = CreditSource::Operator;
        self.credit_from(account, amount, operator, reference).await
    }
    /// Credits once per (account, source, reference); a repeat is `applied: false`.
    async fn credit_from(
        &self,
        account: AccountId,
        amount: Kobo,
        source: CreditSource,
        reference: &str,
    ) -> StoreResult<Credit>;
    /// Newest first.
    async fn ledger(&self, account: AccountId, limit: u32) -> StoreResult<Vec<LedgerEntry>>;
    async fn ledger_sum(&self, account: AccountId) -> StoreResult<Kobo>;
    /// The entries of one transaction (its debit, and its refund if any).
    async fn ledger_for_transaction(&self, code: &str) -> StoreResult<Vec<LedgerEntry>>;
}

#[async_trait]
pub trait CatalogueStore: Send + Sync + 'static {
    /// The catalogue and its version (bumped on every change).
    async fn catalogue(&self) -> StoreResult<(i64, Catalogue)>;
    async fn catalogue_version(&self) -> StoreResult<i64>;
    async fn replace_catalogue(&self, catalogue: &Catalogue) -> StoreResult<()>;
    /// Enables/disables a provider (UUID or slug) or plan; says what changed.
    async fn set_catalogue_active(&self, target: &str, active: bool) -> StoreResult<String>;
}

#[async_trait]
pub trait PurchaseStore: Send + Sync + 'static {
    /// Test mode: the checks of a live purchase, changing nothing; returns the balance.
    /// The recipient is checked against the blocklist and its daily limit.
    async fn check_purchase(
        &self,
        account: AccountId,
        reference: &str,
        recipient: &str,
        amount: Kobo,
    ) -> StoreResult<Kobo>;
    /// One atomic write: reference, blocklist and limits (issue 32), debit,
    /// transaction (`processing`), ledger entry, usage.
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
}

/// Dashboard sessions.
#[async_trait]
pub trait SessionStore: Send + Sync + 'static {
    async fn create_session(
        &self,
        token_hash: &str,
        account: AccountId,
        expires_at_ms: i64,
    ) -> StoreResult<()>;
    /// The unexpired session with this token hash.
    async fn session(&self, token_hash: &str) -> StoreResult<Option<Session>>;
    async fn delete_session(&self, token_hash: &str) -> StoreResult<()>;
}

/// The fulfilment worker's queue of purchases.
#[async_trait]
pub trait FulfilmentStore: Send + Sync + 'static {
    /// Leases up to `limit` processing transactions that are due.
    async fn claim_fulfilments(&self, limit: u32, lease: Duration)
    -> StoreResult<Vec<Transaction>>;
    /// Leases up to `limit` successful transactions whose reversal watch is
    /// due (`Finalization::watch_at_ms`), soonest first.
    async fn claim_watches(&self, limit: u32, lease: Duration) -> StoreResult<Vec<Transaction>>;
    /// A watched successful transaction was requeried and still stands: watch
    /// it again at `at_ms`, or (`None`) no more; its lease is released.
    async fn rewatch(&self, code: &str, at_ms: Option<i64>) -> StoreResult<()>;
    /// Extends the lease of transactions still being processed (the worker's
    /// heartbeat; a watched successful one too), so a short lease never expires
    /// under a live worker while a crashed worker's transactions are picked up again soon.
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
    /// How many purchases are `processing`, and since when the oldest.
    async fn fulfilment_backlog(&self) -> StoreResult<Backlog>;
    /// How many of them (held ones aside) were created before `before`
    /// (RFC 3339), counted up to `cap`: the needs-review count, read through
    /// the processing rows' index, never a scan of every purchase.
    async fn needs_review_count(&self, before: &str, cap: u32) -> StoreResult<u64>;
}

/// Webhook events (the outbox) and their delivery attempts.
#[async_trait]
pub trait EventStore: Send + Sync + 'static {
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
    /// Queues an event for one more delivery now; refused with
    /// [`StoreError::DeliveryInProgress`] while one is under way.
    async fn requeue_event(&self, event_id: &str) -> StoreResult<()>;
}

#[async_trait]
pub trait AuditStore: Send + Sync + 'static {
    /// Runs every [`crate::audit::CHECKS`] query on one consistent snapshot.
    async fn audit(&self) -> StoreResult<Vec<crate::audit::CheckOutcome>>;
}

/// Price tiers, their rules, which account is on which, and the sales they
/// made. Every change moves the version, which `PriceBookCache` watches.
#[async_trait]
pub trait PricingStore: Send + Sync + 'static {
    /// Every tier with its rules and the accounts on one, and the version.
    async fn price_book(&self) -> StoreResult<(i64, PriceBook)>;
    async fn pricing_version(&self) -> StoreResult<i64>;
    /// Refused with [`StoreError::Invalid`] when the name is taken.
    async fn create_tier(&self, name: &str) -> StoreResult<()>;
    /// Sets the rule at `scope` (`Some`) or removes it (`None`); `false`
    /// when there was none to remove. The tier must exist.
    async fn set_price_rule(
        &self,
        tier: &str,
        scope: Scope,
        rule: Option<Rule>,
    ) -> StoreResult<bool>;
    /// Puts the account on `tier`; `None` returns it to list prices.
    async fn set_account_tier(&self, account: AccountId, tier: Option<&str>) -> StoreResult<()>;
    /// Final purchases created in `[from, until)` (RFC 3339 bounds), summed
    /// per UTC hour and every dimension the sales report groups by.
    async fn sales(&self, from: String, until: String) -> StoreResult<Vec<SalesGroup>>;
}

/// Money in by bank transfer: the accounts reserved at each gateway, and
/// every payment received with where it stands. A payment is credited once
/// per (gateway, gateway reference): its event row is unique on that pair
/// and is written in the same transaction as its two ledger entries (the
/// payment as a credit of its gateway's [`CreditSource`], then the fee).
#[async_trait]
pub trait FundingStore: Send + Sync + 'static {
    /// Stores a reservation and its accounts (those already held are kept).
    async fn save_reservation(&self, new: NewReservation) -> StoreResult<()>;
    /// The gateway's name for this account's customer, if it has reserved.
    async fn funding_customer(
        &self,
        account: AccountId,
        gateway: &str,
    ) -> StoreResult<Option<String>>;
    /// Every customer reference held with a gateway (for reconciliation).
    async fn funding_customers(&self, gateway: &str) -> StoreResult<Vec<String>>;
    /// Reserved accounts: one account's, or all.
    async fn reserved_accounts(
        &self,
        account: Option<AccountId>,
    ) -> StoreResult<Vec<ReservedAccount>>;
    /// Whose payment this is: by the gateway's customer reference, else by
    /// the account number it was paid into.
    async fn funding_owner(
        &self,
        gateway: &str,
        customer_ref: Option<&str>,
        account_number: Option<&str>,
    ) -> StoreResult<Option<AccountId>>;
    /// Records a payment, and credits it if `new.status` is credited — all
    /// in one transaction, once: a payment already credited changes nothing.
    async fn record_funding(&self, new: NewFunding) -> StoreResult<FundingRecorded>;
    /// By its id or its gateway reference.
    async fn funding_event(&self, id_or_reference: &str) -> StoreResult<Option<FundingEvent>>;
    /// Newest first.
    async fn funding_events(&self, filter: FundingFilter) -> StoreResult<Vec<FundingEvent>>;
    /// The funding ledger entries written in `[from, until)` (RFC 3339
    /// bounds, as `sales`): payments credited and fees.
    async fn funding_totals(&self, from: &str, until: &str) -> StoreResult<FundingTotals>;
    /// A named job's lease for `holder` (one node at a time): taken when free
    /// or expired, renewed when `holder` has it; false when another holds it.
    async fn take_job_lease(&self, name: &str, holder: &str, lease: Duration) -> StoreResult<bool>;
}

/// Operators (not customers), their console sessions, the append-only
/// operator log, and the reads only the console makes.
#[async_trait]
pub trait OperatorStore: Send + Sync + 'static {
    async fn operator(&self, id: i64) -> StoreResult<Option<Operator>>;
    /// Case-insensitive.
    async fn operator_by_email(&self, email: &str) -> StoreResult<Option<Operator>>;
    async fn operators(&self) -> StoreResult<Vec<Operator>>;
    /// Stores a session, dropping the expired ones first.
    async fn create_operator_session(
        &self,
        token_hash: &str,
        operator: i64,
        expires_at_ms: i64,
    ) -> StoreResult<()>;
    /// The unexpired session with this token hash (idle or not: the caller decides).
    async fn operator_session(&self, token_hash: &str) -> StoreResult<Option<OperatorSession>>;
    /// Records a request on the session now (the idle timeout restarts).
    async fn touch_operator_session(&self, token_hash: &str) -> StoreResult<()>;
    async fn delete_operator_session(&self, token_hash: &str) -> StoreResult<()>;
    /// Takes TOTP time step `step` for `operator` if it is later than the
    /// last one taken: true once per step, whichever node asks.
    async fn claim_totp_step(&self, operator: i64, step: u64) -> StoreResult<bool>;
    /// A log line for an action whose change the store makes elsewhere.
    async fn append_log(&self, log: NewLogEntry) -> StoreResult<()>;
    /// Newest first.
    async fn operator_log(&self, filter: LogFilter) -> StoreResult<Vec<LogEntry>>;
    /// Accounts whose id, key prefix or virtual (funding) account number is
    /// `query`, or whose name or email contains it (case-insensitive); newest first.
    async fn search_accounts(&self, query: &str, limit: u32) -> StoreResult<Vec<Account>>;
    /// The names of the accounts among `ids` (one query, however many ids;
    /// an id with no account is left out): the console shows names, not ids.
    async fn account_names(
        &self,
        ids: &[AccountId],
    ) -> StoreResult<std::collections::HashMap<AccountId, String>>;
    /// Per data or cable plan, the supplier cost of its most recent successful
    /// purchase whose cost is known (docs/pricing.md, "Supplier cost").
    async fn last_plan_costs(&self) -> StoreResult<Vec<PlanCost>>;
    /// Purchases placed since `since` (RFC 3339), by outcome.
    async fn sales_summary(&self, since: &str) -> StoreResult<SalesSummary>;
    /// Purchases placed since `since` (RFC 3339), by supplier and outcome.
    async fn supplier_outcomes(&self, since: &str) -> StoreResult<Vec<SupplierOutcome>>;
}

/// The shop's transaction PINs (`areas/pins.rs`): set, counted before each
/// check, locked after too many wrong tries in a row.
#[async_trait]
pub trait PinStore: Send + Sync + 'static {
    /// Sets or replaces the PIN (an argon2id hash) and ends any lock; the
    /// first PIN also stores `shop_key`, the key the account's browser
    /// purchases are placed under. Answers the account's shop key.
    async fn set_transaction_pin(
        &self,
        account: AccountId,
        pin_hash: String,
        shop_key: NewApiKey,
    ) -> StoreResult<KeyId>;
    async fn transaction_pin(&self, account: AccountId) -> StoreResult<Option<PinState>>;
    /// Takes one try, counted before the PIN is checked (one conditional
    /// UPDATE: concurrent tries cannot get past the lock).
    async fn take_pin_try(&self, account: AccountId) -> StoreResult<PinTry>;
    /// The PIN tried was right: the run of wrong tries (and a lock its last
    /// try set) ends.
    async fn pin_matched(&self, account: AccountId) -> StoreResult<()>;
}

/// The shop's saved recipients (`areas/beneficiaries.rs`).
#[async_trait]
pub trait BeneficiaryStore: Send + Sync + 'static {
    /// Saving a recipient already saved renames it.
    async fn save_beneficiary(&self, new: NewBeneficiary) -> StoreResult<Beneficiary>;
    /// By nickname.
    async fn beneficiaries(
        &self,
        account: AccountId,
        product: Product,
    ) -> StoreResult<Vec<Beneficiary>>;
    /// `false` when the account has no such beneficiary.
    async fn delete_beneficiary(&self, account: AccountId, id: &str) -> StoreResult<bool>;
    /// The last `limit` different recipients `account` bought `product` for, newest first.
    async fn recent_recipients(
        &self,
        account: AccountId,
        product: Product,
        limit: u32,
    ) -> StoreResult<Vec<String>>;
}

/// Data protection (`areas/privacy.rs`): closing an account, erasing a
/// closed account's personal data, and the pages of a customer's own data.
#[async_trait]
pub trait PrivacyStore: Send + Sync + 'static {
    /// `None`: open (or no such account).
    async fn account_closure(&self, account: AccountId) -> StoreResult<Option<Closure>>;
    /// The account's ledger entries after `after_id`, oldest first.
    async fn ledger_page(
        &self,
        account: AccountId,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<LedgerEntry>>;
    /// The account's purchases after `after` (from the first with `None`), oldest first.
    async fn purchases_page(
        &self,
        account: AccountId,
        after: Option<PurchaseCursor>,
        limit: u32,
    ) -> StoreResult<Vec<PurchaseRecord>>;
    /// Every saved recipient of the account, by product and nickname.
    async fn all_beneficiaries(&self, account: AccountId) -> StoreResult<Vec<Beneficiary>>;
}
