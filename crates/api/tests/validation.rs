//! Request validation and refusals, in-process: the real router
//! (`billpay_api::router`) on a fresh store, called with
//! `tower::ServiceExt::oneshot`, no server process and no socket. Every
//! reply is checked against the OpenAPI document, as the integration kit
//! does over HTTP; each refusal must leave the wallet, the transactions and
//! the reference it used untouched.
//!
//! The store is a SQLite file in a temp directory, or a scratch PostgreSQL
//! database with `BILLPAY_TEST_BACKEND=postgres` (and
//! `BILLPAY_TEST_POSTGRES_URL`). The products, their bodies and the reply
//! checks are the integration tests' own (`crates/api-testkit`).

use billpay_api_testkit::kind;

#[path = "validation/app.rs"]
mod app;
#[path = "validation/catalogue.rs"]
mod catalogue;
#[path = "validation/fields.rs"]
mod fields;
#[path = "validation/requests.rs"]
mod requests;
