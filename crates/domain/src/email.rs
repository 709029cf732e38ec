//! Email addresses: one canonical form for every address that enters.
//!
//! [`EmailAddress::parse`] is the only way an address enters (sign-up,
//! sign-in, forgot password, a new code, an email change, the console's and
//! the CLI's commands). It keeps a bare `local@domain` and nothing else:
//!
//! - surrounding whitespace is trimmed;
//! - the text is NFKC-normalised, so a full-width `ａ` is `a` and a
//!   compatibility `＠` is `@`;
//! - a display name, angle brackets, a quoted local part, a comment, inner
//!   whitespace and any invisible, control or format character (a zero-width
//!   space, a BOM, a bidi mark) are refused with a sentence a person reads —
//!   never stripped, so what is stored is what was typed;
//! - the domain has at least two dot-separated labels;
//! - the whole address is lowercased with Unicode's full lowercasing, so
//!   `É@example.com` and `é@example.com` are one address on every database
//!   (docs/decisions.md: addresses are compared case-insensitively).
//!
//! The result is what is stored, and what uniqueness compares: two accounts
//! cannot hold one canonical address. [`EmailAddress::mailbox_of`] reads an
//! address stored before this rule as the mailbox mail to it reaches, for
//! the report of older accounts that share one.

use serde::{Deserialize, Serialize};
use std::fmt;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// RFC 5321's limit on a forward path, and so on an address.
pub const MAX_CHARS: usize = 254;
/// RFC 5321's limit on a local part.
const MAX_LOCAL_CHARS: usize = 64;

/// A bare, canonical email address (see the module's rules).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmailAddress(String);

/// Why typed text is not an email address, as a sentence a person reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EmailError {
    #[error("Enter your email address, like ada@example.com.")]
    Empty,
    #[error("Enter the address alone, like ada@example.com, without a name or angle brackets.")]
    NameOrBrackets,
    #[error("Enter the address without quotation marks or brackets, like ada@example.com.")]
    Quoted,
    #[error("An email address has no spaces: enter it like ada@example.com.")]
    Whitespace,
    #[error(
        "The address has an invisible or control character in it: type it again, like ada@example.com."
    )]
    Invisible,
    #[error("An email address is at most 254 characters, and the part before the @ at most 64.")]
    TooLong,
    #[error("Enter your email address, like ada@example.com.")]
    Shape,
}

impl EmailAddress {
    /// The canonical address of `typed`, or why it is not one.
    pub fn parse(typed: &str) -> Result<EmailAddress, EmailError> {
        let trimmed = typed.trim();
        if trimmed.is_empty() {
            return Err(EmailError::Empty);
        }
        // Normalised first: a compatibility form of `@`, `<` or a quote is
        // judged as what it becomes.
        let normal: String = trimmed.nfkc().collect();
        if normal.contains(['<', '>']) {
            return Err(EmailError::NameOrBrackets);
        }
        if normal.contains(['"', '(', ')', '[', ']', '\\']) {
            return Err(EmailError::Quoted);
        }
        if let Some(c) = normal.chars().find(|c| invisible(*c)) {
            return Err(if c.is_whitespace() {
                EmailError::Whitespace
            } else {
                EmailError::Invisible
            });
        }
        let canonical: String = normal.to_lowercase().nfkc().collect();
        let Some((local, domain)) = canonical.split_once('@') else {
            return Err(EmailError::Shape);
        };
        if canonical.chars().count() > MAX_CHARS || local.chars().count() > MAX_LOCAL_CHARS {
            return Err(EmailError::TooLong);
        }
        if !dot_atom(local) || !dotted_domain(domain) {
            return Err(EmailError::Shape);
        }
        Ok(EmailAddress(canonical))
    }

