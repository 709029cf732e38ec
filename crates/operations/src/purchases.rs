//! The purchase operation, whoever buys: the API's seven purchase endpoints
//! and their `/test` twins, its verify endpoints and catalogue prices, and
//! the dashboard's shop all call [`Purchasing`], never a copy.
//!
//! A buyer is admitted first ([`Purchasing::admit`]): its key's status and
//! its account's are checked, once, and a token is taken from the key's rate
//! budget ([`RateLimiter`], per key, shared through Redis when configured).
//! The API admits every request so in its middleware; the shop admits each
//! purchase under the account's shop key ([`Purchasing::admit_key`]), so a
//! browser purchase is bounded exactly as an API call of that key is. Then
//! [`Purchasing::buy`] prices the request at the account's tier, refuses a
//! provider no configured supplier sells, and commits it in one atomic write
//! (reference, debit, transaction, ledger entry), waking the fulfilment
//! worker, which delivers it and queues its webhook to the buyer's key.
//!
//! Every refusal is a [`PurchaseError`] whose `Display` is the sentence a
//! person reads; the API turns it into its JSON error (`From` in
//! `billpay_api::error`), the shop into its page messages.

use crate::rate_limit::{Decision, RateLimiter};
use billpay_domain::catalogue::{Catalogue, LookupError};
use billpay_domain::order::{self, MIN_CHARGE, OrderError};
use billpay_domain::pricing::{PriceBook, Priced};
use billpay_domain::{AccountId, AmountError, FieldError, KeyId, Kobo, Product, PurchaseRequest};
use billpay_store::limits::{LimitKind, OVER_BALANCE};
use billpay_store::{
    AccountStatus, ApiKey, CatalogueCache, KeyStatus, NewPurchase, PriceBookCache, RateLimit,
    Refusal, SharedStore, StoreError, Transaction, TxLookup,
};
use billpay_supplier::routing::Routes;
use billpay_supplier::{Verification, VerifyRequest};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// A verification that takes longer than this is refused as the supplier
/// being unavailable.
pub const SUPPLIER_TIMEOUT: Duration = Duration::from_secs(15);

/// What buying needs, shared by the API and the shop (cheap to clone: every
/// part is shared).
#[derive(Clone)]
pub struct Purchasing {
    pub store: SharedStore,
    /// Which supplier verifies, and whether any sells, a product and provider.
    pub suppliers: Arc<Routes>,
    pub catalogue: Arc<CatalogueCache>,
    /// Price tiers and accounts' tiers, re-checked like the catalogue.
    pub prices: Arc<PriceBookCache>,
    /// Per-key token buckets: every API request and every shop purchase.
    pub limiter: Arc<RateLimiter>,
    /// A key's rate limit when it has none of its own.
    pub default_rate_limit: RateLimit,
    /// Notified after each accepted purchase so fulfilment starts at once.
    pub purchases_waiting: Arc<Notify>,
}

/// Who buys: an account and the key its purchases are placed under (the key
/// its webhooks go to), as admitted by [`Purchasing::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buyer {
    pub account_id: AccountId,
    pub key_id: KeyId,
}

/// A key's admission.
pub enum Admission {
    /// The key or its account is not in force: no token was taken.
    Refused(PurchaseError),
    /// A token was asked of the key's bucket: the buyer, or
    /// [`PurchaseError::RateLimited`]; and the decision (the API's
    /// `RateLimit-*` headers).
    Decided {
        buyer: Result<Buyer, PurchaseError>,
        decision: Decision,
    },
}

impl Admission {
    /// The buyer, or why not.
    pub fn buyer(self) -> Result<Buyer, PurchaseError> {
        match self {
            Admission::Refused(refused) => Err(refused),
            Admission::Decided { buyer, .. } => buyer,
        }
    }
}

/// What a test-mode purchase would do.
#[derive(Debug, Clone, Copy)]
pub struct Checked {
    /// What the wallet would be charged: the account's price.
    pub would_deduct: Kobo,
    /// The list price.
    pub face_value: Kobo,
    /// The balance now.
    pub balance: Kobo,
}

/// What a purchase would be, priced for its buyer ([`Purchasing::quote`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    /// The provider's slug.
    pub provider: String,
    pub label: String,
    pub recipient: String,
    /// What the buyer would be charged now.
    pub amount: Kobo,
}

