//! Records the store reads and writes. `New*` are inputs, the rest are rows.

use crate::StoreError;
use billpay_domain::{AccountId, Delivery, KeyId, Kobo, Product, PurchaseDetails, TxStatus};
use serde::{Deserialize, Serialize};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AccountStatus {
    Active,
    Suspended,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyStatus {
    Active,
    Suspended,
    Revoked,
}

/// A fieldless enum stored as text: `as_str`, `FromStr` and `Display`
/// from one list of variants and their words (the store's one copy).
macro_rules! text_enum {
    ($ty:ident { $($variant:ident = $text:literal),+ }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $text),+ }
            }
        }
        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s { $($text => Ok($ty::$variant),)+ other => Err(format!("unknown {} {other}", stringify!($ty))) }
            }
        }
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}
pub(crate) use text_enum;

text_enum!(AccountStatus { Active = "active", Suspended = "suspended" });
text_enum!(SignedUp { Myself = "self", Operator = "operator" });
text_enum!(DeveloperAccess { Myself = "self", Operator = "operator", Tier = "tier" });
text_enum!(KeyStatus { Active = "active", Suspended = "suspended", Revoked = "revoked" });
/// Why a wallet moved: a ledger entry's `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LedgerKind {
    /// Money in, by its credit reference.
    Credit,
    /// A purchase's price, by the transaction's code; or an operator's
    /// debit, by its reference (source `operator`, no transaction code).
    Debit,
    /// A failed purchase's price back, by the transaction's code.
    Refund,
    /// The operator's fee on a bank-transfer funding (negative), right after
    /// its payment's credit, by the funding event's id.
    Fee,
}

text_enum!(LedgerKind { Credit = "credit", Debit = "debit", Refund = "refund", Fee = "fee" });
/// Who credits a wallet. A credit reference is unique per account and
/// source, so a payment gateway's reference can never collide with an
/// operator's. Credits stored before sources existed have none in the
/// database and read as [`CreditSource::Operator`] (the only source then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreditSource {
    /// `billpay wallet credit` (and the demo account's funding).
    Operator,
    /// A bank transfer through a payment gateway (`monnify`, `paystack`: its
    /// name in the funding registry), by the gateway's transaction reference.
    Gateway(String),
    /// Not a credit: a self-service upgrade's fee (a `debit`), by the
    /// customer's reference, so an upgrade is charged once per reference.
    Upgrade,
    /// A referral bonus moved to the wallet by its owner, by the customer's
    /// reference (its bonus entry has the same one; `areas/referrals.rs`).
    Referral,
}

impl CreditSource {
    /// The funding gateway of this name (not the operator): a name as the
    /// funding registry spells them, lower-case letters, digits and `_`.
    pub fn gateway(name: &str) -> Option<CreditSource> {
        let spelled = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        (spelled && !["operator", "upgrade", "referral"].contains(&name))
            .then(|| CreditSource::Gateway(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        match self {
            CreditSource::Operator => "operator",
            CreditSource::Gateway(name) => name,
            CreditSource::Upgrade => "upgrade",
            CreditSource::Referral => "referral",
        }
    }
}

impl FromStr for CreditSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "operator" => Ok(CreditSource::Operator),
            "upgrade" => Ok(CreditSource::Upgrade),
            "referral" => Ok(CreditSource::Referral),
            other => {
                CreditSource::gateway(other).ok_or_else(|| format!("unknown CreditSource {other}"))
            }
        }
    }
}

impl Serialize for CreditSource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A credit's stored source: `NULL` (from before sources) is an operator's.
pub(crate) const CREDIT_SOURCE_OR_OPERATOR: &str = "COALESCE(credit_source, 'operator')";

text_enum!(EventStatus { Pending = "pending", Delivered = "delivered", Failed = "failed", Skipped = "skipped" });

#[derive(Debug, Clone)]
pub struct NewAccount {
    pub name: String,
    pub email: String,
    pub password_hash: Option<String>,
    /// The KYC level it starts at (0, 1 or 2; docs/limits.md): 0 for a
    /// stranger signing up, the operator's choice (by default
    /// [`crate::limits::OPERATOR_CREATED_LEVEL`]) for an account an operator creates.
    pub kyc_level: u8,
}

