//! The buyer's room: the home page, the shop (every product bought with the
//! transaction PIN, receipts, beneficiaries), the wallet (reserved accounts,
//! pay now by card, the statement), the purchase history and the saved
//! recipients (beneficiaries), bulk buying from a CSV (`bulk`), and the
//! schedules ("Repeat this" on a receipt).

pub mod beneficiaries;
pub mod bulk;
pub mod fund_wallet;
pub mod history;
pub mod home;
pub mod pay_now;
pub mod referrals;
pub mod schedules;
pub mod shop;
pub mod upgrade;
pub mod wallet;

use crate::DashboardState;
use axum::Router;
use axum::routing::{get, post};

/// The buyer's pages, under `/dashboard`.
pub fn routes() -> Router<DashboardState> {
    Router::new()
        .route("/dashboard", get(home::page))
        .route("/dashboard/transactions", get(history::list))
        .route("/dashboard/transactions/{code}", get(history::detail))
        .route("/dashboard/wallet", get(wallet::statement))
        .route("/dashboard/wallet.csv", get(wallet::csv))
        .route("/dashboard/wallet/pay", post(pay_now::start))
        .route("/dashboard/wallet/paid", get(pay_now::returned))
        .route("/dashboard/wallet/reserve", post(pay_now::reserve))
        .route("/dashboard/upgrade", get(upgrade::page).post(upgrade::buy))
        .route("/dashboard/referrals", get(referrals::page))
        .route("/dashboard/referrals/withdraw", post(referrals::withdraw))
        .route("/dashboard/buy", get(shop::home))
        .route("/dashboard/buy/{product}", get(shop::form).post(shop::buy))
        .route("/dashboard/buy/{product}/verify", post(shop::verify))
        .route("/dashboard/receipts/{code}", get(shop::receipt::page))
        .route("/dashboard/bulk", get(bulk::page))
        .route("/dashboard/bulk/check", post(bulk::check))
        .route("/dashboard/bulk/pay", post(bulk::pay))
        .route("/dashboard/bulk/{reference}", get(bulk::progress))
        .route(
            "/dashboard/bulk/{reference}/results.csv",
            get(bulk::results),
        )
        .route(
            "/dashboard/beneficiaries",
            get(beneficiaries::page).post(shop::save_beneficiary),
        )
        .route(
            "/dashboard/beneficiaries/{id}/delete",
            post(beneficiaries::delete),
        )
        .route(
            "/dashboard/schedules",
            get(schedules::page).post(schedules::create),
        )
        .route(
            "/dashboard/schedules/{reference}/{change}",
            post(schedules::change),
        )
        .route("/dashboard/pin", get(shop::pin::form).post(shop::pin::set))
        .route("/dashboard/pin/change", post(shop::pin::change))
        .route("/dashboard/pin/forgot", post(shop::pin::forgot))
        .route(
            "/dashboard/pin/reset/{token}",
            get(shop::pin_reset::form).post(shop::pin_reset::reset),
        )
}
