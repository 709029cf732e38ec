//! billpay's domain: money, phone numbers, references, account numbers, typed
//! ids, mobile networks by number prefix (`network`), products, checked
//! purchase requests, their pricing into an order (`order`) and the purchase
//! state machine,
//! API-key hashing and secret sealing.
//!
//! The throttles' rules ([`throttle`]: bounds, who a secret belongs to, the
//! hashed keys) are here too; the store counts them.
//!
//! No I/O and no async here: everything is a pure function or a value type, so
//! every other crate can rely on these rules without a database or a runtime.

pub mod brand;
pub mod catalogue;
pub mod delivery;
pub mod details;
pub mod email;
pub mod ids;
pub mod json;
pub mod keys;
pub mod money;
pub mod network;
pub mod order;
pub mod password;
pub mod phone;
pub mod pricing;
pub mod product;
pub mod recipient;
pub mod reference;
pub mod request;
pub mod sealed;
pub mod supplier_health;
pub mod throttle;
pub mod transaction_pin;

pub use delivery::{Delivery, EpinCard, Pin};
pub use details::PurchaseDetails;
pub use email::{EmailAddress, EmailError};
pub use ids::{AccountId, KeyId};
pub use money::{Kobo, MoneyError, Naira, naira};
pub use phone::Phone;
pub use product::{Product, TxStatus};
pub use recipient::{CustomerId, FieldError, MeterNumber, MeterType, ProfileId, SmartcardNumber};
pub use reference::Reference;
pub use request::{AmountError, Item, PurchaseRequest};