#[derive(Debug, Clone, Serialize)]
pub struct Account {
    pub id: AccountId,
    pub name: String,
    pub email: String,
    pub status: AccountStatus,
    pub balance: Kobo,
    #[serde(skip)]
    pub password_hash: Option<String>,
    pub created_at: String,
    /// As the customer gave it at sign-up or on their profile.
    pub phone: Option<String>,
    /// Whether the customer signed up or an operator created the account.
    pub signed_up: SignedUp,
    /// When the customer proved the address (RFC 3339); `None`: never.
    pub email_verified_at: Option<String>,
    /// Who turned on the dashboard's developer pages (API keys, webhooks);
    /// `None`: off, a buyer's dashboard (migration `034_developer_access`).
    pub developer_access: Option<DeveloperAccess>,
}

impl Account {
    /// Whether the account may buy or reserve a funding account: an
    /// operator vouched for it, or its owner proved the email address.
    /// The check every shop page calls before money moves.
    pub fn verified(&self) -> bool {
        self.signed_up == SignedUp::Operator || self.email_verified_at.is_some()
    }
}

/// Who turned on an account's developer access (the dashboard's API keys
/// and webhooks pages): the customer (with their password) or an operator
/// (CLI, console; and every account an operator opens); or it comes with
/// the account's price tier (an API tier), never stored on the account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeveloperAccess {
    #[serde(rename = "self")]
    Myself,
    Operator,
    Tier,
}

/// How an account came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SignedUp {
    /// The customer, on the dashboard's sign-up page.
    #[serde(rename = "self")]
    Myself,
    /// An operator (CLI, console) or `serve --demo`.
    Operator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
}

