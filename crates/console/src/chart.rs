//! The overview's chart: the last 30 Lagos days' sales (bars: what customers
//! were charged) and margin (line: profit over purchases whose cost is
//! known), drawn by the web kit's chart.

use billpay_domain::Kobo;
use billpay_webkit::chart::{Chart, Column, Line, Scale, Segment};
use billpay_webkit::format::naira;

/// One day of the chart.
pub struct Day {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub sales: Kobo,
    pub margin: Kobo,
}

pub const SALES_COLOUR: &str = "#0f766e";
pub const MARGIN_COLOUR: &str = "#ea580c";

pub fn sales_and_margin_svg(days: &[Day]) -> String {
    let chart = Chart {
        label: "Sales and margin, last 30 days",
        id: Some("sales-chart"),
        left: 64.0,
        columns: days.iter().map(column).collect(),
        // A negative margin sits on the axis: the chart shows sales' scale.
        lines: vec![Line {
            values: days.iter().map(|d| d.margin.0).collect(),
            scale: Scale::Naira,
            colour: MARGIN_COLOUR,
            width: 2.0,
            dashed: false,
            title: "margin per day".into(),
        }],
    };
    chart.svg()
}

/// One bar a day, even an empty one, titled with both figures.
fn column(d: &Day) -> Column {
    Column {
        day: d.day.clone(),
        segments: vec![Segment {
            amount: d.sales,
            colour: SALES_COLOUR,
            title: format!(
                "{}: sales {}, margin {}",
                d.day,
                naira(d.sales),
                naira(d.margin)
            ),
        }],
    }
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
        assert!(svg.contains(r#"id="sales-chart""#));
        assert_eq!(svg.matches("<rect").count(), 30);
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains("2026-11-05: sales ₦1,500.00, margin ₦40.00"));
        assert!(svg.contains("2026-11-06: sales ₦0.00, margin -₦1.00"));
        assert!(svg.contains(">₦1,500<"), "the top of the scale");
    }
}