    /// The mailbox mail to `stored` reaches, as its canonical address: the
    /// address inside angle brackets when there is a display name, a quoted
    /// local part unquoted, invisible characters dropped. Only for reading
    /// addresses stored before [`EmailAddress::parse`] was the rule (the
    /// report of accounts that share one); never for what a person types.
    pub fn mailbox_of(stored: &str) -> Option<EmailAddress> {
        if let Ok(address) = EmailAddress::parse(stored) {
            return Some(address);
        }
        let normal: String = stored.nfkc().collect();
        let inner = match (normal.rfind('<'), normal.rfind('>')) {
            (Some(open), Some(close)) if open < close => &normal[open + 1..close],
            _ => normal.as_str(),
        };
        let bare: String = inner
            .chars()
            .filter(|c| !invisible(*c) && *c != '"')
            .collect();
        EmailAddress::parse(&bare).ok()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// `typed` as [`EmailAddress::parse`] reads it, or trimmed when it is not
/// an address: for a look-up by what someone typed (a sign-in, an operator
/// named on the command line), which then finds no one without saying why.
pub fn canonical_or_typed(typed: &str) -> String {
    EmailAddress::parse(typed)
        .map(EmailAddress::into_string)
        .unwrap_or_else(|_| typed.trim().to_owned())
}

/// Whitespace, or a character that draws nothing or steers the text:
/// controls, format characters (zero-width space, joiners, BOM, bidi
/// marks), separators, private use, surrogates and unassigned code points.
fn invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            get_general_category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::SpaceSeparator
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::PrivateUse
                | GeneralCategory::Surrogate
                | GeneralCategory::Unassigned
        )
}

/// A local part as a dot-atom: dot-separated non-empty runs of characters
/// that need no quoting (RFC 5322's atext, and any letter beyond ASCII).
fn dot_atom(local: &str) -> bool {
    const SPECIALS: &str = "!#$%&'*+-/=?^_`{|}~";
    let atext = |c: char| c.is_alphanumeric() || SPECIALS.contains(c) || !c.is_ascii();
    local
        .split('.')
        .all(|run| !run.is_empty() && run.chars().all(atext))
}

/// A domain of at least two labels, each letters, digits and inner hyphens.
fn dotted_domain(domain: &str) -> bool {
    let label = |l: &str| {
        !l.is_empty()
            && l.chars().count() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_alphanumeric() || c == '-')
    };
    let labels: Vec<&str> = domain.split('.').collect();
    labels.len() >= 2 && labels.iter().all(|l| label(l))
}

impl fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for EmailAddress {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for EmailAddress {
    type Error = EmailError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        EmailAddress::parse(&value)
    }
}

