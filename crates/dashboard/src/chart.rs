//! The overview chart: daily spend over the last 30 days as bars stacked by
//! product, with the day's purchase count as a line, drawn by the web kit's
//! chart.

use billpay_domain::Product;
use billpay_store::DailySpend;
use billpay_webkit::chart::{Chart, Column, Line, Scale, Segment};
use billpay_webkit::format::naira;

pub fn colour(product: Product) -> &'static str {
    match product {
        Product::Airtime => "#2563eb",
        Product::Data => "#16a34a",
        Product::Epin => "#9333ea",
        Product::Cable => "#ea580c",
        Product::Electricity => "#ca8a04",
        Product::Education => "#0891b2",
        Product::Betting => "#db2777",
    }
}

/// `days` are `YYYY-MM-DD`, oldest first.
pub fn daily_spend_svg(days: &[String], rows: &[DailySpend]) -> String {
    let counts: Vec<i64> = days
        .iter()
        .map(|day| {
            rows.iter()
                .filter(|r| &r.day == day)
                .map(|r| r.count)
                .sum::<u32>() as i64
        })
        .collect();
    let max_count = counts.iter().copied().max().unwrap_or(0).max(1);
    let chart = Chart {
        label: "Daily spend and purchases, last 30 days",
        id: None,
        left: 56.0,
        columns: days.iter().map(|day| column(day, rows)).collect(),
        lines: vec![Line {
            values: counts,
            scale: Scale::Own,
            colour: "#111827",
            width: 1.5,
            dashed: true,
            title: format!("purchases per day (max {max_count})"),
        }],
    };
    chart.svg()
}

/// A day's spend, one segment per product bought, in the legend's order.
fn column(day: &str, rows: &[DailySpend]) -> Column {
    let segments = Product::ALL
        .into_iter()
        .filter_map(|product| rows.iter().find(|r| r.day == day && r.product == product))
        .map(|row| Segment {
            amount: row.amount,
            colour: colour(row.product),
            title: format!(
                "{day} {}: {} ({} purchases)",
                row.product.service(),
                naira(row.amount),
                row.count
            ),
        })
        .collect();
    Column {
        day: day.to_owned(),
        segments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use billpay_domain::Kobo;

    #[test]
    fn draws_one_rect_per_product_day() {
        let days: Vec<String> = (1..=30).map(|d| format!("2026-11-{d:02}")).collect();
        let rows = vec![
            DailySpend {
                day: "2026-11-05".into(),
                product: Product::Airtime,
                count: 2,
                amount: Kobo(100_000),
            },
            DailySpend {
                day: "2026-11-05".into(),
                product: Product::Data,
                count: 1,
                amount: Kobo(50_000),
            },
            DailySpend {
                day: "2026-11-20".into(),
                product: Product::Electricity,
                count: 3,
                amount: Kobo(900_000),
            },
        ];
        let svg = daily_spend_svg(&days, &rows);
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("electricity: ₦9,000.00 (3 purchases)"));
        assert!(svg.contains("<title>purchases per day (max 3)</title>"));
    }
}
