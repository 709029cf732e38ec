//! Reports: the sales and margin report of `billpay report sales` (the same
//! operation, `reports::sales`, and the same groupings) for a range of
//! Lagos days, on the page and as a CSV download.

use super::{Chrome, Done, PageResult, refused, render};
use crate::ConsoleState;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use billpay_domain::AccountId;
use billpay_operations::OpsError;
use billpay_operations::reports::{self, GroupBy, SalesLine, SalesReport};
use billpay_webkit::format::naira;
use serde::Deserialize;
use std::collections::HashMap;

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
    /// By account: the account's name and page (the id on hover).
    pub name: Option<String>,
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
            name: None,
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
    /// Rows are accounts: their keys link to the account's page.
    by_account: bool,
    totals: Line,
    /// By bank transfer to a reserved account, and by card (a checkout).
    funding_by_transfer: String,
    funding_by_card: String,
    funding_fees: String,
    /// Upgrade fees kept (less what was given back), and how many bought.
    upgrade_income: String,
    upgrades_bought: u64,
    /// The referrers who cost the most in the range: email, referees, cost.
    referrers: Vec<(String, u64, String)>,
    referral_cost: String,
    csv_link: String,
    /// Why the range typed was refused (shown in the form; no rows).
    error: Option<String>,
    first_day: time::Date,
    last_day: time::Date,
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(range): Query<Range>,
) -> PageResult {
    let asked = range.asked()?;
    let store = state.store.as_ref();
    let (error, report) = match reports::sales(store, asked.from(), asked.to(), asked.by).await {
        Ok(report) => (None, report),
        Err(OpsError::Invalid(invalid)) => {
            (Some(invalid.to_string()), reports::report(&[], asked.by))
        }
        Err(other) => return Err(refused(other)),
    };
    let names = account_names(&state, &asked, &report).await?;
    let (from, to) = (
        asked.from.clone().unwrap_or_default(),
        asked.to.clone().unwrap_or_default(),
    );
    let refused_range = error.is_some();
    let mut page = render(&ReportsPage {
        chrome: Chrome::new(&signed_in, "reports", &Done::default()),
        groupings: GroupBy::NAMES,
        csv_link: format!(
            "/admin/reports.csv?from={from}&to={to}&by={}",
            asked.by_name
        ),
        from,
        to,
        by: asked.by_name,
        rows: report
            .rows
            .iter()
            .map(|l| Line {
                name: names.get(&l.key).cloned(),
                ..Line::from(l)
            })
            .collect(),
        by_account: asked.by_name == "account",
        totals: Line::from(&report.totals),
        funding_by_transfer: naira(report.funding_by_transfer()),
        funding_by_card: naira(report.funding_by_card),
        funding_fees: report.funding_fees.map(naira).unwrap_or_default(),
        upgrade_income: naira(report.upgrade_income()),
        upgrades_bought: report.upgrades.upgrades,
        referrers: report
            .referrers
            .iter()
            .map(|r| (r.email.clone(), r.referees, naira(r.cost)))
            .collect(),
        referral_cost: naira(reports::referral_cost(&report)),
        error,
        first_day: reports::FIRST_DAY,
        last_day: reports::LAST_DAY,
    });
    if refused_range && page.status() == StatusCode::OK {
        *page.status_mut() = StatusCode::BAD_REQUEST;
    }
    Ok(page)
}

/// The same report as `text/csv`, money in Naira with 2 decimals.
pub async fn csv(
    State(state): State<ConsoleState>,
    _: SignedIn,
    Query(range): Query<Range>,
) -> PageResult {
    let asked = range.asked()?;
    let report = run(&state, &asked).await?;
    let names = account_names(&state, &asked, &report).await?;
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
    let by_account = asked.by_name == "account";
    let text = csv_text(&report, asked.by_name, by_account.then_some(&names));
    Ok((headers, text).into_response())
}

/// By account: each row's account name by its key (the id), in one lookup;
/// otherwise nothing.
async fn account_names(
    state: &ConsoleState,
    asked: &Asked,
    report: &SalesReport,
) -> Result<HashMap<String, String>, super::PageError> {
    if asked.by_name != "account" {
        return Ok(HashMap::new());
    }
    let ids: Vec<AccountId> = report
        .rows
        .iter()
        .filter_map(|l| l.key.parse().ok())
        .collect();
    let names = state.store.account_names(&ids).await?;
    Ok(names
        .into_iter()
        .map(|(id, name)| (id.to_string(), name))
        .collect())
}

