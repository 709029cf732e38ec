//! What the store does, one trait per area, so a new area (funding, pricing,
//! operators) adds its own trait instead of growing one long list. An area's
//! trait, its statements and its functions are written once in its module
//! below (`areas/wallet.rs`: the trait's `for_both_engines!` list declares
//! each method and how both engines run it, `db.rs`); only how a purchase,
//! a finalization and a delivery reach their one function differs (PostgreSQL's
//! group-committed lanes, `postgres |store|` in the list); [`Store`] is every area at
//! once, implemented for whatever implements them all, and is what callers
//! hold (`SharedStore`): its areas' methods need no import.

mod account_care;
pub(crate) mod accounts;
mod audit;
pub(crate) mod batches;
pub(crate) mod beneficiaries;
pub(crate) mod brand;
pub(crate) mod catalogue;
pub(crate) mod checkouts;
mod claims;
pub(crate) mod developer_access;
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
pub(crate) mod referrals;
pub(crate) mod sales_rollup;
pub(crate) mod schedules;
mod sessions;
pub(crate) mod supplier_health;
pub(crate) mod throttles;
pub(crate) mod upgrades;
pub(crate) mod wallet;

pub use account_care::{AccountCareStore, OWN_ROWS, PRUNABLE};
pub use accounts::AccountStore;
pub use audit::AuditStore;
pub use batches::{
    Batch, BatchCounts, BatchItem, BatchStatus, BatchStore, ItemOutcome, ItemPlaced, NewBatch,
    NewBatchItem, REFERENCE_USED,
};
pub use beneficiaries::{Beneficiary, BeneficiaryStore, NewBeneficiary, Refill};
pub use brand::BrandStore;
pub use catalogue::CatalogueStore;
pub use checkouts::{Checkout, CheckoutStatus, CheckoutStore, NewCheckout, ReservationIdentity};
pub use developer_access::DeveloperAccessStore;
pub use events::EventStore;
pub use fulfilment::FulfilmentStore;
pub use funding::FundingStore;
pub use keys::KeyStore;
pub use limits::LimitStore;
pub use notice_admin::NoticeAdminStore;
pub use notices::NoticeStore;
pub use operators::OperatorStore;
pub use pins::{PinFailure, PinState, PinStore, PinTry};
pub use pricing::PricingStore;
pub use privacy::{
    Closure, Erased, Erasure, Exported, PERSONAL_DATA, PersonalTable, PrivacyStore, PurchaseCursor,
    PurchaseRecord, STAFF_DATA, tombstone,
};
pub use purchases::PurchaseStore;
pub use referrals::{
    BONUS_MOVED, BonusEntry, COMMISSION_EARNED, Commission, Referral, ReferralRate,
    ReferralSettings, ReferralStore, ReferralTotals, TopReferrer, Withdrawal, mailbox_key,
    normal_code as normal_referral_code, rate_described as referral_rate_described,
    settings_described as referral_settings_described,
};
pub use sales_rollup::SalesRollupStore;
pub use schedules::{
    NewSchedule, RunOutcome, Schedule, ScheduleRun, ScheduleStatus, ScheduleStore, SettledRun,
    StatusChange,
};
pub use sessions::SessionStore;
pub use supplier_health::{HealthOutcome, SupplierCost, SupplierHealthStore};
pub use throttles::{Taken, ThrottleStore, secret_right, secret_try};
pub use upgrades::{
    TierOffer, Upgrade, UpgradeOutcome, UpgradeStore, UpgradeTotals, described as offer_described,
    refund_reference as upgrade_refund_reference,
};
pub use wallet::WalletStore;

/// [`Store`]: every area at once, and implemented for whatever implements
/// them all.
macro_rules! every_area {
    ($($area:path),+ $(,)?) => {
        /// Every area: what a backend is.
        pub trait Store: $($area +)+ {}

        impl<T> Store for T where T: $($area +)+ {}
    };
}

every_area!(
    AccountStore,
    KeyStore,
    WalletStore,
    CatalogueStore,
    PurchaseStore,
    SessionStore,
    FulfilmentStore,
    EventStore,
    AuditStore,
    PricingStore,
    FundingStore,
    CheckoutStore,
    OperatorStore,
    crate::work::WorkStore,
    NoticeStore,
    NoticeAdminStore,
    AccountCareStore,
    PinStore,
    BeneficiaryStore,
    PrivacyStore,
    LimitStore,
    ThrottleStore,
    BrandStore,
    SupplierHealthStore,
    DeveloperAccessStore,
    SalesRollupStore,
    UpgradeStore,
    ReferralStore,
    BatchStore,
    ScheduleStore,
);