/// Why a purchase (or its check, or a verification) was refused. `Display`
/// is the sentence a person reads; the API says the same words.
#[derive(Debug)]
pub enum PurchaseError {
    /// The key was revoked (or is unknown).
    KeyRevoked,
    KeySuspended,
    AccountSuspended,
    /// The key's rate budget is spent; a token is back in `retry_after` seconds.
    RateLimited {
        retry_after: u64,
    },
    InvalidProvider,
    InvalidPlan,
    /// Under the product's least amount, or the least a purchase may charge.
    MinimumAmount(String),
    MaximumAmount(String),
    /// A field out of its rules: `field: why`.
    Invalid(String),
    InsufficientBalance {
        /// The balance when refused, when it could be read.
        balance: Option<Kobo>,
        /// What the purchase costs.
        needed: Option<Kobo>,
    },
    /// The reference is used; the `reference_code` of the transaction that has it.
    DuplicateReference(Option<String>),
    /// Over one of the account's limits (docs/limits.md): which, and what is left.
    LimitExceeded(String),
    /// The account or the recipient is on the operator's blocklist.
    Blocked,
    /// The supplier did not answer a verification (in time).
    SupplierUnavailable,
    /// The store failed: logged by whoever says it, never shown.
    Store(StoreError),
}

pub const INVALID_API_KEY: &str = "Invalid API key";
pub const KEY_SUSPENDED: &str = "This API key is suspended";
pub const ACCOUNT_SUSPENDED: &str = "This account is suspended";
pub const INVALID_PROVIDER: &str =
    "Invalid provider: not found, inactive, or not offering this service";
pub const INVALID_PLAN: &str = "Invalid plan: not found, inactive, or not offered by this provider";
pub const SUPPLIER_UNAVAILABLE: &str = "The supplier could not be reached; try again shortly";
/// A store failure, said without its cause.
pub const SOMETHING_WENT_WRONG: &str =
    "Something went wrong on our side; nothing was charged, try again shortly";

/// "Rate limit exceeded; retry after 2 seconds".
pub fn rate_limited(retry_after: u64) -> String {
    format!("Rate limit exceeded; retry after {}", seconds(retry_after))
}

/// "1 second", "2 seconds".
pub fn seconds(n: u64) -> String {
    if n == 1 {
        "1 second".to_owned()
    } else {
        format!("{n} seconds")
    }
}

/// A short balance, said with what is known of it.
pub fn insufficient_balance(balance: Option<Kobo>, needed: Option<Kobo>) -> String {
    match (balance, needed) {
        (Some(balance), Some(needed)) => format!(
            "Insufficient wallet balance: the balance is {balance} Naira and this purchase needs {needed} Naira"
        ),
        (None, Some(needed)) => {
            format!("Insufficient wallet balance: this purchase needs {needed} Naira")
        }
        _ => "Insufficient wallet balance".to_owned(),
    }
}

/// A used reference, naming the transaction that has it when known.
pub fn duplicate_reference(existing: Option<&str>) -> String {
    match existing {
        Some(code) => format!(
            "Duplicate reference: this reference has already been used by transaction {code}"
        ),
        None => "Duplicate reference: this reference has already been used".to_owned(),
    }
}

impl fmt::Display for PurchaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PurchaseError::*;
        match self {
            KeyRevoked => f.write_str(INVALID_API_KEY),
            KeySuspended => f.write_str(KEY_SUSPENDED),
            AccountSuspended => f.write_str(ACCOUNT_SUSPENDED),
            RateLimited { retry_after } => f.write_str(&rate_limited(*retry_after)),
            InvalidProvider => f.write_str(INVALID_PROVIDER),
            InvalidPlan => f.write_str(INVALID_PLAN),
            MinimumAmount(why) | MaximumAmount(why) | Invalid(why) | LimitExceeded(why) => {
                f.write_str(why)
            }
            InsufficientBalance { balance, needed } => {
                f.write_str(&insufficient_balance(*balance, *needed))
            }
            DuplicateReference(code) => f.write_str(&duplicate_reference(code.as_deref())),
            Blocked => f.write_str(billpay_store::BLOCKED),
            SupplierUnavailable => f.write_str(SUPPLIER_UNAVAILABLE),
            Store(_) => f.write_str(SOMETHING_WENT_WRONG),
        }
    }
}

impl std::error::Error for PurchaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PurchaseError::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StoreError> for PurchaseError {
    /// A refusal said as itself (without what the purchase knows: see
    /// `Purchasing::refused`); any other failure is the store's.
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Refused(Refusal::DuplicateReference) => {
                PurchaseError::DuplicateReference(None)
            }
            StoreError::Refused(Refusal::InsufficientBalance) => {
                PurchaseError::InsufficientBalance {
                    balance: None,
                    needed: None,
                }
            }
            StoreError::Refused(Refusal::LimitExceeded(refusal)) => {
                PurchaseError::LimitExceeded(refusal.to_string())
            }
            StoreError::Refused(Refusal::Blocked) => PurchaseError::Blocked,
            other => PurchaseError::Store(other),
        }
    }
}

