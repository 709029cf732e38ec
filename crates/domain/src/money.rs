//! Money is an integer count of kobo (1 Naira = 100 kobo). Floats never touch
//! the ledger: a JSON number is read back through its shortest decimal form and
//! must have at most two decimal places.

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};
use std::fmt;

/// An amount of Naira as an exact count of kobo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Kobo(pub i64);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("must be a number of Naira, like 5,000 or 5000.50")]
    NotANumber,
    #[error("must have at most 2 decimal places")]
    TooManyDecimals,
    #[error("must not be negative")]
    Negative,
    #[error("is too large")]
    TooLarge,
}

/// Largest amount accepted anywhere: one trillion Naira keeps every sum far from overflow.
const MAX_KOBO: i64 = 100_000_000_000_000;

impl Kobo {
    pub const ZERO: Kobo = Kobo(0);

    pub fn from_naira(naira: i64) -> Kobo {
        Kobo(naira * 100)
    }

    /// Parses a decimal Naira string such as `1500`, `1500.5` or `1500.25`.
    pub fn parse_naira(text: &str) -> Result<Kobo, MoneyError> {
        let text = text.trim();
        if text.starts_with('-') {
            return Err(MoneyError::Negative);
        }
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || !(fraction.is_empty() || digits(fraction)) || text.ends_with('.') {
            return Err(MoneyError::NotANumber);
        }
        if fraction.len() > 2 {
            return Err(MoneyError::TooManyDecimals);
        }
        if whole.len() > 13 {
            return Err(MoneyError::TooLarge);
        }
        let whole: i64 = whole.parse().map_err(|_| MoneyError::NotANumber)?;
        let frac: i64 = format!("{fraction:0<2}")
            .parse()
            .map_err(|_| MoneyError::NotANumber)?;
        let kobo = whole * 100 + frac;
        if kobo > MAX_KOBO {
            return Err(MoneyError::TooLarge);
        }
        Ok(Kobo(kobo))
    }

    /// Parses a decimal Naira amount as a supplier writes it, with any
    /// number of decimal places (`97.5`, `96.995`), rounded half-up to the
    /// kobo: read from its digits, never through a float, so `0.285` is 29
    /// kobo. What [`Kobo::parse_naira`] refuses otherwise, this refuses too.
    pub fn parse_naira_half_up(text: &str) -> Result<Kobo, MoneyError> {
        let text = text.trim();
        let Some((whole, fraction)) = text.split_once('.') else {
            return Kobo::parse_naira(text);
        };
        if fraction.len() <= 2 {
            return Kobo::parse_naira(text);
        }
        let (kept, dropped) = fraction.split_at(2);
        if !dropped.bytes().all(|b| b.is_ascii_digit()) {
            return Err(MoneyError::NotANumber);
        }
        let kobo = Kobo::parse_naira(&format!("{whole}.{kept}"))?;
        if dropped.as_bytes()[0] < b'5' {
            return Ok(kobo);
        }
        kobo.checked_add(Kobo(1))
            .filter(|k| k.0 <= MAX_KOBO)
            .ok_or(MoneyError::TooLarge)
    }

    /// An amount a person typed: [`Self::parse_naira`] after an optional `₦`
    /// or `NGN` and thousands separated by commas (`5,000`, `₦5,000.50`);
    /// commas anywhere else (`5,00`) are refused rather than guessed at.
    pub fn parse_typed_naira(text: &str) -> Result<Kobo, MoneyError> {
        let text = text.trim();
        let text = text
            .strip_prefix('₦')
            .or_else(|| text.strip_prefix("NGN"))
            .unwrap_or(text)
            .trim_start();
        let (whole, fraction) = text
            .split_once('.')
            .map_or((text, None), |(w, f)| (w, Some(f)));
        if whole.contains(',') {
            let mut groups = whole.split(',');
            let first = groups.next().unwrap_or_default();
            let first = first.strip_prefix('-').unwrap_or(first);
            if !(1..=3).contains(&first.len()) || groups.any(|g| g.len() != 3) {
                return Err(MoneyError::NotANumber);
            }
        }
        let plain = whole.replace(',', "");
        match fraction {
            Some(fraction) => Kobo::parse_naira(&format!("{plain}.{fraction}")),
            None => Kobo::parse_naira(&plain),
        }
    }