#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub account_id: AccountId,
    pub name: Option<String>,
    pub key_hash: String,
    pub display_prefix: String,
    /// Tell the owner ("a new API key was created"): every key but the
    /// shop's own (`issue::shop_key`), which nobody can sign a request with.
    pub announce: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ApiKey {
    pub id: KeyId,
    pub account_id: AccountId,
    pub name: Option<String>,
    pub display_prefix: String,
    pub status: KeyStatus,
    pub rate_limit: Option<RateLimit>,
    pub webhook_url: Option<String>,
    /// The webhook signing secret sealed under the master key; never in clear.
    #[serde(skip)]
    pub webhook_secret_sealed: Option<String>,
    /// Opt-in: failed deliveries are retried on the backoff schedule.
    pub webhook_retries: bool,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

#[derive(Debug, Clone)]
pub enum KeyChange {
    Status(KeyStatus),
    RateLimit(Option<RateLimit>),
    WebhookUrl(Option<String>),
    WebhookSecretSealed(Option<String>),
    WebhookRetries(bool),
}

#[derive(Debug, Clone, Serialize)]
pub struct Credit {
    pub balance: Kobo,
    /// False when this reference had already been credited.
    pub applied: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct LedgerEntry {
    pub id: i64,
    pub account_id: AccountId,
    /// Signed: credits and refunds positive, debits negative.
    pub amount: Kobo,
    pub kind: LedgerKind,
    pub balance_after: Kobo,
    pub transaction_code: Option<String>,
    pub credit_reference: Option<String>,
    pub created_at: String,
    /// Whose reference `credit_reference` is (credits only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit_source: Option<CreditSource>,
}

#[derive(Debug, Clone)]
pub struct NewPurchase {
    pub account_id: AccountId,
    pub key_id: KeyId,
    pub reference: String,
    pub product: Product,
    /// Provider slug.
    pub provider: String,
    pub plan_id: Option<String>,
    /// The plan name (data, cable) or item name (the others).
    pub label: String,
    pub recipient: String,
    /// What the wallet is debited: the account's price (its tier's).
    pub amount: Kobo,
    /// What the recipient gets: the list price or the amount asked for.
    pub face_value: Kobo,
    /// The price tier `amount` was computed with; `None`: list prices.
    pub tier: Option<String>,
    /// The product's own request fields (meter_type, quantity, denomination…).
    pub details: PurchaseDetails,
}

#[derive(Debug, Clone, Serialize)]
pub struct Transaction {
    pub code: String,
    pub account_id: AccountId,
    pub key_id: KeyId,
    pub reference: String,
    pub product: Product,
    pub provider: String,
    pub plan_id: Option<String>,
    pub label: String,
    pub recipient: String,
    /// What was charged (the debit), fixed when the purchase was placed.
    pub amount: Kobo,
    /// What the recipient gets (the supplier is asked for this); equal to
    /// `amount` for purchases from before price tiers.
    pub face_value: Kobo,
    /// What the supplier charged us, when its answer said; `None`: unknown.
    pub cost: Option<Kobo>,
    /// The price tier it was charged at; `None`: list prices.
    pub tier: Option<String>,
    pub details: PurchaseDetails,
    pub status: TxStatus,
    pub message: String,
    pub balance_before: Kobo,
    pub balance_after: Kobo,
    /// What the supplier delivered, as stored: a [`Delivery`] (read it with
    /// [`Transaction::delivery`]); the store seals it at rest (`crate::sealing`).
    pub result: serde_json::Value,
    pub attempts: u32,
    pub submitted: bool,
    pub created_at: String,
    pub completed_at: Option<String>,
    /// Who it was sent to (`sandbox`, `vtpass`), set when first sent.
    pub supplier: Option<String>,
    /// Its reference at that supplier (VTpass: our `request_id`).
    pub supplier_reference: Option<String>,
    /// The rule holding it for review (`limits::LimitKind`'s name or
    /// `limits::OVER_BALANCE`): not sent to a supplier until an owner
    /// releases it; `None`: not held, or released. Kept on a rejected one.
    pub held_for: Option<String>,
    /// When the worker asked for the operator's review because the
    /// supplier's books cannot say what became of it (RFC 3339; the
    /// evidence is the result's `last_note`): it needs review now, whatever
    /// its age, while it is processing. `None`: not asked.
    pub review_requested_at: Option<String>,
}

#[derive(Debug, Clone)]
pub enum TxLookup {
    Code(String),
    Reference(String),
    BatchId(String),
}

#[derive(Debug, Clone, Default)]
pub struct TxFilter {
    pub account_id: Option<AccountId>,
    pub status: Option<TxStatus>,
    pub product: Option<Product>,
    /// RFC 3339 bounds on `created_at`: from inclusive, until exclusive.
    pub created_from: Option<String>,
    pub created_until: Option<String>,
    /// Matches the client reference or the reference_code (substring).
    pub search: Option<String>,
    /// A provider's slug (`mtn`), exactly.
    pub provider: Option<String>,
    /// The supplier it was sent to (`vtpass`), exactly.
    pub supplier: Option<String>,
    /// Matches the recipient (phone, meter, smartcard number; substring).
    pub recipient: Option<String>,
    /// Placed before this (RFC 3339) or flagged for review
    /// (`Transaction::review_requested_at`): the needs-review listing's bound.
    pub review_due_before: Option<String>,
    /// Only those flagged for review (`Transaction::review_requested_at`):
    /// the supplier's books cannot say what became of them.
    pub review_requested: bool,
    /// Leaves out purchases held for review (they wait for an owner).
    pub not_held: bool,
    pub limit: u32,
    pub offset: u32,
}

impl TxFilter {
    /// The needs-review listing: processing purchases whose outcome is
    /// still unknown, placed before `created_until` (RFC 3339) or flagged
    /// for review at once (the supplier's books cannot say), newest first;
    /// purchases held for review are not in it (they are listed apart,
    /// `LimitStore::held_purchases`).
    pub fn needs_review(created_until: String, limit: u32) -> TxFilter {
        TxFilter {
            status: Some(TxStatus::Processing),
            review_due_before: Some(created_until),
            not_held: true,
            limit,
            ..TxFilter::default()
        }
    }

    /// The processing purchases flagged for review because the supplier's
    /// books cannot say what became of them (`FulfilmentStore::request_review`),
    /// newest first: a part of the needs-review listing, whatever their age
    /// (the operators' `operator_review_requested` alert tells of each).
    pub fn review_requested(limit: u32) -> TxFilter {
        TxFilter {
            status: Some(TxStatus::Processing),
            review_requested: true,
            not_held: true,
            limit,
            ..TxFilter::default()
        }
    }
}

/// Spend of one product on one Lagos day, successful and processing purchases.
#[derive(Debug, Clone, Serialize)]
pub struct DailySpend {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub product: Product,
    pub count: u32,
    pub amount: Kobo,
}

/// A final status for a processing transaction and the webhook payload it emits.
#[derive(Debug, Clone)]
pub struct Finalization {
    pub status: TxStatus,
    pub message: String,
    pub result: serde_json::Value,
    pub completed_at_ms: i64,
    /// The exact JSON body the webhook will carry.
    pub event_payload: String,
    /// A successful purchase the supplier later reversed: it becomes
    /// `failed` (refunded once, a new webhook) — the one move out of a final
    /// status. Otherwise only a `processing` transaction changes.
    pub reversal: bool,
    /// What the supplier charged for a successful one, when it said so
    /// (stored as the transaction's `cost`; a failure stores none).
    pub cost: Option<Kobo>,
    /// When to requery a successful one for a reversal (ms since the epoch;
    /// `None`: not watched — a failure, or a supplier that never reverses).
    /// Set in the same statement as the status, never on the purchase path.
    pub watch_at_ms: Option<i64>,
}

impl Transaction {
    /// Whether it needs the operator's review: still processing, not held
    /// for an owner, and placed before `before` (RFC 3339, the age bound) or
    /// flagged because the supplier's books cannot say (`review_requested_at`);
    /// the rule `TxFilter::needs_review` and `needs_review_count` select by.
    pub fn needs_review(&self, before: &str) -> bool {
        self.status == TxStatus::Processing
            && self.held_for.is_none()
            && (self.created_at.as_str() < before || self.review_requested_at.is_some())
    }

    /// What was delivered (empty until then).
    pub fn delivery(&self) -> Result<Delivery, StoreError> {
        Delivery::deserialize(&self.result)
            .map_err(|e| StoreError::caused_in(format!("stored result of {}", self.code), e))
    }
}

impl Finalization {
    /// The status a transaction must be in to take this finalization: a
    /// reversal moves a successful one to failed, any other a processing one
    /// to a final status. `None`: no transaction takes it.
    pub fn takes_from(&self) -> Option<TxStatus> {
        let (from, valid) = if self.reversal {
            (TxStatus::Successful, self.status == TxStatus::Failed)
        } else {
            (
                TxStatus::Processing,
                TxStatus::Processing.can_become(self.status),
            )
        };
        valid.then_some(from)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub id: String,
    pub transaction_code: String,
    pub account_id: AccountId,
    pub key_id: KeyId,
    pub event: String,
    pub payload: String,
    pub status: EventStatus,
    pub attempts: u32,
    pub created_at: String,
}

/// What a webhook event is about, for a link to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventSubject {
    /// A purchase's event: its reference code.
    Purchase(String),
    /// `batch.completed`: the batch's id (what `transaction_code` holds for
    /// it) and its reference (from the payload).
    Batch { id: String, reference: String },
}

impl Event {
    /// The purchase or batch this event is about.
    pub fn subject(&self) -> EventSubject {
        if self.event == BATCH_COMPLETED {
            let payload: serde_json::Value =
                serde_json::from_str(&self.payload).unwrap_or_default();
            if let Some(reference) = payload["reference"].as_str() {
                return EventSubject::Batch {
                    id: self.transaction_code.clone(),
                    reference: reference.to_owned(),
                };
            }
        }
        EventSubject::Purchase(self.transaction_code.clone())
    }
}

/// The one event that is about a batch, not a purchase
/// (`billpay_webhooks::BatchCompleted::EVENT`).
pub const BATCH_COMPLETED: &str = "batch.completed";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventStatus {
    Pending,
    Delivered,
    Failed,
    Skipped,
}

#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    pub account_id: Option<AccountId>,
    pub key_id: Option<KeyId>,
    pub failed_only: bool,
    pub limit: u32,
}

#[derive(Debug, Clone)]
pub struct NewAttempt {
    pub url: Option<String>,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    pub latency_ms: u64,
    pub response_excerpt: String,
}

/// Why an event was skipped: its key had no webhook URL.
pub const NO_WEBHOOK_URL: &str = "no webhook URL configured on the API key";

impl NewAttempt {
    /// The attempt of an event whose key has no webhook URL: nothing was sent.
    pub fn no_webhook_url() -> Self {
        NewAttempt {
            url: None,
            http_status: None,
            error: Some(NO_WEBHOOK_URL.into()),
            latency_ms: 0,
            response_excerpt: String::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    pub id: i64,
    pub event_id: String,
    pub url: Option<String>,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    pub latency_ms: u64,
    pub response_excerpt: String,
    pub created_at: String,
}

/// What happens to an event after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventNext {
    Delivered,
    Failed,
    Skipped,
    RetryAtMs(i64),
}

/// What the sales report, the hourly rollup and the daily summary sum over
/// final purchases: one struct for the purchases' groups
/// ([`SalesGroup`]) and the rollup's rows ([`SalesBucket`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SalesSums {
    pub purchases: u64,
    pub face_value: Kobo,
    pub charged: Kobo,
    /// The sum of the known costs.
    pub cost: Kobo,
    /// What was charged for the purchases whose cost is known.
    pub charged_with_cost: Kobo,
    /// How many have no known cost.
    pub cost_unknown: u64,
}

impl SalesSums {
    /// Adds `other`'s sums to these.
    pub fn add(&mut self, other: &SalesSums) {
        self.purchases += other.purchases;
        self.face_value = Kobo(self.face_value.0 + other.face_value.0);
        self.charged = Kobo(self.charged.0 + other.charged.0);
        self.cost = Kobo(self.cost.0 + other.cost.0);
        self.charged_with_cost = Kobo(self.charged_with_cost.0 + other.charged_with_cost.0);
        self.cost_unknown += other.cost_unknown;
    }

    /// Charged less cost over the purchases whose cost is known (negative:
    /// sold at a loss).
    pub fn margin(&self) -> Kobo {
        Kobo(self.charged_with_cost.0 - self.cost.0)
    }
}

/// The sales rollup's row (`SalesRollupStore::sales_rollup`): final purchases
/// of one UTC hour of placement that share product, provider, supplier, tier
/// and status, summed, its shards too (no account: the report by account
/// reads the purchases' [`SalesGroup`]s, `PricingStore::sales`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalesBucket {
    /// `YYYY-MM-DDTHH` (UTC) of `created_at`.
    pub hour: String,
    pub product: Product,
    pub provider: String,
    pub supplier: Option<String>,
    pub tier: Option<String>,
    /// `successful` or `failed`.
    pub status: TxStatus,
    pub sums: SalesSums,
}

