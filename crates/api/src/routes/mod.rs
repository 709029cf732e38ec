//! One module per resource, each with its `router()`.

pub mod catalogue;
pub mod purchases;
pub mod transactions;
pub mod verify;
pub mod wallet;
