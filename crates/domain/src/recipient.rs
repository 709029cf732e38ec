//! The account numbers a purchase is made for, each valid by construction:
//! a cable smartcard, an electricity meter and its type, a betting customer.
//! Phone numbers are `crate::Phone`.
//!
//! Each is kept in one canonical form ([`canonical`]; docs/limits.md): what
//! is sent to the supplier, compared with the blocklist and counted by the
//! per-recipient limits and velocity rules, so `" bk556677"`, `"BK556677\u{a0}"`
//! and `"ＢＫ556677"` are the same recipient as `"BK556677"`.

use std::fmt;

use unicode_normalization::UnicodeNormalization;

use crate::Phone;
use crate::reference::is_format;

/// Text as the characters it stands for: without invisible format characters
/// (zero-width spaces, bidi marks…), then Unicode NFKC (full-width `Ｂ` and
/// `７` become `B` and `7`, a no-break space a space). Phone numbers are read
/// from it ([`Phone::parse`]), the other account numbers through [`canonical`].
pub fn normalise(text: &str) -> String {
    text.chars().filter(|&c| !is_format(c)).nfkc().collect()
}

/// The canonical form of an account number a person typed (smartcard, meter,
/// profile ID, betting id), its kind's rule applied after it: [`normalise`]d,
/// every whitespace character dropped (not only at the ends: no-break and
/// ideographic spaces too), ASCII letters upper-cased (suppliers treat betting
/// ids without regard to case; digits have none).
pub fn canonical(text: &str) -> String {
    normalise(text)
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// A recipient of no stated kind (a blocklist entry's): a Nigerian phone
/// number in its `0XXXXXXXXXX` form, anything else [`canonical`]: the form a
/// purchase to it carries, whichever of its forms was typed.
pub fn recipient_key(text: &str) -> String {
    Phone::parse(text).map_or_else(|_| canonical(text), String::from)
}

/// A request field that breaks its rule; shown to clients as `field: rule`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {rule}")]
pub struct FieldError {
    pub field: &'static str,
    pub rule: String,
}

impl FieldError {
    pub fn new(field: &'static str, rule: impl Into<String>) -> FieldError {
        FieldError {
            field,
            rule: rule.into(),
        }
    }
}

/// `min..=max` ASCII digits as sent (the API document's pattern: anything
/// else is refused, so no other spelling of a number gets past a check), or
/// the rule that names the bounds. A form a person typed passes its text
/// through [`canonical`] first.
fn digits(field: &'static str, value: &str, min: usize, max: usize) -> Result<String, FieldError> {
    let ok = (min..=max).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit());
    match ok {
        true => Ok(value.to_owned()),
        false => Err(FieldError::new(
            field,
            format!("must be {min} to {max} digits"),
        )),
    }
}

macro_rules! text_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        /// Stored as its text (a schedule's purchase), read back through `parse`.
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl TryFrom<String> for $name {
            type Error = FieldError;
            fn try_from(value: String) -> Result<$name, FieldError> {
                $name::parse(&value)
            }
        }

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }
    };
}

text_newtype!(
    /// A cable TV smartcard (IUC) number: 6 to 20 digits, kept [`canonical`].
    SmartcardNumber
);
text_newtype!(
    /// An electricity meter number: 1 to 20 digits, kept [`canonical`].
    MeterNumber
);
text_newtype!(
    /// A betting account id: 1 to 40 characters, no control characters, not
    /// only spaces; kept [`canonical`] (no whitespace, upper case).
    CustomerId
);
text_newtype!(
    /// A JAMB candidate's profile ID (profile code): 10 digits, kept [`canonical`].
    ProfileId
);

impl ProfileId {
    pub fn parse(value: &str) -> Result<ProfileId, FieldError> {
        digits("profile_id", value, 10, 10).map(ProfileId)
    }
}

impl SmartcardNumber {
    pub fn parse(value: &str) -> Result<SmartcardNumber, FieldError> {
        digits("smartcard_number", value, 6, 20).map(SmartcardNumber)
    }
}

impl MeterNumber {
    pub fn parse(value: &str) -> Result<MeterNumber, FieldError> {
        digits("meter_number", value, 1, 20).map(MeterNumber)
    }
}

impl CustomerId {
    /// The length and control characters are the text's as sent (the API
    /// document's rule); what is kept is its canonical form, never empty.
    pub fn parse(value: &str) -> Result<CustomerId, FieldError> {
        let length = value.chars().count();
        let canonical = canonical(value);
        let ok = (1..=40).contains(&length)
            && !value.chars().any(char::is_control)
            && !canonical.is_empty();
        match ok {
            true => Ok(CustomerId(canonical)),
            false => Err(FieldError::new(
                "customer_id",
                "must be 1 to 40 characters, not only spaces",
            )),
        }
    }
}

/// Prepaid meters get a token; postpaid ones pay a bill. 1 and 2 on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub enum MeterType {
    Prepaid = 1,
    Postpaid = 2,
}

impl MeterType {
    pub fn parse(value: u8) -> Result<MeterType, FieldError> {
        match value {
            1 => Ok(MeterType::Prepaid),
            2 => Ok(MeterType::Postpaid),
            _ => Err(FieldError::new(
                "meter_type",
                "must be 1 (prepaid) or 2 (postpaid)",
            )),
        }
    }

