//! The overview chart: daily spend over the last 30 days as bars stacked by
//! product, with the day's purchase count as a line. Plain inline SVG, built
//! here from numbers and fixed product names only.

use billpay_domain::Product;
use billpay_store::DailySpend;
use std::fmt::Write;

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
    const W: f64 = 720.0;
    const H: f64 = 240.0;
    const LEFT: f64 = 56.0;
    const BOTTOM: f64 = 24.0;
    let plot_h = H - BOTTOM - 12.0;
    let slot = (W - LEFT) / days.len().max(1) as f64;
    let spend_of = |day: &str| -> i64 {
        rows.iter()
            .filter(|r| r.day == day)
            .map(|r| r.amount.0)
            .sum()
    };
    let count_of =
        |day: &str| -> u32 { rows.iter().filter(|r| r.day == day).map(|r| r.count).sum() };
    let max_spend = days.iter().map(|d| spend_of(d)).max().unwrap_or(0).max(100) as f64;
    let max_count = days.iter().map(|d| count_of(d)).max().unwrap_or(0).max(1) as f64;

    let mut svg = format!(
        r#"<svg viewBox="0 0 {W} {H}" role="img" aria-label="Daily spend and purchases, last 30 days" class="chart" xmlns="http://www.w3.org/2000/svg">"#
    );
    for step in 0..=4 {
        let y = 12.0 + plot_h * (1.0 - step as f64 / 4.0);
        let label =
            crate::format::naira(billpay_domain::Kobo((max_spend * step as f64 / 4.0) as i64));
        let label = label.split('.').next().unwrap_or_default();
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{W}" y1="{y:.1}" y2="{y:.1}" stroke="#e5e7eb"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end" fill="#6b7280">{label}</text>"##,
            LEFT - 4.0,
            y + 3.0
        );
    }
    let mut line = String::new();
    for (i, day) in days.iter().enumerate() {
        let x = LEFT + slot * i as f64 + slot * 0.15;
        let mut y = 12.0 + plot_h;
        for product in Product::ALL {
            let Some(row) = rows.iter().find(|r| &r.day == day && r.product == product) else {
                continue;
            };
            let h = plot_h * row.amount.0 as f64 / max_spend;
            y -= h;
            let _ = write!(
                svg,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{day} {}: {} ({} purchases)</title></rect>"#,
                slot * 0.7,
                colour(product),
                product.service(),
                crate::format::naira(row.amount),
                row.count
            );
        }
        let cy = 12.0 + plot_h * (1.0 - count_of(day) as f64 / max_count);
        let _ = write!(line, "{:.1},{cy:.1} ", x + slot * 0.35);
        if i % 5 == 0 || i + 1 == days.len() {
            // The last label ends at the bar's right edge so it is not clipped.
            let (anchor, lx) = if i + 1 == days.len() {
                ("end", x + slot * 0.7)
            } else {
                ("middle", x + slot * 0.35)
            };
            let _ = write!(
                svg,
                r##"<text x="{lx:.1}" y="{:.1}" font-size="10" text-anchor="{anchor}" fill="#6b7280">{}</text>"##,
                H - 8.0,
                &day[5..]
            );
        }
    }
    let _ = write!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="#111827" stroke-width="1.5" stroke-dasharray="4 3"><title>purchases per day (max {max_count})</title></polyline></svg>"##,
        line.trim_end()
    );
    svg
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
    }
}
