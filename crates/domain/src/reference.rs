//! The client's purchase reference: 8 to 100 characters, no whitespace or
//! control characters. Unique per account (enforced by the store).

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Reference(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be 8 to 100 characters without spaces or control characters")]
pub struct ReferenceError;

impl Reference {
    pub fn parse(input: &str) -> Result<Reference, ReferenceError> {
        let length = input.chars().count();
        let clean = input.chars().all(|c| !c.is_whitespace() && !c.is_control());
        if (8..=100).contains(&length) && clean {
            Ok(Reference(input.to_owned()))
        } else {
            Err(ReferenceError)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Reference {
    type Error = ReferenceError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Reference::parse(&value)
    }
}

impl From<Reference> for String {
    fn from(reference: Reference) -> String {
        reference.0
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_and_characters() {
        assert!(Reference::parse("abcdefgh").is_ok());
        assert!(Reference::parse(&"x".repeat(100)).is_ok());
        assert!(Reference::parse("order-ñ-42").is_ok());
        assert!(Reference::parse("abcdefg").is_err());
        assert!(Reference::parse(&"x".repeat(101)).is_err());
        assert!(Reference::parse("abcd efgh").is_err());
        assert!(Reference::parse("abcd\tefgh").is_err());
        assert!(Reference::parse("abcdefgh\u{7}").is_err());
    }
}
