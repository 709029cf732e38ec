//! The client's purchase reference: 8 to 100 characters, no whitespace,
//! control or invisible format characters. Unique per account (enforced by the store).

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Reference(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be 8 to 100 characters without spaces, control or format characters")]
pub struct ReferenceError;

impl Reference {
    pub fn parse(input: &str) -> Result<Reference, ReferenceError> {
        let length = input.chars().count();
        let clean = input
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !is_format(c));
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

/// Unicode general category Cf (format characters, Unicode 16), as inclusive
/// ranges: invisible marks such as zero-width spaces and bidi overrides that
/// make two references look alike or display reversed.
pub const FORMAT_CHARACTERS: [(char, char); 21] = [
    ('\u{AD}', '\u{AD}'),
    ('\u{600}', '\u{605}'),
    ('\u{61C}', '\u{61C}'),
    ('\u{6DD}', '\u{6DD}'),
    ('\u{70F}', '\u{70F}'),
    ('\u{890}', '\u{891}'),
    ('\u{8E2}', '\u{8E2}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFF9}', '\u{FFFB}'),
    ('\u{110BD}', '\u{110BD}'),
    ('\u{110CD}', '\u{110CD}'),
    ('\u{13430}', '\u{1343F}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0001}', '\u{E0001}'),
    ('\u{E0020}', '\u{E007F}'),
];

pub(crate) fn is_format(c: char) -> bool {
    FORMAT_CHARACTERS
        .iter()
        .any(|&(first, last)| (first..=last).contains(&c))
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
        for format in [
            '\u{200B}',
            '\u{202E}',
            '\u{2066}',
            '\u{FEFF}',
            '\u{AD}',
            '\u{E0041}',
        ] {
            assert!(
                Reference::parse(&format!("abcd{format}efgh")).is_err(),
                "{format:?}"
            );
        }
    }
}