/// Final purchases of one UTC hour that share a rollup row's key and the
/// account, summed (`PricingStore::sales`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalesGroup {
    pub account_id: AccountId,
    pub bucket: SalesBucket,
}

/// Where a bank-transfer payment stands. Only `credited` moved money, and
/// it is final; the others may still become `credited` (a later verify, the
/// reconciler, or the operator's `assign`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FundingStatus {
    /// Verified paid and credited to its account (payment, then fee).
    Credited,
    /// Verified paid, but into no account billpay holds: the operator assigns it.
    Unmatched,
    /// The gateway says it is not paid, or not in NGN: nothing credited.
    Rejected,
    /// The gateway could not be asked: verified again later, never credited on a guess.
    PendingVerification,
}

text_enum!(FundingStatus { Credited = "credited", Unmatched = "unmatched", Rejected = "rejected", PendingVerification = "pending_verification" });

/// What the buyer's home shows of a wallet besides its balance (the
/// account's, read with it: `WalletStore::session_home`).
#[derive(Debug, Clone)]
pub struct WalletView {
    /// The latest purchases, newest first.
    pub recent: Vec<Transaction>,
    /// The accounts reserved to fund the wallet by transfer.
    pub reserved: Vec<ReservedAccount>,
}

/// A signed-in buyer's home: the session's account and its wallet view.
#[derive(Debug, Clone)]
pub struct SessionHome {
    pub account: Account,
    pub wallet: WalletView,
}

