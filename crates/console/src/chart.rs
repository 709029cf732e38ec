//! The overview's chart: the last 30 Lagos days' sales (bars: what customers
//! were charged) and margin (line: profit over purchases whose cost is
//! known). Plain inline SVG built here from numbers and dates only.

use billpay_domain::Kobo;
use billpay_webkit::format::naira;
use std::fmt::Write;

/// One day of the chart.
pub struct Day {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub sales: Kobo,
    pub margin: Kobo,
}

pub const SALES_COLOUR: &str = "#0f766e";
pub const MARGIN_COLOUR: &str = "#ea580c";

const W: f64 = 720.0;
const H: f64 = 240.0;
const LEFT: f64 = 64.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 24.0;

pub fn sales_and_margin_svg(days: &[Day]) -> String {
    let plot_h = H - BOTTOM - TOP;
    let slot = (W - LEFT) / days.len().max(1) as f64;
    let top = days.iter().map(|d| d.sales.0.max(d.margin.0)).max();
    let top = top.unwrap_or(0).max(100) as f64;
    // A negative margin sits on the axis: the chart shows sales' scale.
    let y_of = |amount: Kobo| TOP + plot_h * (1.0 - amount.0.max(0) as f64 / top);
    let mut svg = format!(
        r#"<svg viewBox="0 0 {W} {H}" role="img" aria-label="Sales and margin, last 30 days" class="chart" id="sales-chart" xmlns="http://www.w3.org/2000/svg">"#
    );
    for step in 0..=4 {
        let amount = Kobo((top * step as f64 / 4.0) as i64);
        let y = y_of(amount);
        let label = naira(amount);
        let label = label.split('.').next().unwrap_or_default();
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{W}" y1="{y:.1}" y2="{y:.1}" stroke="#e5e7eb"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end" fill="#6b7280">{label}</text>"##,
            LEFT - 4.0,
            y + 3.0
        );
    }
    let mut line = String::new();
    for (i, d) in days.iter().enumerate() {
        let x = LEFT + slot * i as f64 + slot * 0.15;
        let y = y_of(d.sales);
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{SALES_COLOUR}"><title>{}: sales {}, margin {}</title></rect>"#,
            slot * 0.7,
            TOP + plot_h - y,
            d.day,
            naira(d.sales),
            naira(d.margin)
        );
        let _ = write!(line, "{:.1},{:.1} ", x + slot * 0.35, y_of(d.margin));
        if i % 5 == 0 || i + 1 == days.len() {
            let (anchor, lx) = if i + 1 == days.len() {
                ("end", x + slot * 0.7)
            } else {
                ("middle", x + slot * 0.35)
            };
            let _ = write!(
                svg,
                r##"<text x="{lx:.1}" y="{:.1}" font-size="10" text-anchor="{anchor}" fill="#6b7280">{}</text>"##,
                H - 8.0,
                d.day.get(5..).unwrap_or(&d.day)
            );
        }
    }
    let _ = write!(
        svg,
        r#"<polyline points="{}" fill="none" stroke="{MARGIN_COLOUR}" stroke-width="2"><title>margin per day</title></polyline></svg>"#,
        line.trim_end()
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_day_and_the_margin_as_a_line() {
        let days: Vec<Day> = (1..=30)
            .map(|n| Day {
                day: format!("2026-11-{n:02}"),
                sales: Kobo(if n == 5 { 150_000 } else { 0 }),
                margin: Kobo(if n == 5 { 4_000 } else { -100 }),
            })
            .collect();
        let svg = sales_and_margin_svg(&days);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<rect").count(), 30);
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains("2026-11-05: sales ₦1,500.00, margin ₦40.00"));
        assert!(svg.contains("2026-11-06: sales ₦0.00, margin -₦1.00"));
        assert!(svg.contains(">₦1,500<"), "the top of the scale");
    }
}
