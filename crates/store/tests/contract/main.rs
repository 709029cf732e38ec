//! The store contract: the same cases on either backend, one module per area
//! of the `Store` trait. SQLite by default; PostgreSQL with
//! `BILLPAY_TEST_BACKEND=postgres` and `BILLPAY_TEST_POSTGRES_URL` (each test
//! on a fresh database). The multi-node cases are PostgreSQL-only
//! (`tests/postgres.rs`).

#[path = "../common/mod.rs"]
mod common;

mod accounts;
mod audit;
mod bank_transfers;
mod beneficiaries;
mod catalogue;
mod events;
mod fulfilment;
mod keys;
mod notices;
mod operators;
mod pins;
mod pricing;
mod purchases;
mod sessions;
mod wallet;