/// A bank account reserved at a gateway for a billpay account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReservedAccount {
    pub account_id: AccountId,
    pub gateway: String,
    /// The gateway's name for the customer (Monnify accountReference,
    /// Paystack customer_code).
    pub customer_ref: String,
    pub bank_name: String,
    pub account_number: String,
    pub account_name: String,
    pub created_at: String,
}

/// A gateway's reservation for an account (accounts may come later).
#[derive(Debug, Clone)]
pub struct NewReservation {
    pub account_id: AccountId,
    pub gateway: String,
    pub customer_ref: String,
    /// (bank name, account number, account name).
    pub accounts: Vec<(String, String, String)>,
}

/// A payment received (webhook, reconciliation), as verified so far.
#[derive(Debug, Clone)]
pub struct NewFunding {
    pub gateway: String,
    pub gateway_reference: String,
    pub status: FundingStatus,
    /// Whose wallet: required for `credited`.
    pub account_id: Option<AccountId>,
    /// The verified amount paid (the claimed one while pending).
    pub amount: Kobo,
    /// The operator's fee (credited only), at most `amount`.
    pub fee: Kobo,
    pub currency: Option<String>,
    pub customer_ref: Option<String>,
    pub account_number: Option<String>,
    pub payer: Option<String>,
    /// Why it stands where it does (for the operator).
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FundingEvent {
    pub id: String,
    pub gateway: String,
    pub gateway_reference: String,
    pub status: FundingStatus,
    pub account_id: Option<AccountId>,
    pub amount: Kobo,
    pub fee: Kobo,
    /// What the wallet received: amount − fee (credited only, else 0).
    pub credited: Kobo,
    pub currency: Option<String>,
    pub customer_ref: Option<String>,
    pub account_number: Option<String>,
    pub payer: Option<String>,
    pub note: String,
    pub created_at: String,
    pub updated_at: String,
    pub credited_at: Option<String>,
}

/// What `record_funding` did.
#[derive(Debug, Clone)]
pub struct FundingRecorded {
    /// The event as it now stands.
    pub event: FundingEvent,
    /// Money moved by this call (false for a repeat, or a non-credit).
    pub credited_now: bool,
    /// The status before this call (`None`: first seen).
    pub before: Option<FundingStatus>,
}

#[derive(Debug, Clone, Default)]
pub struct FundingFilter {
    pub account_id: Option<AccountId>,
    pub status: Option<FundingStatus>,
    pub gateway: Option<String>,
    pub limit: u32,
    /// Rows skipped (the console's pages).
    pub offset: u32,
}

/// Money in through the gateways over a range of ledger times, from the
/// ledger's funding entries: the payments credited (by bank transfer to a
/// reserved account, or by card on a gateway's hosted checkout) and the
/// operator's fees on them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FundingTotals {
    /// Payments credited (before the fee).
    pub received: Kobo,
    pub payments: u64,
    /// The fee entries: the operator's income on funding.
    pub fees: Kobo,
    /// Of `received`, what was paid on a gateway's hosted checkout (card:
    /// the payment's reference is a checkout's); the rest came by transfer.
    pub by_card: Kobo,
}