impl From<LookupError> for PurchaseError {
    fn from(e: LookupError) -> Self {
        match e {
            LookupError::InvalidProvider => PurchaseError::InvalidProvider,
            LookupError::InvalidPlan => PurchaseError::InvalidPlan,
        }
    }
}

impl From<FieldError> for PurchaseError {
    fn from(e: FieldError) -> Self {
        PurchaseError::Invalid(e.to_string())
    }
}

impl From<AmountError> for PurchaseError {
    fn from(e: AmountError) -> Self {
        let message = e.to_string();
        match e {
            AmountError::BelowMinimum(_) => PurchaseError::MinimumAmount(message),
            AmountError::AboveMaximum(_) => PurchaseError::MaximumAmount(message),
        }
    }
}

impl From<OrderError> for PurchaseError {
    fn from(e: OrderError) -> Self {
        match e {
            OrderError::Lookup(e) => e.into(),
            OrderError::Amount(e) => e.into(),
            OrderError::Invalid(why) => PurchaseError::Invalid(why),
            below @ OrderError::BelowMinimumCharge { .. } => {
                PurchaseError::MinimumAmount(below.to_string())
            }
        }
    }
}

/// The one rule of which keys may be used: an active key of an active account.
pub fn key_in_force(key: KeyStatus, account: AccountStatus) -> Result<(), PurchaseError> {
    match (key, account) {
        (KeyStatus::Revoked, _) => Err(PurchaseError::KeyRevoked),
        (KeyStatus::Suspended, _) => Err(PurchaseError::KeySuspended),
        (_, AccountStatus::Suspended) => Err(PurchaseError::AccountSuspended),
        (KeyStatus::Active, AccountStatus::Active) => Ok(()),
    }
}

/// One unit's price for an account (the API's lists and the shop's pages);
/// `None` under the least a purchase can charge (a careless price rule):
/// such an item is not listed, as it cannot be bought (docs/pricing.md,
/// "The floor").
pub struct AccountPrices {
    book: Arc<PriceBook>,
    account: AccountId,
}

impl AccountPrices {
    pub fn unit(
        &self,
        product: Product,
        provider: &str,
        plan: Option<&str>,
        unit: Kobo,
    ) -> Option<Kobo> {
        let item = Priced {
            product,
            provider,
            plan,
            unit,
            quantity: 1,
        };
        Some(self.book.unit_price(self.account, item)).filter(|price| *price >= MIN_CHARGE)
    }
}

impl Purchasing {
    pub fn new(store: SharedStore, suppliers: Arc<Routes>, default_rate_limit: RateLimit) -> Self {
        Purchasing {
            catalogue: Arc::new(CatalogueCache::new(store.clone())),
            prices: Arc::new(PriceBookCache::new(store.clone())),
            store,
            suppliers,
            limiter: Arc::new(RateLimiter::default()),
            default_rate_limit,
            purchases_waiting: Arc::new(Notify::new()),
        }
    }

    /// The one admission of a key, before it may buy (the API admits every
    /// request so): the key and its account must be in force
    /// ([`key_in_force`]), then a token is taken from the key's rate budget
    /// (its own limit, else the default).
    pub async fn admit(&self, key: &ApiKey, account: AccountStatus) -> Admission {
        if let Err(refused) = key_in_force(key.status, account) {
            return Admission::Refused(refused);
        }
        let limit = key.rate_limit.unwrap_or(self.default_rate_limit);
        let decision = self.limiter.check(key.id, limit).await;
        let buyer = if decision.allowed {
            Ok(Buyer {
                account_id: key.account_id,
                key_id: key.id,
            })
        } else {
            metrics::counter!("billpay_rate_limited_total").increment(1);
            Err(PurchaseError::RateLimited {
                retry_after: decision.retry_after_secs,
            })
        };
        Admission::Decided { buyer, decision }
    }

    /// Takes a token from `key`'s rate budget, waiting for one when it is
    /// spent: a batch's items are placed at the key's pace, each spending
    /// the budget a purchase request would (docs/bulk.md). `limit`: the
    /// key's own, else the default.
    pub async fn spend_token(&self, key: KeyId, limit: Option<RateLimit>) {
        let limit = limit.unwrap_or(self.default_rate_limit);
        let refill = Duration::from_secs_f64(1.0 / f64::from(limit.per_second.max(1)));
        while !self.limiter.check(key, limit).await.allowed {
            tokio::time::sleep(refill).await;
        }
    }

