//! The integration tests: one binary (one link), a module per area. Each
//! test drives real `billpay` processes over HTTP and the CLI through the
//! `support` kit; `cargo test -p billpay --test it MODULE::` runs one area.
//! The request-validation cases run in-process instead, against the router
//! (`crates/api/tests/validation.rs`).

mod support;

mod api;
mod architecture;
mod batches;
mod cli;
mod clubkonnect;
mod console;
mod crash_loop;
mod dashboard;
mod funding;
mod metrics;
mod notifications;
mod notify;
mod pricing;

mod purchases;
mod referrals;
mod routing;
mod schedules;
mod smedata;
mod throttles;
mod two_nodes;
mod vtpass;
mod webhooks;
