//! Background work: the fulfilment loop (processing → successful | failed
//! through the supplier), the webhook delivery loop (outbox → receiver) and
//! money in (`payment_settlement`: settling gateway payments once, the reconciler)
//! and the notification outbox (`notices`: emails and SMS to people).
//! Both claim work from the store with a lease, so work survives a crash and
//! is picked up again after the lease; both expose `run_once()` for tests.

pub mod alerts;
pub mod checkout_settlement;
pub mod claim_loop;
pub mod delivery;
pub mod fulfilment;
pub mod held;
pub mod low_balance;
pub mod notices;
pub mod payment_settlement;
pub mod prune;
pub mod supplier_health;

pub use alerts::{AlertSettings, Alerts};
pub use checkout_settlement::{CheckoutError, CheckoutOutcome, Quote};
pub use delivery::{Delivery, DeliverySettings};
pub use fulfilment::{Fulfilment, FulfilmentSettings};
pub use held::HeldReview;
pub use low_balance::LowBalance;
pub use notices::{NoticeSettings, Notices};
pub use payment_settlement::Funding;