    /// [`Self::admit`] for a key known by its id (the shop's key of
    /// `account`); a key that is not there counts as revoked.
    pub async fn admit_key(
        &self,
        account: AccountId,
        key_id: KeyId,
        account_status: AccountStatus,
    ) -> Result<Buyer, PurchaseError> {
        match self.store.api_key(key_id).await? {
            Some(key) if key.account_id == account => {
                self.admit(&key, account_status).await.buyer()
            }
            _ => Err(PurchaseError::KeyRevoked),
        }
    }

    /// Prices at `account`'s tier.
    pub async fn prices(&self, account: AccountId) -> Result<AccountPrices, PurchaseError> {
        Ok(AccountPrices {
            book: self.prices.get().await?,
            account,
        })
    }

    /// Buys `request` for `buyer`: priced at its tier, refused when no
    /// configured supplier sells the provider, then committed in one atomic
    /// write (reference, debit, transaction, ledger entry), and the
    /// fulfilment worker woken (a purchase held for review waits for an owner).
    pub async fn buy(
        &self,
        buyer: &Buyer,
        request: PurchaseRequest,
    ) -> Result<Transaction, PurchaseError> {
        let reference = request.reference.clone();
        let catalogue = self.catalogue.get().await?;
        let prices = self.prices.get().await?;
        let order = self.sellable(&catalogue, &prices, buyer, request)?;
        let amount = order.amount;
        let placed = self
            .store
            .place_purchase(NewPurchase {
                account_id: buyer.account_id,
                key_id: buyer.key_id,
                reference: reference.to_string(),
                product: order.product,
                provider: order.provider.slug.clone(),
                plan_id: order.plan_id,
                label: order.label,
                recipient: order.recipient,
                amount: order.amount,
                face_value: order.face_value,
                tier: order.tier,
                details: order.details,
            })
            .await;
        let tx = match placed {
            Ok(tx) => tx,
            Err(e) => return Err(self.refused(buyer, reference.as_str(), amount, e).await),
        };
        match tx.held_for.as_deref() {
            // Held for review (docs/limits.md): logged and counted, never the recipient.
            Some(rule) => {
                tracing::warn!(account = %buyer.account_id, code = tx.code, rule, "purchase held for review");
                let reason = held_reason(rule);
                metrics::counter!("billpay_purchases_held_total", "reason" => reason).increment(1);
            }
            None => self.purchases_waiting.notify_one(),
        }
        Ok(tx)
    }

    /// What `request` would be: priced at `buyer`'s tier and sold by a
    /// configured supplier, as [`Self::buy`] checks before any money moves;
    /// nothing is checked of the wallet (a schedule is checked so when made).
    pub async fn quote(
        &self,
        buyer: &Buyer,
        request: PurchaseRequest,
    ) -> Result<Quote, PurchaseError> {
        let catalogue = self.catalogue.get().await?;
        let prices = self.prices.get().await?;
        let order = self.sellable(&catalogue, &prices, buyer, request)?;
        Ok(Quote {
            provider: order.provider.slug.clone(),
            label: order.label,
            recipient: order.recipient,
            amount: order.amount,
        })
    }

