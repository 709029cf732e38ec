//! Identity checks through a gateway (issue 32's level 1): a customer's BVN
//! or NIN matched against what the gateway's registry holds. The number is
//! an [`IdNumber`], whose `Debug` and `Display` show only its last 4 digits,
//! so no log line, error or page can print it by accident; only the gateway
//! call itself reads it in full ([`IdNumber::expose`]).
//!
//! The rule for a pass (docs/limits.md, "Level 1 by BVN or NIN"):
//! - BVN: the name `FULL_MATCH` or `PARTIAL_MATCH` (at least two of the names
//!   given are on the BVN), the date of birth `FULL_MATCH` and the phone
//!   number `FULL_MATCH` (the number the bank holds: someone who has only
//!   read another person's BVN, name and birthday does not pass);
//! - NIN: the surname and at least one other name given equal to the NIN
//!   record's (case and spacing aside), and the date of birth equal.

use async_trait::async_trait;
use std::fmt;
use time::Date;

use crate::GatewayError;

/// An 11-digit BVN or NIN. Never printed: `Debug` and `Display` show
/// `*******1234`.
#[derive(Clone, PartialEq, Eq)]
pub struct IdNumber(String);

impl IdNumber {
    /// Spaces and dashes people type are dropped; anything but 11 digits is refused.
    pub fn parse(text: &str) -> Result<IdNumber, &'static str> {
        let digits: String = text
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .collect();
        if digits.len() != 11 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err("must be 11 digits");
        }
        Ok(IdNumber(digits))
    }

    /// The last 4 digits: all billpay keeps.
    pub fn last4(&self) -> &str {
        &self.0[7..]
    }

    /// The full number, for the gateway's request only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with the full number masked, should a gateway echo it.
    pub fn scrub(&self, text: &str) -> String {
        text.replace(&self.0, &self.to_string())
    }
}

impl fmt::Display for IdNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "*******{}", self.last4())
    }
}

impl fmt::Debug for IdNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IdNumber({self})")
    }
}

/// Which number a check is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    Bvn,
    Nin,
}

impl IdKind {
    /// `bvn`, `nin`: the method stored with the level.
    pub fn as_str(self) -> &'static str {
        match self {
            IdKind::Bvn => "bvn",
            IdKind::Nin => "nin",
        }
    }

    /// `BVN`, `NIN`, for people.
    pub fn title(self) -> &'static str {
        match self {
            IdKind::Bvn => "BVN",
            IdKind::Nin => "NIN",
        }
    }
}

/// What the customer says about themselves.
#[derive(Debug, Clone)]
pub struct Claim {
    /// As on the BVN or NIN: first, middle and last names in any order.
    pub name: String,
    pub date_of_birth: Date,
    /// For a BVN: the phone number registered with it (11 to 13 digits).
    pub phone: Option<String>,
}

/// What of a claim did not match the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Name,
    DateOfBirth,
    Phone,
}

impl Field {
    pub fn words(self) -> &'static str {
        match self {
            Field::Name => "the name",
            Field::DateOfBirth => "the date of birth",
            Field::Phone => "the phone number",
        }
    }
}

/// The verdict on a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every field the rule needs matched; `detail` says how (for the log).
    Passed { detail: String },
    /// What did not match (at least one), in the claim's order.
    Failed { mismatched: Vec<Field> },
    /// The gateway knows no such number.
    Unknown,
}

/// A gateway's identity checks.
#[async_trait]
pub trait IdentityCheck: Send + Sync {
    /// Monnify's `bvn-details-match`: the claim against the BVN's record.
    async fn verify_bvn(&self, bvn: &IdNumber, claim: &Claim) -> Result<Verdict, GatewayError>;
    /// Monnify's `nin-details`: the NIN's record, compared with the claim here.
    async fn verify_nin(&self, nin: &IdNumber, claim: &Claim) -> Result<Verdict, GatewayError>;

    /// Either, by kind.
    async fn verify(
        &self,
        kind: IdKind,
        number: &IdNumber,
        claim: &Claim,
    ) -> Result<Verdict, GatewayError> {
        match kind {
            IdKind::Bvn => self.verify_bvn(number, claim).await,
            IdKind::Nin => self.verify_nin(number, claim).await,
        }
    }
}

/// A name's words, upper case, for comparing.
pub fn name_words(name: &str) -> Vec<String> {
    name.split(|c: char| c.is_whitespace() || c == ',' || c == '.')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_uppercase())
        .collect()
}

/// The NIN rule: the record's surname among the names given, and at least
/// one of its other names too.
pub fn nin_names_match(given: &str, first: &str, middle: &str, last: &str) -> bool {
    let given = name_words(given);
    let has = |name: &str| {
        let words = name_words(name);
        !words.is_empty() && words.iter().all(|w| given.contains(w))
    };
    has(last) && (has(first) || has(middle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_shows_only_its_last_four_digits() {
        let bvn = IdNumber::parse("222 2222 2226").unwrap();
        assert_eq!(bvn.to_string(), "*******2226");
        assert_eq!(format!("{bvn:?}"), "IdNumber(*******2226)");
        assert_eq!(bvn.last4(), "2226");
        assert_eq!(bvn.expose(), "22222222226");
        assert_eq!(
            bvn.scrub("Invalid BVN 22222222226"),
            "Invalid BVN *******2226"
        );
        assert!(IdNumber::parse("2222222222").is_err());
        assert!(IdNumber::parse("2222222222x").is_err());
    }

    #[test]
    fn a_nin_needs_the_surname_and_one_other_name() {
        assert!(nin_names_match(
            "olatunde ogunboyejo",
            "OLATUNDE",
            "JOSIAH",
            "OGUNBOYEJO"
        ));
        assert!(nin_names_match(
            "Ogunboyejo, Josiah",
            "OLATUNDE",
            "JOSIAH",
            "OGUNBOYEJO"
        ));
        assert!(!nin_names_match(
            "Olatunde Josiah",
            "OLATUNDE",
            "JOSIAH",
            "OGUNBOYEJO"
        ));
        assert!(!nin_names_match(
            "Ogunboyejo",
            "OLATUNDE",
            "JOSIAH",
            "OGUNBOYEJO"
        ));
        assert!(!nin_names_match("Olatunde Ogunboyejo", "OLATUNDE", "", ""));
    }
}
