//! Display helpers every UI shares: money as `₦1,500.25`, times shortened for tables.

use billpay_domain::Kobo;

pub fn naira(amount: Kobo) -> String {
    let text = amount.to_string();
    let (sign, digits) = text
        .strip_prefix('-')
        .map_or(("", text.as_str()), |d| ("-", d));
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "00"));
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}₦{grouped}.{fraction}")
}

/// `2026-11-22T01:51:22.123+00:00` → `2026-11-22 01:51`.
pub fn short_time(rfc3339: &str) -> String {
    rfc3339.get(..16).unwrap_or(rfc3339).replace('T', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money() {
        assert_eq!(naira(Kobo(150_025)), "₦1,500.25");
        assert_eq!(naira(Kobo(100_000_000)), "₦1,000,000.00");
        assert_eq!(naira(Kobo(5)), "₦0.05");
        assert_eq!(naira(Kobo(-150_000)), "-₦1,500.00");
    }
}