impl FundingEvent {
    /// What a wallet received for a payment: amount − fee once credited.
    pub fn credited_amount(status: FundingStatus, amount: Kobo, fee: Kobo) -> Kobo {
        match status {
            FundingStatus::Credited => Kobo(amount.0 - fee.0),
            _ => Kobo::ZERO,
        }
    }
}

/// A notice for the outbox (issue 30), written in the same transaction as
/// its cause. `cause` names that cause once (`funding:<reference>`,
/// `purchase:<code>:refunded`, `reset:<token id>`): a second notice with the
/// same cause and channel is not added, so a replayed cause sends nothing twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewNotice {
    pub cause: String,
    /// The template: `email_verification`, `password_reset`, `funding_credited`…
    pub kind: String,
    /// `email` or `sms` (`billpay_notify::ChannelKind::as_str`).
    pub channel: String,
    /// An email address, or a phone number as `234XXXXXXXXXX`.
    pub recipient: String,
    pub account_id: Option<AccountId>,
    pub operator_id: Option<String>,
    /// What the template reads (JSON). Holds no password, API key or token
    /// in clear (seal what must travel: see `sealing`).
    pub data: serde_json::Value,
}

/// A notice in the outbox, as it stands.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Notice {
    pub id: String,
    pub cause: String,
    pub kind: String,
    pub channel: String,
    pub recipient: String,
    pub account_id: Option<AccountId>,
    pub operator_id: Option<String>,
    /// What the template reads; a sealed part stays sealed except in a claim.
    pub data: serde_json::Value,
    pub status: NoticeStatus,
    /// Sends tried so far.
    pub attempts: u32,
    /// When it is next due (ms since the epoch), while queued.
    pub next_attempt_at_ms: i64,
    /// What the provider said last time it did not take it.
    pub last_error: Option<String>,
    /// The channel's provider that took it, or tried last (`smtp`, `termii`, `mail_dir`).
    pub provider: Option<String>,
    /// The provider's id for the accepted message.
    pub provider_id: Option<String>,
    pub created_at: String,
    pub sent_at: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeStatus {
    Queued,
    Sent,
    Failed,
}

