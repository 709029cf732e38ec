//! The sales report (`billpay report sales`): successful purchases, their
//! face value, what was charged, what the suppliers charged us and the
//! profit, grouped by a Lagos day, product, provider, supplier, account or
//! price tier; and the failed (refunded) ones counted beside them. Read from
//! the hourly sales rollup; by account, from the purchases.

use crate::{OpsResult, invalid};
use billpay_domain::{Kobo, TxStatus};
use billpay_store::clock::LAGOS;
pub use billpay_store::clock::{lagos_day_start as start_of, lagos_today};
use billpay_store::{SalesBucket, SalesGroup, Store, TopReferrer, UpgradeTotals};
use std::collections::BTreeMap;
use time::macros::{date, format_description};
use time::{Date, PrimitiveDateTime};

/// The first and last Lagos days a report may name: far beyond any sale, and
/// far inside what the date arithmetic handles (issue 27, finding 3).
pub const FIRST_DAY: Date = date!(2000 - 01 - 01);
pub const LAST_DAY: Date = date!(2100 - 12 - 31);

/// What the rows are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// The Lagos calendar day a purchase was placed.
    Day,
    Product,
    Provider,
    Supplier,
    Account,
    Tier,
}

impl GroupBy {
    pub const NAMES: [&'static str; 6] =
        ["day", "product", "provider", "supplier", "account", "tier"];

    pub fn parse(text: &str) -> OpsResult<GroupBy> {
        Ok(match text {
            "day" => GroupBy::Day,
            "product" => GroupBy::Product,
            "provider" => GroupBy::Provider,
            "supplier" => GroupBy::Supplier,
            "account" => GroupBy::Account,
            "tier" => GroupBy::Tier,
            _ => {
                return Err(invalid(
                    &["by"],
                    format!("{text:?} is not one of {}", GroupBy::NAMES.join(", ")),
                ));
            }
        })
    }
}

/// One row of the report (or its totals).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SalesLine {
    pub key: String,
    /// Successful purchases.
    pub purchases: u64,
    pub face_value: Kobo,
    pub charged: Kobo,
    /// What the suppliers charged, over the purchases whose cost is known.
    pub cost: Kobo,
    /// Charged − cost, over the purchases whose cost is known.
    pub profit: Kobo,
    /// Successful purchases whose cost is unknown (left out of cost and profit).
    pub cost_unknown: u64,
    /// Failed purchases, each refunded.
    pub failed_refunded: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalesReport {
    pub rows: Vec<SalesLine>,
    pub totals: SalesLine,
    /// Fees earned on wallet funding in the range (the funding fee ledger
    /// entries): a separate income line, never mixed into the sales. `None`
    /// from [`report`], which reads no ledger; [`sales`] fills it.
    pub funding_fees: Option<Kobo>,
    /// Payments credited to wallets in the range (before their fee), by
    /// bank transfer and by card; zero from [`report`].
    pub funding_received: Kobo,
    /// Of `funding_received`, what was paid by card (a gateway's hosted
    /// checkout); the rest came by bank transfer.
    pub funding_by_card: Kobo,
    /// Self-service upgrades bought in the range: their fees are income
    /// (less what the owner gave back), a line apart from the sales; zero
    /// from [`report`].
    pub upgrades: UpgradeTotals,
    /// The referrers who cost the most in the range (commissions and
    /// bonuses earned, less take-backs: a cost apart from the sales); empty
    /// from [`report`].
    pub referrers: Vec<TopReferrer>,
}

impl SalesReport {
    /// The upgrade fees kept: the fees less what was given back.
    pub fn upgrade_income(&self) -> Kobo {
        Kobo(self.upgrades.fees.0 - self.upgrades.refunded.0)
    }
}

impl SalesReport {
    /// What came by bank transfer to a reserved account.
    pub fn funding_by_transfer(&self) -> Kobo {
        self.funding_received
            .checked_sub(self.funding_by_card)
            .unwrap_or(Kobo::ZERO)
    }
}

/// How many referrers a report names.
pub const TOP_REFERRERS: u32 = 10;

/// What the referral programme cost over the report's referrers.
pub fn referral_cost(report: &SalesReport) -> Kobo {
    Kobo(report.referrers.iter().map(|r| r.cost.0).sum())
}

/// The report for Lagos days `from..=to` (either open), grouped `by`.
pub async fn sales(
    store: &dyn Store,
    from: Option<&str>,
    to: Option<&str>,
    by: GroupBy,
) -> OpsResult<SalesReport> {
    let from_day = from.map(|d| lagos_date("from", d)).transpose()?;
    let to_day = to.map(|d| lagos_date("to", d)).transpose()?;
    if let (Some(from), Some(to)) = (from_day, to_day)
        && from > to
    {
        return Err(invalid(&["from", "to"], "from must not be after to"));
    }
    let lower = from_day.map_or_else(String::new, start_of);
    // `~` sorts after every digit: no upper bound.
    let upper = match to_day {
        None => "~".to_owned(),
        Some(day) => start_of(
            day.next_day()
                .ok_or_else(|| invalid(&["to"], "is the last day there is"))?,
        ),
    };
    let funding = store.funding_totals(&lower, &upper).await?;
    let upgrades = store.upgrade_totals(&lower, &upper).await?;
    let referrers = store.top_referrers(&lower, &upper, TOP_REFERRERS).await?;
    // The hourly rollup has no account: by account, the purchases are read.
    let mut report = match by {
        GroupBy::Account => report(&store.sales(lower, upper).await?, by),
        _ => rollup_report(&store.sales_rollup(lower, upper).await?, by),
    };
    report.upgrades = upgrades;
    report.referrers = referrers;
    report.funding_fees = Some(funding.fees);
    report.funding_received = funding.received;
    report.funding_by_card = funding.by_card;
    Ok(report)
}

/// Sums the store's groups (`PricingStore::sales`) into rows by `by` and the totals.
pub fn report(groups: &[SalesGroup], by: GroupBy) -> SalesReport {
    summed(groups.iter().map(|group| {
        let key = key_of(&group.bucket, by).unwrap_or_else(|| group.account_id.to_string());
        (key, &group.bucket)
    }))
}

/// Sums the rollup's rows into rows by `by` (any but the account) and the totals.
pub fn rollup_report(buckets: &[SalesBucket], by: GroupBy) -> SalesReport {
    summed(buckets.iter().map(|bucket| {
        let key = key_of(bucket, by).unwrap_or_default();
        (key, bucket)
    }))
}

fn summed<'a>(keyed: impl Iterator<Item = (String, &'a SalesBucket)>) -> SalesReport {
    let mut rows: BTreeMap<String, SalesLine> = BTreeMap::new();
    let mut totals = SalesLine {
        key: "total".into(),
        ..SalesLine::default()
    };
    for (key, bucket) in keyed {
        let row = rows.entry(key.clone()).or_insert_with(|| SalesLine {
            key,
            ..SalesLine::default()
        });
        add(row, bucket);
        add(&mut totals, bucket);
    }
    SalesReport {
        rows: rows.into_values().collect(),
        totals,
        funding_fees: None,
        funding_received: Kobo::ZERO,
        funding_by_card: Kobo::ZERO,
        upgrades: UpgradeTotals::default(),
        referrers: Vec::new(),
    }
}

