//! Background work: the fulfilment loop (processing → successful | failed
//! through the supplier) and the webhook delivery loop (outbox → receiver).
//! Both claim work from the store with a lease, so work survives a crash and
//! is picked up again after the lease; both expose `run_once()` for tests.

mod claim_loop;
pub mod delivery;
pub mod fulfilment;

pub use delivery::{Delivery, DeliverySettings};
pub use fulfilment::{Fulfilment, FulfilmentSettings};