text_enum!(NoticeStatus { Queued = "queued", Sent = "sent", Failed = "failed" });

/// How one send of a notice went (`NoticeStore::record_notice`); `provider`
/// is the channel's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeOutcome {
    Sent {
        provider: String,
        provider_id: Option<String>,
    },
    /// Not taken this time: due again at `at_ms`.
    Retry {
        provider: String,
        error: String,
        at_ms: i64,
    },
    /// Given up (attempts spent, or nothing can send it).
    Failed { provider: String, error: String },
    /// The provider refused the address for good: this notice fails, and
    /// the address is suppressed, so later notices to it fail at once
    /// (until an operator resends one).
    Refused { provider: String, error: String },
}

/// Which notices to list: newest first.
#[derive(Debug, Clone, Default)]
pub struct NoticeFilter {
    pub status: Option<NoticeStatus>,
    pub account_id: Option<AccountId>,
    pub channel: Option<String>,
    pub kind: Option<String>,
    pub limit: u32,
    pub offset: u32,
}

/// The customer notices a customer may turn on or off, each by email and by SMS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeTopic {
    /// Money received by bank transfer was credited.
    Funding,
    /// A purchase failed and its amount was returned, or was held for
    /// review (and then released).
    Refund,
    /// An electricity token, e-pins or exam pins delivered.
    Receipt,
    /// The balance went under the customer's mark.
    LowBalance,
    /// A new API key, a webhook URL changed.
    Security,
}

impl NoticeTopic {
    pub const ALL: [NoticeTopic; 5] = [
        NoticeTopic::Funding,
        NoticeTopic::Refund,
        NoticeTopic::Receipt,
        NoticeTopic::LowBalance,
        NoticeTopic::Security,
    ];

    /// The name of its columns (`<name>_email`, `<name>_sms`) and form fields.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeTopic::Funding => "funding",
            NoticeTopic::Refund => "refund",
            NoticeTopic::Receipt => "receipt",
            NoticeTopic::LowBalance => "low_balance",
            NoticeTopic::Security => "security",
        }
    }
}

/// One channel's choice for one topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TopicChoice {
    pub email: bool,
    pub sms: bool,
}

/// A customer's choices of optional notices. The default: every topic by
/// email, none by SMS, no phone, no low-balance mark (so no such notice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoticePreferences {
    /// `234XXXXXXXXXX`: where SMS notices go (none without it).
    pub phone: Option<String>,
    /// A low-balance notice when a debit takes the balance under this.
    pub low_balance_below: Option<Kobo>,
    /// In [`NoticeTopic::ALL`]'s order.
    pub topics: [TopicChoice; 5],
}

impl Default for NoticePreferences {
    fn default() -> Self {
        NoticePreferences {
            phone: None,
            low_balance_below: None,
            topics: [TopicChoice {
                email: true,
                sms: false,
            }; 5],
        }
    }
}

impl NoticePreferences {
    pub fn topic(&self, topic: NoticeTopic) -> TopicChoice {
        self.topics[topic as usize]
    }

