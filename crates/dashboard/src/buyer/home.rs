//! The buyer's home (`/dashboard`, issue 46): the balance large, "Fund
//! wallet" with the account's reserved account numbers inline (reserved on
//! the first visit, as the Wallet page does: `pay_now::wallet_extras`),
//! quick-buy tiles, and the latest purchases, each a link to its receipt.
//! An account with developer access also sees its developer summary: its
//! keys, today's and this month's spend and the 30-day chart. Days are
//! Lagos days.

use super::history::TxRow;
use super::shop::forms::Product as ShopProduct;
use crate::page::{Chrome, PageResult, render};
use crate::session::allowed_in;
use crate::{DashboardState, chart, format};
use askama::Template;
use axum::extract::State;
use billpay_domain::{AccountId, Kobo, Product};
use billpay_store::clock::{lagos_day_start, lagos_today};
use billpay_store::{KeyStatus, SharedStore, StoreResult};
use billpay_webkit::SessionToken;

/// Purchases listed on the home page.
const RECENT: u32 = 5;

#[derive(Template)]
#[template(path = "buyer/home.html")]
struct HomePage {
    chrome: Chrome,
    first_name: String,
    balance: String,
    /// Slug, title and blurb of each product.
    tiles: Vec<(&'static str, &'static str, &'static str)>,
    recent: Vec<TxRow>,
    fund_accounts: Vec<super::fund_wallet::FundAccount>,
    reserving: super::pay_now::Reserving,
    /// A card payment is offered (the Wallet page's "Pay now").
    pay_by_card: bool,
    developer: Option<DeveloperSummary>,
}

/// What a developer reads on the home page besides the buyer's part.
pub struct DeveloperSummary {
    pub keys_in_force: usize,
    pub today: String,
    pub today_count: u32,
    pub month: String,
    pub month_count: u32,
    pub chart_svg: String,
    pub legend: Vec<(&'static str, &'static str)>,
}

/// The session's account and its wallet are read together (one store call):
/// the page every buyer lands on.
pub async fn page(State(state): State<DashboardState>, token: SessionToken) -> PageResult {
    let home = state.store.session_home(&token.token_hash, RECENT).await?;
    let found = home
        .filter(|h| allowed_in(&h.account))
        .map(|h| (h.account, h.wallet));
    let (signed_in, mut wallet) = token.signed_in_with(found)?;
    let account = signed_in.user.id;
    // A first visit reserves account numbers, shown below.
    let reserving = super::pay_now::reserve_on_first_visit(&state, &signed_in.user).await?;
    if reserving.reserved_any {
        wallet.reserved = state.store.reserved_accounts(Some(account)).await?;
    }
    let pay_by_card = state.funding.checkout_gateway().is_some();
    let developer = match signed_in.user.developer_access {
        Some(_) => Some(developer_summary(&state.store, account).await?),
        None => None,
    };
    let name = signed_in.user.name.trim();
    Ok(render(&HomePage {
        chrome: Chrome::new(&signed_in, "home"),
        first_name: name.split_whitespace().next().unwrap_or(name).to_owned(),
        balance: format::naira(signed_in.user.balance),
        tiles: ShopProduct::ALL
            .iter()
            .map(|p| (p.slug(), p.title(), p.blurb()))
            .collect(),
        recent: wallet.recent.iter().map(TxRow::from).collect(),
        fund_accounts: wallet
            .reserved
            .into_iter()
            .map(super::fund_wallet::FundAccount::from)
            .collect(),
        reserving,
        pay_by_card,
        developer,
    }))
}

async fn developer_summary(
    store: &SharedStore,
    account: AccountId,
) -> StoreResult<DeveloperSummary> {
    let today = lagos_today();
    let first_of_month = today.replace_day(1).expect("day 1 exists");
    let since = (today - time::Duration::days(29)).min(first_of_month);
    let rows = store.daily_spend(account, &lagos_day_start(since)).await?;
    let sum = |from: time::Date| -> (Kobo, u32) {
        let from = from.to_string();
        rows.iter()
            .filter(|r| r.day >= from)
            .fold((Kobo::ZERO, 0), |(a, c), r| {
                (Kobo(a.0 + r.amount.0), c + r.count)
            })
    };
    let (today_spend, today_count) = sum(today);
    let (month_spend, month_count) = sum(first_of_month);
    let days: Vec<String> = (0..30)
        .rev()
        .map(|back| (today - time::Duration::days(back)).to_string())
        .collect();
    // the shop's own key counts too: its purchases are in the chart
    let keys = store.api_keys(account).await?;
    Ok(DeveloperSummary {
        keys_in_force: keys
            .iter()
            .filter(|k| k.status == KeyStatus::Active)
            .count(),
        today: format::naira(today_spend),
        today_count,
        month: format::naira(month_spend),
        month_count,
        chart_svg: chart::daily_spend_svg(&days, &rows),
        legend: Product::ALL
            .iter()
            .map(|p| (p.service(), chart::colour(*p)))
            .collect(),
    })
}
