//! A small day chart both UIs draw: one column a day of stacked coloured
//! segments on a y-axis in naira, with optional line series over them. Plain
//! inline SVG (the pages' CSP allows no script for it), built from numbers,
//! dates and the callers' titles, which are escaped here.

use crate::format::naira;
use billpay_domain::Kobo;
use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 240.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 24.0;
const PLOT_H: f64 = H - BOTTOM - TOP;
const MUTED: &str = "#6b7280";

/// A chart of days, oldest first.
pub struct Chart {
    /// The SVG's `aria-label`.
    pub label: &'static str,
    /// An `id` for pages and tests to find the chart by.
    pub id: Option<&'static str>,
    /// Room left of the plot for the naira labels.
    pub left: f64,
    pub columns: Vec<Column>,
    pub lines: Vec<Line>,
}

/// One day: its segments stacked from the axis up, in order.
pub struct Column {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub segments: Vec<Segment>,
}

pub struct Segment {
    pub amount: Kobo,
    pub colour: &'static str,
    /// The tooltip.
    pub title: String,
}

/// A series drawn as a polyline over the columns, one value a column.
pub struct Line {
    pub values: Vec<i64>,
    pub scale: Scale,
    pub colour: &'static str,
    pub width: f64,
    pub dashed: bool,
    pub title: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Kobo on the chart's naira axis (a negative value sits on the axis).
    Naira,
    /// Its own 0..max, e.g. a count, with no axis of its own.
    Own,
}

impl Chart {
    pub fn svg(&self) -> String {
        let top = self.naira_top();
        let mut svg = self.head();
        self.grid(&mut svg, top);
        let slot = (W - self.left) / self.columns.len().max(1) as f64;
        for (i, column) in self.columns.iter().enumerate() {
            self.column(&mut svg, column, self.x(i, slot), slot, top);
            self.day_label(&mut svg, i, slot);
        }
        for line in &self.lines {
            self.polyline(&mut svg, line, slot, top);
        }
        svg.push_str("</svg>");
        svg
    }