fn add(line: &mut SalesLine, bucket: &SalesBucket) {
    let sums = &bucket.sums;
    if bucket.status == TxStatus::Failed {
        line.failed_refunded += sums.purchases;
        return;
    }
    line.purchases += sums.purchases;
    line.face_value = Kobo(line.face_value.0 + sums.face_value.0);
    line.charged = Kobo(line.charged.0 + sums.charged.0);
    line.cost = Kobo(line.cost.0 + sums.cost.0);
    line.profit = Kobo(line.profit.0 + sums.margin().0);
    line.cost_unknown += sums.cost_unknown;
}

/// The row `bucket` counts in; `None` by account (a rollup row has none).
fn key_of(bucket: &SalesBucket, by: GroupBy) -> Option<String> {
    Some(match by {
        GroupBy::Day => lagos_day_of_hour(&bucket.hour),
        GroupBy::Product => bucket.product.service().to_owned(),
        GroupBy::Provider => bucket.provider.clone(),
        GroupBy::Supplier => bucket.supplier.clone().unwrap_or_else(|| "none".into()),
        GroupBy::Account => return None,
        GroupBy::Tier => bucket
            .tier
            .clone()
            .unwrap_or_else(|| billpay_domain::pricing::DEFAULT_TIER.into()),
    })
}

