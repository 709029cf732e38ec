//! Reports: the sales and margin report of `billpay report sales` (the same
//! operation, `reports::sales`, and the same groupings) for a range of
//! Lagos days, on the page and as a CSV download.

use super::{Chrome, Done, PageResult, refused, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use billpay_operations::reports::{self, GroupBy, SalesLine, SalesReport};
use billpay_webkit::format::naira;
use serde::Deserialize;

/// `?from=YYYY-MM-DD&to=YYYY-MM-DD&by=day` (all optional: the last 30 days by day).
#[derive(Deserialize, Default)]
pub struct Range {
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    to: Option<String>,
    #[serde(default)]
    by: Option<String>,
}

/// A blank field is no bound; a missing `from` is 29 days before today.
struct Asked {
    from: Option<String>,
    to: Option<String>,
    by: GroupBy,
    by_name: &'static str,
}

impl Range {
    fn asked(&self) -> Result<Asked, super::PageError> {
        let blank_is_none = |v: &Option<String>| v.clone().filter(|v| !v.trim().is_empty());
        let from = match &self.from {
            None => Some((reports::lagos_today() - time::Duration::days(29)).to_string()),
            given => blank_is_none(given),
        };
        let by_name = self.by.as_deref().unwrap_or("day");
        let by = GroupBy::parse(by_name).map_err(refused)?;
        let by_name = GroupBy::NAMES
            .into_iter()
            .find(|n| *n == by_name)
            .unwrap_or("day");
        Ok(Asked {
            from,
            to: blank_is_none(&self.to),
            by,
            by_name,
        })
    }
}

pub struct Line {
    pub key: String,
    pub purchases: u64,
    pub face_value: String,
    pub charged: String,
    pub cost: String,
    pub profit: String,
    pub cost_unknown: u64,
    pub failed_refunded: u64,
}

impl From<&SalesLine> for Line {
    fn from(l: &SalesLine) -> Self {
        Line {
            key: l.key.clone(),
            purchases: l.purchases,
            face_value: naira(l.face_value),
            charged: naira(l.charged),
            cost: naira(l.cost),
            profit: naira(l.profit),
            cost_unknown: l.cost_unknown,
            failed_refunded: l.failed_refunded,
        }
    }
}

#[derive(Template)]
#[template(path = "reports.html")]
struct ReportsPage {
    chrome: Chrome,
    groupings: [&'static str; 6],
    from: String,
    to: String,
    by: &'static str,
    rows: Vec<Line>,
    totals: Line,
    funding_received: String,
    funding_fees: String,
    csv_link: String,
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(range): Query<Range>,
) -> PageResult {
    let asked = range.asked()?;
    let report = run(&state, &asked).await?;
    let (from, to) = (
        asked.from.clone().unwrap_or_default(),
        asked.to.clone().unwrap_or_default(),
    );
    Ok(render(&ReportsPage {
        chrome: Chrome::new(&signed_in, "reports", &Done::default()),
        groupings: GroupBy::NAMES,
        csv_link: format!(
            "/admin/reports.csv?from={from}&to={to}&by={}",
            asked.by_name
        ),
        from,
        to,
        by: asked.by_name,
        rows: report.rows.iter().map(Line::from).collect(),
        totals: Line::from(&report.totals),
        funding_received: naira(report.funding_received),
        funding_fees: report.funding_fees.map(naira).unwrap_or_default(),
    }))
}

/// The same report as `text/csv`, money in Naira with 2 decimals.
pub async fn csv(
    State(state): State<ConsoleState>,
    _: SignedIn,
    Query(range): Query<Range>,
) -> PageResult {
    let asked = range.asked()?;
    let report = run(&state, &asked).await?;
    let name = format!(
        "billpay-sales-{}-{}-by-{}.csv",
        asked.from.as_deref().unwrap_or("start"),
        asked.to.as_deref().unwrap_or("now"),
        asked.by_name
    );
    let headers = [
        (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
        (
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ),
    ];
    Ok((headers, csv_text(&report, asked.by_name)).into_response())
}

async fn run(state: &ConsoleState, asked: &Asked) -> Result<SalesReport, super::PageError> {
    let store = state.store.as_ref();
    let (from, to) = (asked.from.as_deref(), asked.to.as_deref());
    reports::sales(store, from, to, asked.by)
        .await
        .map_err(refused)
}

/// Rows, then the totals, then the funding lines (their amount in `charged`'s column).
fn csv_text(report: &SalesReport, by: &str) -> String {
    // a day is a Lagos day: the header says so
    let first = if by == "day" { "day (Lagos, WAT)" } else { by };
    let mut text = format!(
        "{first},purchases,face_value,charged,cost,profit,cost_unknown,failed_refunded\r\n"
    );
    for line in report.rows.iter().chain([&report.totals]) {
        text.push_str(&format!(
            "{},{},{},{},{},{},{},{}\r\n",
            csv_field(&line.key),
            line.purchases,
            line.face_value,
            line.charged,
            line.cost,
            line.profit,
            line.cost_unknown,
            line.failed_refunded
        ));
    }
    text.push_str(&format!(
        "funding received,,,{},,,,\r\n",
        report.funding_received
    ));
    if let Some(fees) = report.funding_fees {
        text.push_str(&format!("funding fees (income),,,{fees},,,,\r\n"));
    }
    text
}

/// Quoted when it holds a comma, quote or line break; a leading `=+-@` is
/// prefixed with `'` so a spreadsheet does not run it as a formula.
fn csv_field(text: &str) -> String {
    let text = match text.chars().next() {
        Some('=' | '+' | '-' | '@') => format!("'{text}"),
        _ => text.to_owned(),
    };
    if text.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use billpay_domain::Kobo;

    #[test]
    fn csv_has_rows_totals_and_funding_lines_and_no_formulas() {
        let line = |key: &str, purchases| SalesLine {
            key: key.into(),
            purchases,
            charged: Kobo(150_050),
            ..SalesLine::default()
        };
        let report = SalesReport {
            rows: vec![line("mtn", 2), line("=cmd,x", 1)],
            totals: line("total", 3),
            funding_fees: Some(Kobo(7_500)),
            funding_received: Kobo(500_000),
        };
        let text = csv_text(&report, "provider");
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "provider,purchases,face_value,charged,cost,profit,cost_unknown,failed_refunded"
        );
        assert_eq!(lines[1], "mtn,2,0.00,1500.50,0.00,0.00,0,0");
        assert_eq!(lines[2], "\"'=cmd,x\",1,0.00,1500.50,0.00,0.00,0,0");
        assert_eq!(lines[3], "total,3,0.00,1500.50,0.00,0.00,0,0");
        assert_eq!(lines[4], "funding received,,,5000.00,,,,");
        assert_eq!(lines[5], "funding fees (income),,,75.00,,,,");
    }
}