    fn head(&self) -> String {
        let id = self.id.map(|id| format!(r#" id="{}""#, escape(id)));
        format!(
            r#"<svg viewBox="0 0 {W} {H}" role="img" aria-label="{}" class="chart"{} xmlns="http://www.w3.org/2000/svg">"#,
            escape(self.label),
            id.unwrap_or_default()
        )
    }

    /// The axis' top in kobo: the tallest column or naira line value, ₦1 at least.
    fn naira_top(&self) -> f64 {
        let columns = self.columns.iter().map(|c| stacked(c, c.segments.len()));
        let lines = self.lines.iter().filter(|l| l.scale == Scale::Naira);
        let values = lines.flat_map(|l| l.values.iter().copied());
        columns.chain(values).max().unwrap_or(0).max(100) as f64
    }

    /// Five grid lines, each with its amount in whole naira.
    fn grid(&self, svg: &mut String, top: f64) {
        for step in 0..=4 {
            let y = TOP + PLOT_H * (1.0 - step as f64 / 4.0);
            let label = naira(Kobo((top * step as f64 / 4.0) as i64));
            let label = label.split('.').next().unwrap_or_default();
            let _ = write!(
                svg,
                r##"<line x1="{left}" x2="{W}" y1="{y:.1}" y2="{y:.1}" stroke="#e5e7eb"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end" fill="{MUTED}">{label}</text>"##,
                self.left - 4.0,
                y + 3.0,
                left = self.left,
            );
        }
    }

    /// A column's left edge: bars take the middle 70 % of their slot.
    fn x(&self, i: usize, slot: f64) -> f64 {
        self.left + slot * i as f64 + slot * 0.15
    }

    fn column(&self, svg: &mut String, column: &Column, x: f64, slot: f64, top: f64) {
        for (i, s) in column.segments.iter().enumerate() {
            let h = PLOT_H * s.amount.0.max(0) as f64 / top;
            let y = TOP + PLOT_H * (1.0 - stacked(column, i + 1) as f64 / top);
            let _ = write!(
                svg,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{}</title></rect>"#,
                slot * 0.7,
                s.colour,
                escape(&s.title)
            );
        }
    }

    /// Every fifth day's `MM-DD`, and the last day's.
    fn day_label(&self, svg: &mut String, i: usize, slot: f64) {
        let last = i + 1 == self.columns.len();
        if !i.is_multiple_of(5) && !last {
            return;
        }
        let x = self.x(i, slot);
        // The last label ends at the bar's right edge so it is not clipped.
        let (anchor, lx) = if last {
            ("end", x + slot * 0.7)
        } else {
            ("middle", x + slot * 0.35)
        };
        let day = &self.columns[i].day;
        let _ = write!(
            svg,
            r##"<text x="{lx:.1}" y="{:.1}" font-size="10" text-anchor="{anchor}" fill="{MUTED}">{}</text>"##,
            H - 8.0,
            escape(day.get(5..).unwrap_or(day))
        );
    }

    fn polyline(&self, svg: &mut String, line: &Line, slot: f64, naira_top: f64) {
        let top = match line.scale {
            Scale::Naira => naira_top,
            Scale::Own => line.values.iter().copied().max().unwrap_or(0).max(1) as f64,
        };
        let mut points = String::new();
        for (i, value) in line.values.iter().enumerate() {
            let y = TOP + PLOT_H * (1.0 - (*value).max(0) as f64 / top);
            let _ = write!(points, "{:.1},{y:.1} ", self.x(i, slot) + slot * 0.35);
        }
        let dash = if line.dashed {
            r#" stroke-dasharray="4 3""#
        } else {
            ""
        };
        let _ = write!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="{}"{dash}><title>{}</title></polyline>"#,
            points.trim_end(),
            line.colour,
            line.width,
            escape(&line.title)
        );
    }
}

/// The first `n` segments' sum, negatives as nothing.
fn stacked(column: &Column, n: usize) -> i64 {
    column.segments[..n].iter().map(|s| s.amount.0.max(0)).sum()
}

/// Text safe inside an element or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(n: u32) -> Vec<Column> {
        (1..=n)
            .map(|d| Column {
                day: format!("2026-11-{d:02}"),
                segments: Vec::new(),
            })
            .collect()
    }

    fn chart(columns: Vec<Column>, lines: Vec<Line>) -> String {
        let chart = Chart {
            label: "test",
            id: Some("c"),
            left: 56.0,
            columns,
            lines,
        };
        chart.svg()
    }

    fn segment(amount: i64, title: &str) -> Segment {
        Segment {
            amount: Kobo(amount),
            colour: "#000",
            title: title.into(),
        }
    }

    #[test]
    fn one_rect_per_segment_stacked_upwards() {
        let mut columns = days(30);
        columns[4].segments = vec![segment(100_000, "a"), segment(50_000, "b")];
        columns[19].segments = vec![segment(900_000, "c")];
        let svg = chart(columns, Vec::new());
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains(r#"class="chart" id="c""#));
        assert_eq!(svg.matches("<rect").count(), 3);
        // the tallest column reaches the top: ₦9,000 is the scale
        assert!(svg.contains(r#"y="12.0" width"#) && svg.contains(">₦9,000<"));
        // `b` sits on `a`: a's top is b's bottom
        let a = PLOT_H * (1.0 - 100_000.0 / 900_000.0) + TOP;
        assert!(svg.contains(&format!(r#"y="{a:.1}" width"#)));
    }

    fn line(values: Vec<i64>, scale: Scale, dashed: bool) -> Line {
        Line {
            values,
            scale,
            colour: "#111",
            width: if dashed { 1.5 } else { 2.0 },
            dashed,
            title: "m".into(),
        }
    }

    #[test]
    fn lines_on_the_naira_axis_or_their_own_scale() {
        let mut columns = days(3);
        columns[0].segments = vec![segment(1_000, "x")];
        let counts = line(vec![1, 4, 2], Scale::Own, true);
        let svg = chart(columns, vec![counts]);
        assert!(svg.contains(r#"stroke-width="1.5" stroke-dasharray="4 3""#));
        assert!(svg.contains(">₦10<"), "a count is not naira");
        assert!(svg.contains(",12.0 "), "the largest count reaches the top");
        let svg = chart(days(3), vec![line(vec![2_000, -5, 0], Scale::Naira, false)]);
        assert!(svg.contains(">₦20<"), "the line's top is the scale");
        assert!(svg.contains(r#"stroke-width="2"><title>m</title>"#));
        // a negative value sits on the axis, like zero
        assert_eq!(svg.matches(",228.0").count(), 0);
        assert_eq!(svg.matches(",216.0").count(), 2);
    }

    #[test]
    fn text_is_escaped_and_day_labels_every_fifth() {
        let mut columns = days(12);
        columns[0].segments = vec![segment(100, "<b>&\"")];
        let svg = chart(columns, Vec::new());
        assert!(svg.contains("<title>&lt;b&gt;&amp;&quot;</title>"));
        for label in [">11-01<", ">11-06<", ">11-11<", ">11-12<"] {
            assert!(svg.contains(label), "{label}");
        }
        assert!(!svg.contains(">11-02<"));
        assert!(svg.contains(r##"text-anchor="end" fill="#6b7280">11-12<"##));
    }
}