async fn run(state: &ConsoleState, asked: &Asked) -> Result<SalesReport, super::PageError> {
    let store = state.store.as_ref();
    reports::sales(store, asked.from(), asked.to(), asked.by)
        .await
        .map_err(refused)
}

impl Asked {
    fn from(&self) -> Option<&str> {
        self.from.as_deref()
    }

    fn to(&self) -> Option<&str> {
        self.to.as_deref()
    }
}

/// Rows, then the totals, then the funding lines (their amount in `charged`'s
/// column). By account (`names` given), a `name` column follows the id.
fn csv_text(report: &SalesReport, by: &str, names: Option<&HashMap<String, String>>) -> String {
    let name_column = if names.is_some() { ",name" } else { "" };
    let blank = if names.is_some() { "," } else { "" };
    // a day is a Lagos day: the header says so
    let first = if by == "day" { "day (Lagos, WAT)" } else { by };
    let mut text = format!(
        "{first}{name_column},purchases,face_value,charged,cost,profit,cost_unknown,failed_refunded\r\n"
    );
    for line in report.rows.iter().chain([&report.totals]) {
        let name = names.map_or_else(String::new, |names| {
            let name = names.get(&line.key).map_or("", String::as_str);
            format!(",{}", csv_field(name))
        });
        text.push_str(&format!(
            "{}{name},{},{},{},{},{},{},{}\r\n",
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
        "funding received by bank transfer{blank},,,{},,,,\r\n",
        report.funding_by_transfer()
    ));
    text.push_str(&format!(
        "funding received by card{blank},,,{},,,,\r\n",
        report.funding_by_card
    ));
    if let Some(fees) = report.funding_fees {
        text.push_str(&format!("funding fees (income){blank},,,{fees},,,,\r\n"));
    }
    text.push_str(&format!(
        "upgrade fees (income){blank},{},,{},,,,\r\n",
        report.upgrades.upgrades,
        report.upgrade_income()
    ));
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
            funding_by_card: Kobo(200_000),
            upgrades: billpay_store::UpgradeTotals {
                upgrades: 2,
                fees: Kobo(1_000_000),
                refunded: Kobo(500_000),
            },
            referrers: Vec::new(),
        };
        let text = csv_text(&report, "provider", None);
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "provider,purchases,face_value,charged,cost,profit,cost_unknown,failed_refunded"
        );
        assert_eq!(lines[1], "mtn,2,0.00,1500.50,0.00,0.00,0,0");
        assert_eq!(lines[2], "\"'=cmd,x\",1,0.00,1500.50,0.00,0.00,0,0");
        assert_eq!(lines[3], "total,3,0.00,1500.50,0.00,0.00,0,0");
        // a card payment is not counted as a bank transfer
        assert_eq!(lines[4], "funding received by bank transfer,,,3000.00,,,,");
        assert_eq!(lines[5], "funding received by card,,,2000.00,,,,");
        assert_eq!(lines[6], "funding fees (income),,,75.00,,,,");
        assert_eq!(lines[7], "upgrade fees (income),2,,5000.00,,,,");
    }

    #[test]
    fn csv_by_account_has_the_name_beside_the_id() {
        let id = "0b7c0c4e-0000-4000-8000-000000000001";
        let report = SalesReport {
            rows: vec![SalesLine {
                key: id.into(),
                purchases: 1,
                charged: Kobo(100),
                ..SalesLine::default()
            }],
            totals: SalesLine {
                key: "total".into(),
                purchases: 1,
                charged: Kobo(100),
                ..SalesLine::default()
            },
            funding_fees: None,
            funding_received: Kobo(0),
            funding_by_card: Kobo(0),
            upgrades: billpay_store::UpgradeTotals::default(),
            referrers: Vec::new(),
        };
        let names = HashMap::from([(id.to_owned(), "Ada, Obi & Co".to_owned())]);
        let text = csv_text(&report, "account", Some(&names));
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "account,name,purchases,face_value,charged,cost,profit,cost_unknown,failed_refunded"
        );
        assert_eq!(
            lines[1],
            format!("{id},\"Ada, Obi & Co\",1,0.00,1.00,0.00,0.00,0,0")
        );
        assert_eq!(lines[2], "total,,1,0.00,1.00,0.00,0.00,0,0");
        assert_eq!(lines[3], "funding received by bank transfer,,,,0.00,,,,");
        assert_eq!(lines[4], "funding received by card,,,,0.00,,,,");
    }
}
