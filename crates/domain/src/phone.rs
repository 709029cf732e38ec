//! Nigerian phone numbers: accepted as `0XXXXXXXXXX`, `234XXXXXXXXXX` or
//! `+234XXXXXXXXXX` (spaces or dashes between groups tolerated), always kept
//! in the local form `0XXXXXXXXXX`: its canonical form (docs/limits.md). Only
//! what the API document's pattern takes is read: full-width digits and
//! zero-width characters are refused, never read as another spelling.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be a Nigerian phone number: 0XXXXXXXXXX, 234XXXXXXXXXX or +234XXXXXXXXXX")]
pub struct PhoneError;

impl Phone {
    pub fn parse(input: &str) -> Result<Phone, PhoneError> {
        let trimmed = input.trim();
        let (plus, rest) = match trimmed.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        let mut digits = String::with_capacity(13);
        let mut previous_was_separator = true;
        for c in rest.chars() {
            match c {
                '0'..='9' => {
                    digits.push(c);
                    previous_was_separator = false;
                }
                ' ' | '-' if !previous_was_separator => previous_was_separator = true,
                _ => return Err(PhoneError),
            }
        }
        if previous_was_separator {
            return Err(PhoneError); // empty, or trailing separator
        }
        let national = match (plus, digits.len()) {
            (false, 11) if digits.starts_with('0') => &digits[1..],
            (_, 13) if digits.starts_with("234") => &digits[3..],
            _ => return Err(PhoneError),
        };
        // Nigerian mobile numbers start 7, 8 or 9 after the trunk prefix.
        if !matches!(national.as_bytes()[0], b'7' | b'8' | b'9') {
            return Err(PhoneError);
        }
        Ok(Phone(format!("0{national}")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Phone {
    type Error = PhoneError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Phone::parse(&value)
    }
}

impl From<Phone> for String {
    fn from(phone: Phone) -> String {
        phone.0
    }
}

impl fmt::Display for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_every_accepted_form() {
        for input in [
            "08031234567",
            "2348031234567",
            "+2348031234567",
            "0803 123 4567",
            "0803-123-4567",
            "+234 803 123 4567",
        ] {
            assert_eq!(
                Phone::parse(input).unwrap().as_str(),
                "08031234567",
                "{input}"
            );
        }
    }

    #[test]
    fn refuses_everything_else() {
        for input in [
            "",
            "8031234567",
            "0803123456",
            "080312345678",
            "+08031234567",
            "2358031234567",
            "0803--1234567",
            " 0803 1234567-",
            "0803123456a",
            "01031234567",
        ] {
            assert!(Phone::parse(input).is_err(), "{input}");
        }
    }
}