    /// Reads a float as JSON or TOML gave it, through its shortest round-trip
    /// decimal form, so `1500.25` stays exactly 150025 kobo and `0.001` is refused.
    pub fn from_naira_f64(value: f64) -> Result<Kobo, MoneyError> {
        if !value.is_finite() {
            return Err(MoneyError::NotANumber);
        }
        if value < 0.0 {
            return Err(MoneyError::Negative);
        }
        Kobo::parse_naira(&format!("{value}"))
    }

    pub fn as_naira_f64(self) -> f64 {
        self.0 as f64 / 100.0
    }

    pub fn checked_add(self, other: Kobo) -> Option<Kobo> {
        self.0.checked_add(other.0).map(Kobo)
    }

    pub fn checked_sub(self, other: Kobo) -> Option<Kobo> {
        self.0.checked_sub(other.0).map(Kobo)
    }

    pub fn checked_mul(self, times: i64) -> Option<Kobo> {
        self.0.checked_mul(times).map(Kobo)
    }
}

/// An amount as a person reads it, the one formatter of every page, notice,
/// message and CLI line: `₦1,500.25`, `-₦1,500.00`. (`Kobo`'s own `Display`
/// is the plain `1500.25` of JSON-ish text: CSV cells, form values, the
/// API's words.)
pub fn naira(amount: Kobo) -> String {
    Naira(amount).to_string()
}

/// [`naira`] inside a format string: `format!("the {} fee", Naira(fee))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Naira(pub Kobo);

impl fmt::Display for Naira {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0.0 < 0 { "-" } else { "" };
        let abs = self.0.0.unsigned_abs();
        let whole = (abs / 100).to_string();
        let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
        for (i, c) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(c);
        }
        write!(f, "{sign}₦{grouped}.{:02}", abs % 100)
    }
}

impl fmt::Display for Kobo {
    /// `₦1,500.25`-style text without the symbol or separators: `1500.25`
    /// (a person reads [`naira`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

/// On the wire an amount is a JSON number of Naira.
impl Serialize for Kobo {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_naira_f64())
    }
}

