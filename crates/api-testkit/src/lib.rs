//! The kit both API suites share: the integration tests over HTTP
//! (`crates/billpay/tests/it/`) and the in-process validation tests
//! (`crates/api/tests/validation.rs`). A dev-dependency only: it describes
//! the API from outside (the products, the bodies a client sends, the
//! committed OpenAPI document) and knows nothing of its code.

pub mod kind;
pub mod openapi;
mod reply;

pub use reply::Reply;
