//! The purchase endpoints end to end, over real HTTP against a spawned
//! `billpay serve`: every product live and in `/test` mode, failures and
//! refunds, pending purchases, verification, the refusals that need the
//! database or the operator, status lookups and e-pin batches, concurrency,
//! crash durability and the operator CLI. The pure request-validation
//! refusals run in-process: `crates/api/tests/validation.rs`.

pub(crate) mod checks;
mod expect;

use billpay_api_testkit::kind;

mod concurrency;
mod crash;
mod failures;
mod identifiers;
mod limits;
mod lookups;
mod pending;
mod refusals;
mod success;
mod verification;
