//! The store contract: the same cases on either backend, one module per area
//! of the `Store` trait. SQLite by default; PostgreSQL with
//! `BILLPAY_TEST_BACKEND=postgres` and `BILLPAY_TEST_POSTGRES_URL` (each test
//! on a fresh database). The multi-node cases are PostgreSQL-only
//! (`tests/postgres.rs`).

#[path = "../common/mod.rs"]
mod common;

mod account_care;
mod accounts;
mod audit;
mod bank_transfers;
mod batches;
mod beneficiaries;
mod catalogue;
mod checkouts;
mod developer_access;
mod emails;
mod events;
mod fulfilment;
mod keys;
mod limits;
mod notice_admin;
mod notices;
mod operators;
mod personal_data;
mod pins;
mod pricing;
mod privacy;
mod purchases;
mod referrals;
mod sales_rollup;
mod schedules;
mod sessions;
mod supplier_health;
mod throttles;
mod usage;
mod velocity;
mod wallet;
mod work;