impl<'de> Deserialize<'de> for Kobo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NairaVisitor;
        impl de::Visitor<'_> for NairaVisitor {
            type Value = Kobo;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of Naira with at most 2 decimal places")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Kobo, E> {
                Kobo::parse_naira(&v.to_string()).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Kobo, E> {
                if v < 0 {
                    return Err(E::custom(MoneyError::Negative));
                }
                self.visit_u64(v as u64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Kobo, E> {
                Kobo::from_naira_f64(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(NairaVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suppliers_amount_is_rounded_half_up_to_the_kobo() {
        let parse = Kobo::parse_naira_half_up;
        assert_eq!(parse("97.5"), Ok(Kobo(9_750)));
        assert_eq!(parse(" 1500 "), Ok(Kobo(150_000)));
        assert_eq!(parse("0.285"), Ok(Kobo(29)));
        assert_eq!(parse("0.2849999"), Ok(Kobo(28)));
        assert_eq!(parse("96.995"), Ok(Kobo(9_700)));
        assert_eq!(parse("0.999"), Ok(Kobo(100)));
        assert_eq!(parse("1000000000000.005"), Err(MoneyError::TooLarge));
        assert_eq!(parse("-1.005"), Err(MoneyError::Negative));
        for bad in ["", "1.", ".005", "1.00x", "1e3", "1,000.005", "1.2.3"] {
            assert_eq!(parse(bad), Err(MoneyError::NotANumber), "{bad}");
        }
    }

    #[test]
    fn reads_amounts_as_people_type_them() {
        let typed = |t: &str| Kobo::parse_typed_naira(t);
        assert_eq!(typed("5,000"), Ok(Kobo(500_000)));
        assert_eq!(typed("₦5,000"), Ok(Kobo(500_000)));
        assert_eq!(typed(" ₦ 1,234,567.5 "), Ok(Kobo(123_456_750)));
        assert_eq!(typed("NGN 5000.50"), Ok(Kobo(500_050)));
        assert_eq!(typed("5000.50"), Ok(Kobo(500_050)));
        assert_eq!(typed("5,00"), Err(MoneyError::NotANumber));
        assert_eq!(typed("5000,000"), Err(MoneyError::NotANumber));
        assert_eq!(typed(",500"), Err(MoneyError::NotANumber));
        assert_eq!(typed("5,000.123"), Err(MoneyError::TooManyDecimals));
        assert_eq!(typed("-5,000"), Err(MoneyError::Negative));
        assert_eq!(typed("₦"), Err(MoneyError::NotANumber));
    }

    #[test]
    fn parses_up_to_two_decimals() {
        assert_eq!(Kobo::parse_naira("1500"), Ok(Kobo(150_000)));
        assert_eq!(Kobo::parse_naira("1500.5"), Ok(Kobo(150_050)));
        assert_eq!(Kobo::parse_naira("1500.25"), Ok(Kobo(150_025)));
        assert_eq!(Kobo::parse_naira("0.01"), Ok(Kobo(1)));
        assert_eq!(
            Kobo::parse_naira("1500.251"),
            Err(MoneyError::TooManyDecimals)
        );
        assert_eq!(Kobo::parse_naira("-1"), Err(MoneyError::Negative));
        for bad in ["", ".", "1.", ".5", "1e3", "NaN", "abc", "1,000", "1.2.3"] {
            assert_eq!(Kobo::parse_naira(bad), Err(MoneyError::NotANumber), "{bad}");
        }
        assert_eq!(
            Kobo::parse_naira("99999999999999"),
            Err(MoneyError::TooLarge)
        );
    }

    #[test]
    fn floats_go_through_their_decimal_form() {
        assert_eq!(Kobo::from_naira_f64(1500.25), Ok(Kobo(150_025)));
        assert_eq!(
            Kobo::from_naira_f64(0.1 + 0.2),
            Err(MoneyError::TooManyDecimals)
        );
        assert_eq!(Kobo::from_naira_f64(19.99), Ok(Kobo(1_999)));
        assert_eq!(Kobo::from_naira_f64(1e3), Ok(Kobo(100_000)));
        assert_eq!(Kobo::from_naira_f64(f64::NAN), Err(MoneyError::NotANumber));
        assert_eq!(Kobo::from_naira_f64(-5.0), Err(MoneyError::Negative));
        // every 2-decimal amount up to ₦100,000 survives the float round trip
        for kobo in (0..10_000_000).step_by(7) {
            assert_eq!(Kobo::from_naira_f64(kobo as f64 / 100.0), Ok(Kobo(kobo)));
        }
    }

    #[test]
    fn json_numbers_deserialize_exactly() {
        let k: Kobo = serde_json::from_str("1500.25").unwrap();
        assert_eq!(k, Kobo(150_025));
        assert!(serde_json::from_str::<Kobo>("1500.255").is_err());
        assert!(serde_json::from_str::<Kobo>("-3").is_err());
        assert!(serde_json::from_str::<Kobo>("\"100\"").is_err());
        assert_eq!(serde_json::to_string(&Kobo(150_025)).unwrap(), "1500.25");
    }

    #[test]
    fn people_read_naira_with_thousands_separators() {
        assert_eq!(naira(Kobo(150_025)), "₦1,500.25");
        assert_eq!(naira(Kobo(2_000_000)), "₦20,000.00");
        assert_eq!(naira(Kobo(100_000_000)), "₦1,000,000.00");
        assert_eq!(naira(Kobo(99_999)), "₦999.99");
        assert_eq!(naira(Kobo(5)), "₦0.05");
        assert_eq!(naira(Kobo(-150_000)), "-₦1,500.00");
        assert_eq!(naira(Kobo(i64::MIN)), "-₦92,233,720,368,547,758.08");
        assert_eq!(format!("fee {}", Naira(Kobo(2_000_000))), "fee ₦20,000.00");
    }

    #[test]
    fn displays_as_naira() {
        assert_eq!(Kobo(150_025).to_string(), "1500.25");
        assert_eq!(Kobo(5).to_string(), "0.05");
        assert_eq!(Kobo(-150).to_string(), "-1.50");
    }
}