    /// The number clients send and receive.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl TryFrom<u8> for MeterType {
    type Error = FieldError;
    fn try_from(value: u8) -> Result<MeterType, FieldError> {
        MeterType::parse(value)
    }
}

impl From<MeterType> for u8 {
    fn from(value: MeterType) -> u8 {
        value.code()
    }
}

/// What a person reads: `Prepaid`, `Postpaid`.
impl fmt::Display for MeterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            MeterType::Prepaid => "Prepaid",
            MeterType::Postpaid => "Postpaid",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_digits_within_their_lengths() {
        assert!(SmartcardNumber::parse("701234").is_ok());
        assert!(SmartcardNumber::parse("70123").is_err());
        assert!(SmartcardNumber::parse(&"1".repeat(21)).is_err());
        assert!(MeterNumber::parse("1").is_ok());
        assert!(MeterNumber::parse("").is_err());
        assert_eq!(
            MeterNumber::parse("12a").unwrap_err().to_string(),
            "meter_number: must be 1 to 20 digits"
        );
        assert!(SmartcardNumber::parse("70123a").is_err(), "only digits");
        assert!(
            SmartcardNumber::parse("٧٠١٢٣٤").is_err(),
            "only ASCII digits"
        );
    }

    /// Every form a person may type of one number is the same number.
    #[test]
    fn numbers_are_kept_in_one_canonical_form() {
        let forms = [
            "7012345678",
            " 7012345678",
            "7012345678 ",
            "\u{a0}7012345678\u{a0}",
            "701 234 5678",
            "\u{200b}7012345678",
            "\u{3000}7012345678\t",
            "７０１２３４５６７８",
        ];
        for form in forms {
            // the API takes only the documented spelling; a person's typing
            // (the shop's forms) and the blocklist read the canonical form
            let exact = form == "7012345678";
            assert_eq!(SmartcardNumber::parse(form).is_ok(), exact, "{form:?}");
            assert_eq!(MeterNumber::parse(form).is_ok(), exact, "{form:?}");
            let typed = canonical(form);
            let smartcard = SmartcardNumber::parse(&typed).unwrap();
            assert_eq!(smartcard.as_str(), "7012345678", "{form:?}");
            let meter = MeterNumber::parse(&typed).unwrap();
            assert_eq!(meter.as_str(), "7012345678", "{form:?}");
            assert_eq!(ProfileId::parse(&typed).unwrap().as_str(), "7012345678");
            assert_eq!(recipient_key(form), "7012345678", "{form:?}");
        }
        assert!(
            MeterNumber::parse(&canonical(" \u{a0} ")).is_err(),
            "nothing but spaces"
        );
        let padded = canonical(" 123456789 ");
        assert!(ProfileId::parse(&padded).is_err(), "9 digits, padded");
    }

    /// Betting ids: padding, no-break and zero-width spaces, case and
    /// full-width letters make no other id (`billpay blocklist add --recipient
    /// BK556677` refuses every one of them).
    #[test]
    fn betting_ids_are_kept_trimmed_and_upper_case() {
        for form in [
            "BK556677",
            " BK556677",
            "BK556677 ",
            "BK556677\u{a0}",
            "\u{a0}BK556677",
            "BK\u{200b}556677",
            "\u{feff}BK556677",
            "bk556677",
            "Bk556677",
            "ＢＫ556677",
            "ｂｋ５５６６７７",
            "BK 556 677",
        ] {
            let id = CustomerId::parse(form).unwrap();
            assert_eq!(id.as_str(), "BK556677", "{form:?}");
            assert_eq!(recipient_key(form), "BK556677", "{form:?}");
        }
        assert_eq!(CustomerId::parse("bj-55é").unwrap().as_str(), "BJ-55é");
        for blank in [" ", "\u{a0}", "\u{200b}", " \u{3000} "] {
            assert!(CustomerId::parse(blank).is_err(), "{blank:?}");
        }
    }

    /// A phone number's key is its `0XXXXXXXXXX` form, however it was typed.
    #[test]
    fn a_phone_numbers_key_is_its_local_form() {
        for form in [
            "08031234567",
            "+2348031234567",
            "0803 123 4567",
            "\u{a0}08031234567",
            "０８０３１２３４５６７",
            "\u{200b}08031234567",
        ] {
            assert_eq!(recipient_key(form), "08031234567", "{form:?}");
        }
    }

    #[test]
    fn customer_ids_are_short_printable_text() {
        assert_eq!(CustomerId::parse("ab-12").unwrap().as_str(), "AB-12");
        assert!(
            CustomerId::parse(&"é".repeat(40)).is_ok(),
            "counted in characters"
        );
        assert!(CustomerId::parse(&"a".repeat(41)).is_err());
        assert!(CustomerId::parse("").is_err());
        assert!(CustomerId::parse("a\nb").is_err());
        assert_eq!(
            ProfileId::parse("1234567890").unwrap().as_str(),
            "1234567890"
        );
        for bad in ["123456789", "12345678901", "12345abcde", ""] {
            assert!(ProfileId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn meter_types_are_one_or_two() {
        assert_eq!(MeterType::parse(1), Ok(MeterType::Prepaid));
        assert_eq!(MeterType::parse(2).unwrap().code(), 2);
        assert!(MeterType::parse(0).is_err());
        assert!(MeterType::parse(3).is_err());
    }
}
