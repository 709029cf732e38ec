//! A list page's filters as typed in its query string, and the links that keep
//! them from page to page: what both UIs' transaction lists read alike.

use billpay_domain::{Product, TxStatus};
use billpay_store::TxFilter;
use serde::Deserialize;

/// The filters every transaction list offers. A UI with more reads them from
/// the same query string with a second `Query` of its own.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct TxFilters {
    pub product: String,
    pub status: String,
    /// `YYYY-MM-DD`, inclusive.
    pub from: String,
    /// `YYYY-MM-DD`, inclusive.
    pub to: String,
    /// A reference or reference code.
    pub q: String,
    pub page: u32,
}

impl TxFilters {
    /// The page asked for, counted from 1.
    pub fn page(&self) -> u32 {
        self.page.max(1)
    }

    /// The store's filter for this page of `size` rows; it asks for one row
    /// more, so that [`more_pages`] can tell whether another page follows.
    /// Unknown products and statuses and bad dates filter nothing.
    pub fn tx_filter(&self, size: u32) -> TxFilter {
        TxFilter {
            status: self.status.parse::<TxStatus>().ok(),
            product: self.product.parse::<Product>().ok(),
            created_from: day_start(&self.from, false),
            created_until: day_start(&self.to, true),
            search: typed(&self.q),
            limit: size + 1,
            offset: (self.page() - 1) * size,
            ..TxFilter::default()
        }
    }
}

/// Whether a page asked for with one row more than `size` (as
/// [`TxFilters::tx_filter`] does) has a next page, the extra row dropped.
pub fn more_pages<T>(rows: &mut Vec<T>, size: u32) -> bool {
    let more = rows.len() > size as usize;
    rows.truncate(size as usize);
    more
}

/// The start of a `YYYY-MM-DD` Lagos day as stored times are written (UTC:
/// 23:00 the day before), or of the day after (for an inclusive end); `None`
/// for anything but such a date.
pub fn day_start(date: &str, day_after: bool) -> Option<String> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    if date.len() != 10 {
        return None;
    }
    let mut day = time::Date::parse(date, format).ok()?;
    if day_after {
        day = day.next_day()?;
    }
    Some(billpay_store::clock::lagos_day_start(day))
}

/// A filter as typed: `None` when left blank.
pub fn typed(text: &str) -> Option<String> {
    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
}

/// `path?name=value&…&page=N`, blank filters left out.
pub fn page_link(path: &str, filters: &[(&str, &str)], page: u32) -> String {
    let query = filters
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", url_encode(v)))
        .chain(std::iter::once(format!("page={page}")))
        .collect::<Vec<_>>()
        .join("&");
    format!("{path}?{query}")
}

/// Percent-encodes all but RFC 3986's unreserved characters.
pub fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_bound_the_created_time() {
        let start = day_start("2026-02-28", false);
        // Lagos days: midnight in Lagos is 23:00 UTC the day before
        assert_eq!(start.as_deref(), Some("2026-02-27T23:00:00.000+00:00"));
        let end = day_start("2026-02-28", true);
        assert_eq!(end.as_deref(), Some("2026-02-28T23:00:00.000+00:00"));
        for bad in ["", "2026-2-28", "2026-02-30", "+2026-02-28", "2026-02-28x"] {
            assert_eq!(day_start(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn filters_read_leniently() {
        let f = TxFilters {
            product: "airtime".into(),
            status: "nonsense".into(),
            to: "2026-11-30".into(),
            q: "  ref-1 ".into(),
            page: 3,
            ..TxFilters::default()
        };
        let filter = f.tx_filter(25);
        assert_eq!(filter.product, Some(Product::Airtime));
        assert_eq!(filter.status, None);
        assert_eq!(filter.created_from, None);
        assert_eq!(
            filter.created_until.as_deref(),
            Some("2026-11-30T23:00:00.000+00:00")
        );
        assert_eq!(filter.search.as_deref(), Some("ref-1"));
        assert_eq!((filter.limit, filter.offset), (26, 50));
        assert_eq!(TxFilters::default().page(), 1);
        assert_eq!(typed("   "), None);
    }

    #[test]
    fn links_keep_what_was_typed() {
        let filters = [("product", "data"), ("status", ""), ("q", "a b&c/é")];
        assert_eq!(
            page_link("/x", &filters, 2),
            "/x?product=data&q=a%20b%26c%2F%C3%A9&page=2"
        );
        assert_eq!(page_link("/x", &[], 1), "/x?page=1");
    }
}
