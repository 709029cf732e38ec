//! The business at a glance: today's and this month's sales (count, value,
//! margin), funding received, failed and refunded; the backlog and its
//! oldest purchase; the needs-review count; each supplier's float; the last
//! 30 days' sales and margin as a chart. Periods are Lagos days, as the
//! sales report's (`reports::sales`, which gives the figures).

use super::suppliers::{FloatRow, floats};
use super::{Chrome, Done, PageError, PageResult, refused, render};
use crate::ConsoleState;
use crate::chart::{self, Day, MARGIN_COLOUR, SALES_COLOUR};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use billpay_domain::Kobo;
use billpay_operations::reports::{self, GroupBy, SalesReport};
use billpay_store::{SalesSummary, TxFilter};
use billpay_webkit::format::{naira, short_time};
use billpay_worker::fulfilment::needs_review_before;
use time::{Date, Duration};

/// One column of the overview: a period's sales.
pub struct Period {
    pub name: &'static str,
    pub sales: u64,
    pub value: String,
    pub margin: String,
    /// Successful purchases whose supplier cost is unknown (not in the margin).
    pub cost_unknown: u64,
    pub funding: String,
    pub failed: u64,
    pub refunded: String,
    pub processing: u64,
}

impl Period {
    fn of(name: &'static str, report: &SalesReport, s: &SalesSummary) -> Period {
        let t = &report.totals;
        Period {
            name,
            sales: t.purchases,
            value: naira(t.charged),
            margin: naira(t.profit),
            cost_unknown: t.cost_unknown,
            funding: naira(report.funding_received),
            failed: s.failed_count,
            refunded: naira(Kobo(s.refunded_value)),
            processing: s.processing_count,
        }
    }
}

#[derive(Template)]
#[template(path = "overview.html")]
struct OverviewPage {
    chrome: Chrome,
    periods: Vec<Period>,
    backlog: u64,
    oldest: Option<String>,
    oldest_age: String,
    needs_review: usize,
    review_cap: bool,
    /// Held for review by a limit: waiting for an owner, not for a supplier.
    held: usize,
    held_cap: bool,
    floats: Vec<FloatRow>,
    chart_svg: String,
    legend: [(&'static str, &'static str); 2],
    /// Customers' own sign-ups today and this month (Lagos days).
    sign_ups: billpay_store::SignUpCounts,
}

/// At most this many needs-review (or held) purchases are counted ("500+").
const REVIEW_COUNT_CAP: u32 = 500;

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    let today = reports::lagos_today();
    let month = today.replace_day(1).expect("day 1 exists");
    let backlog = state.store.fulfilment_backlog().await?;
    let review = state
        .store
        .transactions(TxFilter::needs_review(
            needs_review_before(state.needs_review_after),
            REVIEW_COUNT_CAP,
        ))
        .await?;
    let held = state.store.held_purchases(REVIEW_COUNT_CAP).await?.len();
    let age = backlog.oldest_age_secs() as u64;
    let sign_ups = state
        .store
        .sign_up_counts(&reports::start_of(today), &reports::start_of(month))
        .await?;
    Ok(render(&OverviewPage {
        chrome: Chrome::new(&signed_in, "overview", &done),
        periods: vec![
            period(&state, "Today (Lagos)", today).await?,
            period(&state, "This month", month).await?,
        ],
        backlog: backlog.processing,
        oldest: backlog.oldest_created_at.as_deref().map(short_time),
        oldest_age: format!("{}m {}s", age / 60, age % 60),
        needs_review: review.len(),
        review_cap: review.len() as u32 >= REVIEW_COUNT_CAP,
        held,
        held_cap: held as u32 >= REVIEW_COUNT_CAP,
        floats: floats(&state).await,
        chart_svg: chart::sales_and_margin_svg(&last_30_days(&state, today).await?),
        legend: [("Sales", SALES_COLOUR), ("Margin", MARGIN_COLOUR)],
        sign_ups,
    }))
}

/// Sales from the Lagos day `from` until now.
async fn period(state: &ConsoleState, name: &'static str, from: Date) -> Result<Period, PageError> {
    let from_text = from.to_string();
    let report = reports::sales(
        state.store.as_ref(),
        Some(from_text.as_str()),
        None,
        GroupBy::Day,
    )
    .await
    .map_err(refused)?;
    let summary = state.store.sales_summary(&reports::start_of(from)).await?;
    Ok(Period::of(name, &report, &summary))
}

/// Each of the 30 Lagos days up to today, a day without sales at zero.
async fn last_30_days(state: &ConsoleState, today: Date) -> Result<Vec<Day>, PageError> {
    let first = today - Duration::days(29);
    let from = first.to_string();
    let report = reports::sales(
        state.store.as_ref(),
        Some(from.as_str()),
        None,
        GroupBy::Day,
    )
    .await
    .map_err(refused)?;
    Ok((0..30)
        .map(|n| {
            let day = (first + Duration::days(n)).to_string();
            let row = report.rows.iter().find(|r| r.key == day);
            Day {
                sales: row.map_or(Kobo::ZERO, |r| r.charged),
                margin: row.map_or(Kobo::ZERO, |r| r.profit),
                day,
            }
        })
        .collect())
}
