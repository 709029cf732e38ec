//! The account numbers a purchase is made for, each valid by construction:
//! a cable smartcard, an electricity meter and its type, a betting customer.
//! Phone numbers are `crate::Phone`.

use std::fmt;

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

/// `min..=max` ASCII digits, or the rule that names the bounds.
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
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name(String);

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
    /// A cable TV smartcard (IUC) number: 6 to 20 digits.
    SmartcardNumber
);
text_newtype!(
    /// An electricity meter number: 1 to 20 digits.
    MeterNumber
);
text_newtype!(
    /// A betting account id: 1 to 40 characters, no control characters.
    CustomerId
);
text_newtype!(
    /// A JAMB candidate's profile ID (profile code): 10 digits.
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
    pub fn parse(value: &str) -> Result<CustomerId, FieldError> {
        let length = value.chars().count();
        match (1..=40).contains(&length) && !value.chars().any(char::is_control) {
            true => Ok(CustomerId(value.to_owned())),
            false => Err(FieldError::new("customer_id", "must be 1 to 40 characters")),
        }
    }
}

/// Prepaid meters get a token; postpaid ones pay a bill. 1 and 2 on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
        assert!(
            SmartcardNumber::parse("７０１２３４").is_err(),
            "only ASCII digits"
        );
    }

    #[test]
    fn customer_ids_are_short_printable_text() {
        assert_eq!(CustomerId::parse("ab-12").unwrap().as_str(), "ab-12");
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