impl From<EmailAddress> for String {
    fn from(address: EmailAddress) -> String {
        address.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(typed: &str) -> String {
        EmailAddress::parse(typed)
            .unwrap_or_else(|e| panic!("{typed:?}: {e}"))
            .into_string()
    }

    #[test]
    fn trims_and_lowercases_the_whole_address() {
        assert_eq!(canonical("  Ada@Example.COM \n"), "ada@example.com");
        assert_eq!(canonical("ADA@EXAMPLE.COM"), "ada@example.com");
        assert_eq!(
            canonical("ada.lovelace+bills@mail.example.ng"),
            "ada.lovelace+bills@mail.example.ng"
        );
    }

    #[test]
    fn unicode_case_is_folded_the_same_whatever_the_database() {
        assert_eq!(canonical("É@example.com"), "é@example.com");
        assert_eq!(canonical("é@example.com"), "é@example.com");
        assert_eq!(
            canonical("ÉMILE@EXAMPLE.COM"),
            canonical("émile@example.com")
        );
        // A decomposed é (e + combining acute) is the composed one.
        assert_eq!(canonical("e\u{301}@example.com"), "é@example.com");
    }

    #[test]
    fn full_width_letters_are_their_plain_letters() {
        assert_eq!(canonical("ａｄａ@example.com"), "ada@example.com");
        assert_eq!(
            canonical("ＡＤＡ＠ＥＸＡＭＰＬＥ.ＣＯＭ"),
            "ada@example.com"
        );
    }

    #[test]
    fn a_display_name_or_angle_brackets_are_refused() {
        for typed in [
            "x<ada@example.com>",
            "Ada Lovelace <ada@example.com>",
            "<ada@example.com>",
            "ada@example.com>",
            "x＜ada@example.com＞",
        ] {
            let refused = EmailAddress::parse(typed).unwrap_err();
            assert_eq!(refused, EmailError::NameOrBrackets, "{typed}");
        }
        assert_eq!(
            EmailAddress::parse("x<ada@example.com>")
                .unwrap_err()
                .to_string(),
            "Enter the address alone, like ada@example.com, without a name or angle brackets."
        );
    }

    #[test]
    fn quoted_local_parts_and_comments_are_refused() {
        for typed in [
            "\"ada\"@example.com",
            "\"a d a\"@example.com",
            "ada(comment)@example.com",
            "ada@[127.0.0.1]",
            "a\\da@example.com",
            "＂ada＂@example.com",
        ] {
            assert!(EmailAddress::parse(typed).is_err(), "{typed}");
        }
        assert_eq!(
            EmailAddress::parse("\"ada\"@example.com").unwrap_err(),
            EmailError::Quoted
        );
    }

    #[test]
    fn invisible_and_control_characters_are_refused() {
        for typed in [
            "ada@example.com\u{200B}x",
            "ad\u{200B}a@example.com",
            "ada\u{200D}@example.com",
            "\u{FEFF}ada@example.com",
            "ada@exa\u{202E}mple.com",
            "ada@exam\u{0007}ple.com",
            "ada\u{00AD}@example.com",
        ] {
            assert_eq!(
                EmailAddress::parse(typed).unwrap_err(),
                EmailError::Invisible,
                "{typed:?}"
            );
        }
        // At the end, a zero-width space is not whitespace `trim` removes.
        assert_eq!(
            EmailAddress::parse("ada@example.com\u{200B}").unwrap_err(),
            EmailError::Invisible
        );
    }

    #[test]
    fn whitespace_inside_is_refused() {
        for typed in [
            "ada @example.com",
            "ada@exa mple.com",
            "ada\u{00A0}@example.com",
        ] {
            assert_eq!(
                EmailAddress::parse(typed).unwrap_err(),
                EmailError::Whitespace,
                "{typed:?}"
            );
        }
    }

    #[test]
    fn only_a_bare_local_at_dotted_domain_is_an_address() {
        for typed in [
            "",
            "   ",
            "ada",
            "ada@",
            "@example.com",
            "ada@example",
            "ada@@example.com",
            "ada@b@example.com",
            "ada@.example.com",
            "ada@example.com.",
            "ada@example..com",
            "ada@-example.com",
            ".ada@example.com",
            "ada.@example.com",
            "a..da@example.com",
            "ada,bob@example.com",
            "ada;@example.com",
            "ada:x@example.com",
        ] {
            assert!(EmailAddress::parse(typed).is_err(), "{typed:?}");
        }
    }

    #[test]
    fn lengths_are_bounded() {
        let local = "a".repeat(65);
        assert_eq!(
            EmailAddress::parse(&format!("{local}@example.com")).unwrap_err(),
            EmailError::TooLong
        );
        let domain = format!("{}.com", vec!["b".repeat(60); 5].join("."));
        assert_eq!(
            EmailAddress::parse(&format!("ada@{domain}")).unwrap_err(),
            EmailError::TooLong
        );
    }

    #[test]
    fn every_refusal_is_a_sentence_not_debug_output() {
        for typed in [
            "",
            "x<a@b.c>",
            "\"a\"@b.c",
            "a b@c.d",
            "a\u{200B}@b.c",
            "ab",
        ] {
            let message = EmailAddress::parse(typed).unwrap_err().to_string();
            assert!(message.ends_with('.'), "{message}");
            assert!(!message.contains("Error"), "{message}");
        }
    }

    #[test]
    fn the_mailbox_of_an_older_stored_address() {
        let mailbox = |s: &str| EmailAddress::mailbox_of(s).map(EmailAddress::into_string);
        assert_eq!(
            mailbox("x<ada@example.com>").as_deref(),
            Some("ada@example.com")
        );
        assert_eq!(
            mailbox("\"ada\"@example.com").as_deref(),
            Some("ada@example.com")
        );
        assert_eq!(
            mailbox("ada@example.com\u{200B}").as_deref(),
            Some("ada@example.com")
        );
        assert_eq!(
            mailbox("ADA@EXAMPLE.COM").as_deref(),
            Some("ada@example.com")
        );
        assert_eq!(mailbox("not an address"), None);
    }

    #[test]
    fn serde_reads_through_parse() {
        let read: EmailAddress = serde_json::from_str("\" Ada@Example.com \"").unwrap();
        assert_eq!(read.as_str(), "ada@example.com");
        assert!(serde_json::from_str::<EmailAddress>("\"x<a@b.c>\"").is_err());
    }
}
