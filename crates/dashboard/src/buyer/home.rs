//! Overview: balance, today's and this month's spend, the 30-day chart, the
//! latest transactions. Days are Lagos days.

use super::history::TxRow;
use crate::page::{Chrome, PageResult, render};
use crate::session::SignedIn;
use crate::{DashboardState, chart, format};
use askama::Template;
use axum::extract::State;
use billpay_domain::{Kobo, Product};
use billpay_store::TxFilter;
use billpay_store::clock::{lagos_day_start, lagos_today};

#[derive(Template)]
#[template(path = "buyer/home.html")]
struct OverviewPage {
    chrome: Chrome,
    balance: String,
    today: String,
    today_count: u32,
    month: String,
    month_count: u32,
    chart_svg: String,
    legend: Vec<(&'static str, &'static str)>,
    latest: Vec<TxRow>,
    funding: super::fund_wallet::FundingSection,
}

pub async fn page(State(state): State<DashboardState>, signed_in: SignedIn) -> PageResult {
    let account = signed_in.user.id;
    let today = lagos_today();
    let first_of_month = today.replace_day(1).expect("day 1 exists");
    let since = (today - time::Duration::days(29)).min(first_of_month);
    let rows = state
        .store
        .daily_spend(account, &lagos_day_start(since))
        .await?;
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
    let balance = state.store.balance(account).await?;
    let latest = state
        .store
        .transactions(TxFilter {
            account_id: Some(account),
            limit: 8,
            ..TxFilter::default()
        })
        .await?;
    Ok(render(&OverviewPage {
        chrome: Chrome::new(&signed_in, "overview"),
        balance: format::naira(balance),
        today: format::naira(today_spend),
        today_count,
        month: format::naira(month_spend),
        month_count,
        chart_svg: chart::daily_spend_svg(&days, &rows),
        legend: Product::ALL
            .iter()
            .map(|p| (p.service(), chart::colour(*p)))
            .collect(),
        latest: latest.iter().map(TxRow::from).collect(),
        funding: super::fund_wallet::load(&state.store, account).await?,
    }))
}
