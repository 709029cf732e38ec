//! The business at a glance: today's and this month's sales (count and
//! value), failed and refunded, the backlog and its oldest purchase, and
//! the needs-review count.

use super::{Chrome, Done, PageResult, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use billpay_domain::{Kobo, TxStatus};
use billpay_store::{SalesSummary, TxFilter};
use billpay_webkit::format::{naira, short_time};
use billpay_worker::fulfilment::needs_review_before;

/// One column of the overview: a period's sales.
pub struct Period {
    pub name: &'static str,
    pub sales: u64,
    pub value: String,
    pub failed: u64,
    pub refunded: String,
    pub processing: u64,
}

impl Period {
    fn of(name: &'static str, s: &SalesSummary) -> Period {
        Period {
            name,
            sales: s.successful_count,
            value: naira(Kobo(s.successful_value)),
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
}

/// At most this many needs-review purchases are counted ("500+").
const REVIEW_COUNT_CAP: u32 = 500;

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    let now = time::OffsetDateTime::now_utc();
    let day = now.replace_time(time::Time::MIDNIGHT);
    let month = day.replace_day(1).expect("day 1 exists");
    let since = |t: time::OffsetDateTime| billpay_store::clock::rfc3339(t.unix_timestamp() * 1000);
    let today = state.store.sales_summary(&since(day)).await?;
    let this_month = state.store.sales_summary(&since(month)).await?;
    let backlog = state.store.fulfilment_backlog().await?;
    let review = state
        .store
        .transactions(TxFilter {
            status: Some(TxStatus::Processing),
            created_until: Some(needs_review_before(state.needs_review_after)),
            limit: REVIEW_COUNT_CAP,
            ..TxFilter::default()
        })
        .await?;
    let age = backlog.oldest_age_secs() as u64;
    Ok(render(&OverviewPage {
        chrome: Chrome::new(&signed_in, "overview", &done),
        periods: vec![
            Period::of("Today (UTC)", &today),
            Period::of("This month", &this_month),
        ],
        backlog: backlog.processing,
        oldest: backlog.oldest_created_at.as_deref().map(short_time),
        oldest_age: format!("{}m {}s", age / 60, age % 60),
        needs_review: review.len(),
        review_cap: review.len() as u32 >= REVIEW_COUNT_CAP,
    }))
}