/// A Lagos day typed as `YYYY-MM-DD`, from [`FIRST_DAY`] to [`LAST_DAY`].
fn lagos_date(field: &'static str, text: &str) -> OpsResult<Date> {
    let fields: &'static [&'static str] = if field == "from" { &["from"] } else { &["to"] };
    let day = Date::parse(text.trim(), format_description!("[year]-[month]-[day]"))
        .map_err(|_| invalid(fields, format!("must be a date, YYYY-MM-DD (not {text})")))?;
    if !(FIRST_DAY..=LAST_DAY).contains(&day) {
        let rule = format!("must be a day from {FIRST_DAY} to {LAST_DAY} (not {day})");
        return Err(invalid(fields, rule));
    }
    Ok(day)
}

/// `2026-11-21T23` (a UTC hour) → `2026-11-22` (its Lagos day).
fn lagos_day_of_hour(hour: &str) -> String {
    let format = format_description!("[year]-[month]-[day]T[hour]");
    match PrimitiveDateTime::parse(hour, format) {
        Ok(at) => (at.assume_utc().to_offset(LAGOS).date()).to_string(),
        Err(_) => hour.get(..10).unwrap_or(hour).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use billpay_domain::{AccountId, Product};
    use billpay_store::SalesSums;

    fn group(hour: &str, status: TxStatus, charged: i64, cost: Option<i64>) -> SalesGroup {
        SalesGroup {
            account_id: AccountId::new(),
            bucket: SalesBucket {
                hour: hour.into(),
                product: Product::Airtime,
                provider: "mtn".into(),
                supplier: Some("sandbox".into()),
                tier: None,
                status,
                sums: SalesSums {
                    purchases: 1,
                    face_value: Kobo(10_000),
                    charged: Kobo(charged),
                    cost: Kobo(cost.unwrap_or(0)),
                    charged_with_cost: Kobo(if cost.is_some() { charged } else { 0 }),
                    cost_unknown: u64::from(cost.is_none()),
                },
            },
        }
    }

    #[test]
    fn days_are_lagos_days() {
        assert_eq!(lagos_day_of_hour("2026-11-21T23"), "2026-11-22");
        assert_eq!(lagos_day_of_hour("2026-11-21T22"), "2026-11-21");
        let day = Date::from_calendar_date(2026, time::Month::November, 22).unwrap();
        assert_eq!(start_of(day), "2026-11-21T23:00:00.000+00:00");
    }

    #[test]
    fn days_outside_the_range_are_refused_with_the_range() {
        let refused = |text| lagos_date("to", text).unwrap_err().to_string();
        let message = refused("9999-12-31");
        assert_eq!(
            message,
            "to must be a day from 2000-01-01 to 2100-12-31 (not 9999-12-31)"
        );
        assert!(refused("1999-12-31").contains("from 2000-01-01"));
        assert!(lagos_date("from", "-9999-01-01").is_err());
        assert!(refused("2026-13-01").contains("must be a date, YYYY-MM-DD"));
        assert_eq!(lagos_date("to", "2100-12-31").unwrap(), LAST_DAY);
        assert_eq!(lagos_date("from", "2000-01-01").unwrap(), FIRST_DAY);
        assert_eq!(start_of(FIRST_DAY), "1999-12-31T23:00:00.000+00:00");
        // The calendar's first day has no UTC midnight before it: no panic.
        assert!(!start_of(Date::MIN).is_empty());
    }

    #[test]
    fn profit_counts_only_known_costs_and_failures_apart() {
        let report = report(
            &[
                group("2026-11-21T23", TxStatus::Successful, 9_900, Some(9_700)),
                group("2026-11-21T10", TxStatus::Successful, 9_800, None),
                group("2026-11-21T10", TxStatus::Failed, 9_900, None),
            ],
            GroupBy::Day,
        );
        let keys: Vec<&str> = report.rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["2026-11-21", "2026-11-22"]);
        let t = &report.totals;
        assert_eq!((t.purchases, t.cost_unknown, t.failed_refunded), (2, 1, 1));
        assert_eq!(
            (t.charged, t.cost, t.profit),
            (Kobo(19_700), Kobo(9_700), Kobo(200))
        );
        assert_eq!(report.funding_fees, None);
    }
}