    /// `request` priced, refused when no configured supplier sells its
    /// provider (say, betting when only a supplier without betting is
    /// configured).
    fn sellable<'a>(
        &self,
        catalogue: &'a Catalogue,
        prices: &PriceBook,
        buyer: &Buyer,
        request: PurchaseRequest,
    ) -> Result<order::Order<'a>, PurchaseError> {
        let order = order::price(catalogue, prices, buyer.account_id, request)?;
        if !self.suppliers.sells(order.product, &order.provider.slug) {
            return Err(PurchaseError::InvalidProvider);
        }
        Ok(order)
    }

    /// Test mode: the checks of a live purchase (priced the same), changing nothing.
    pub async fn check(
        &self,
        buyer: &Buyer,
        request: PurchaseRequest,
    ) -> Result<Checked, PurchaseError> {
        let reference = request.reference.clone();
        let catalogue = self.catalogue.get().await?;
        let prices = self.prices.get().await?;
        let order = order::price(&catalogue, &prices, buyer.account_id, request)?;
        let checked = self
            .store
            .check_purchase(
                buyer.account_id,
                reference.as_str(),
                &order.recipient,
                order.amount,
            )
            .await;
        match checked {
            Ok(balance) => Ok(Checked {
                would_deduct: order.amount,
                face_value: order.face_value,
                balance,
            }),
            Err(e) => Err(self
                .refused(buyer, reference.as_str(), order.amount, e)
                .await),
        }
    }

    /// Asks the first supplier of the product's route that verifies (with its
    /// codes for the provider) for the name on a meter, smartcard or betting
    /// account; none verifies it: not found.
    pub async fn ask_supplier(
        &self,
        request: &VerifyRequest,
    ) -> Result<Verification, PurchaseError> {
        let Some(supplier) = self.suppliers.verifier(request.product, &request.provider) else {
            return Ok(Verification::NotFound);
        };
        let catalogue = self.catalogue.get().await?;
        let request = VerifyRequest {
            codes: catalogue.supplier_codes(supplier.name(), &request.provider, None),
            ..request.clone()
        };
        tokio::time::timeout(SUPPLIER_TIMEOUT, supplier.verify(&request))
            .await
            .map_err(|_| PurchaseError::SupplierUnavailable)?
            .map_err(|e| {
                tracing::warn!(error = %e, supplier = supplier.name(), "verification failed at the supplier");
                PurchaseError::SupplierUnavailable
            })
    }

    /// A refused purchase, said in full: a used reference names the
    /// transaction that has it, a short balance says the balance and what
    /// was needed (both read after the refusal; the refusal itself was atomic).
    async fn refused(
        &self,
        buyer: &Buyer,
        reference: &str,
        needed: Kobo,
        e: StoreError,
    ) -> PurchaseError {
        match e {
            StoreError::Refused(Refusal::DuplicateReference) => {
                let lookup = TxLookup::Reference(reference.to_owned());
                let existing = self.store.transaction(Some(buyer.account_id), lookup).await;
                PurchaseError::DuplicateReference(existing.ok().flatten().map(|tx| tx.code))
            }
            StoreError::Refused(Refusal::InsufficientBalance) => {
                PurchaseError::InsufficientBalance {
                    balance: self.store.balance(buyer.account_id).await.ok(),
                    needed: Some(needed),
                }
            }
            StoreError::Refused(refusal @ (Refusal::Blocked | Refusal::LimitExceeded(_))) => {
                fraud_refusal(buyer, refusal)
            }
            other => other.into(),
        }
    }
}

/// A purchase refused by the blocklist or a limit: logged (never the
/// recipient: it is a person's number) and counted for `/metrics`.
fn fraud_refusal(buyer: &Buyer, refusal: Refusal) -> PurchaseError {
    let reason = match &refusal {
        Refusal::Blocked => "blocked",
        Refusal::LimitExceeded(limit) => limit.kind.as_str(),
        _ => "other",
    };
    tracing::warn!(account = %buyer.account_id, reason, "purchase refused");
    metrics::counter!("billpay_purchases_refused_total", "reason" => reason).increment(1);
    StoreError::Refused(refusal).into()
}

/// A held purchase's rule as a metric label (a fixed set of values).
fn held_reason(rule: &str) -> &'static str {
    match LimitKind::parse(rule) {
        Some(kind) => kind.as_str(),
        None if rule == OVER_BALANCE => OVER_BALANCE,
        None => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_said_for_a_person() {
        let short = PurchaseError::InsufficientBalance {
            balance: Some(Kobo(10_050)),
            needed: Some(Kobo(50_000)),
        };
        assert_eq!(
            short.to_string(),
            "Insufficient wallet balance: the balance is 100.50 Naira and this purchase needs 500.00 Naira"
        );
        let used = PurchaseError::DuplicateReference(Some("BP17".into()));
        assert_eq!(
            used.to_string(),
            "Duplicate reference: this reference has already been used by transaction BP17"
        );
        let limited = PurchaseError::RateLimited { retry_after: 1 };
        assert_eq!(
            limited.to_string(),
            "Rate limit exceeded; retry after 1 second"
        );
        let failed = PurchaseError::Store(StoreError::Invalid("disk on fire".into()));
        assert!(!failed.to_string().contains("disk"), "never the cause");
    }

    #[test]
    fn only_an_active_key_of_an_active_account_is_in_force() {
        use AccountStatus as A;
        use KeyStatus as K;
        assert!(key_in_force(K::Active, A::Active).is_ok());
        let refused = |k, a| key_in_force(k, a).unwrap_err().to_string();
        assert_eq!(refused(K::Revoked, A::Suspended), INVALID_API_KEY);
        assert_eq!(refused(K::Suspended, A::Active), KEY_SUSPENDED);
        assert_eq!(refused(K::Active, A::Suspended), ACCOUNT_SUSPENDED);
    }
}