    pub fn set_topic(&mut self, topic: NoticeTopic, choice: TopicChoice) {
        self.topics[topic as usize] = choice;
    }
}

/// An active operator who has not turned an alert off: whom it goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertRecipient {
    pub operator_id: i64,
    /// Where the alert goes by email; `None`: the operator turned email off.
    pub email: Option<String>,
    /// Where it goes by SMS (`234XXXXXXXXXX`); `None`: not by SMS.
    pub sms: Option<String>,
    pub role: crate::OperatorRole,
}

/// How an operator gets the alerts they chose ("My account"): by email
/// (the default), and by SMS to `phone` when `by_sms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertChannels {
    /// `234XXXXXXXXXX`.
    pub phone: Option<String>,
    pub by_email: bool,
    pub by_sms: bool,
}

impl Default for AlertChannels {
    fn default() -> Self {
        AlertChannels {
            phone: None,
            by_email: true,
            by_sms: false,
        }
    }
}

/// A notice the store addresses and files under its cause itself (the
/// account's address, a cause unique to the code or link it carries):
/// only its template and what the template reads. `data` may hold a code
/// or link: the store seals it before it is stored (`crate::sealing`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeDraft {
    pub kind: String,
    pub data: serde_json::Value,
}

impl NoticeDraft {
    /// The email notice to `recipient` about `account`, filed under `cause`.
    pub fn addressed(&self, recipient: &str, account: AccountId, cause: String) -> NewNotice {
        NewNotice {
            cause,
            kind: self.kind.clone(),
            channel: "email".into(),
            recipient: recipient.to_owned(),
            account_id: Some(account),
            operator_id: None,
            data: self.data.clone(),
        }
    }
}

/// A code that proves an email address (stored as its hash), with the
/// notice that carries it.
#[derive(Debug, Clone)]
pub struct EmailCode {
    pub code_hash: String,
    pub expires_at_ms: i64,
    pub notice: NoticeDraft,
}

/// A customer's own sign-up: the account, unverified, and its first code.
#[derive(Debug, Clone)]
pub struct NewSignUp {
    pub account: NewAccount,
    pub phone: Option<String>,
    /// The tier the operator puts new sign-ups on (`None`: list prices).
    pub tier: Option<String>,
    pub code: EmailCode,
    /// The referral code the customer signed up with (typed, any case;
    /// an unknown one is nothing).
    pub referral: Option<String>,
}

/// What one try of an email code did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeCheck {
    /// Right: the address (the account's now) is verified; the code is spent.
    Verified { email: String },
    /// Wrong: `left` more tries of this code.
    Wrong { left: u32 },
    /// No live code: none asked, expired, used, or out of tries.
    NoCode,
    /// Right, but another account took the new address meanwhile.
    EmailTaken,
}

/// One try of a code sent to a phone (`NoticeStore::check_phone_code`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhoneCheck {
    /// Right: SMS notices go to this phone (`234XXXXXXXXXX`) now.
    Proven { phone: String },
    /// Wrong: `left` more tries of this code.
    Wrong { left: u32 },
    /// No live code: none sent, expired, used, or out of tries.
    NoCode,
}

/// A password-reset link (stored as its token's hash), with its notice;
/// `log` when support sent it from the console.
#[derive(Debug, Clone)]
pub struct NewPasswordReset {
    pub account_id: AccountId,
    pub token_hash: String,
    pub expires_at_ms: i64,
    /// What the link resets: a link of one purpose is no use for the other.
    pub purpose: ResetPurpose,
    pub notice: NoticeDraft,
    pub log: Option<crate::NewLogEntry>,
}

/// What an emailed reset link resets (`password_resets.purpose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResetPurpose {
    /// The account's password (`/dashboard/reset/{token}`).
    #[default]
    Password,
    /// The shop's transaction PIN, with the password (`/dashboard/pin/reset/{token}`).
    Pin,
}

impl ResetPurpose {
    pub fn as_str(self) -> &'static str {
        match self {
            ResetPurpose::Password => "password",
            ResetPurpose::Pin => "pin",
        }
    }
}

/// Self sign-ups since the start of a (Lagos) day and of its month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SignUpCounts {
    pub today: i64,
    pub month: i64,
}
