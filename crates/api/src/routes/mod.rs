//! One module per resource, each with its `router()`: one `routes!` line per
//! handler, whose `#[utoipa::path]` gives both the route (relative to `/v1`)
//! and its OpenAPI operation, so a path is written once.

pub mod account;
pub mod batches;
pub mod catalogue;
pub mod pricing;
pub mod purchases;
pub mod referrals;
pub mod schedules;
pub mod transactions;
pub mod upgrades;
pub mod verify;
pub mod wallet;

use crate::state::AppState;
use purchases::Mode;
use utoipa_axum::router::OpenApiRouter;

/// Every endpoint under `/v1`, with the OpenAPI paths of exactly these routes.
/// The `/test` twins are the purchase and verification routers in test mode
/// and the batches' check.
pub fn v1() -> OpenApiRouter<AppState> {
    let test_twins = purchases::router(Mode::Test)
        .merge(verify::router(Mode::Test))
        .merge(batches::test_router());
    OpenApiRouter::default()
        .merge(wallet::router())
        .merge(account::router())
        .merge(upgrades::router())
        .merge(referrals::router())
        .merge(catalogue::router())
        .merge(pricing::router())
        .merge(purchases::router(Mode::Live))
        .merge(verify::router(Mode::Live))
        .merge(transactions::router())
        .merge(batches::router())
        .merge(schedules::router())
        .nest("/test", test_twins)
}
