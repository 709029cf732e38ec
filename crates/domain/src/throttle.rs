//! The throttles' rules, once: what is bounded ([`Bound`]: a scope, how
//! many tries, in what window), who a secret belongs to ([`Who`]) and the
//! key each is counted under, and the lockout's answer ([`LockedOut`]).
//! The counting itself is the store's (`billpay_store::throttle`: one table
//! of counters every node shares, taken by one conditional statement), so
//! a bound holds across every node of one database.
//!
//! - Every check of one person's secret — a sign-in's password, a TOTP
//!   code, the current password or PIN a later form asks for, an emailed
//!   code — counts in one budget per person ([`Who::bound`]): at most
//!   [`SECRET_TRIES`] in [`WINDOW`]; a success clears it.
//! - The forms anyone may post (sign-up, a new code, forgot password) count
//!   per client address ([`FORMS_BY_ADDRESS`]) and per email
//!   ([`FORMS_BY_EMAIL`]), each at most [`FORMS_PER_WINDOW`] in [`WINDOW`].
//! - Keys hold no email or address in clear: [`key`] is SHA-256 of the
//!   normalized text (a long email costs a fixed-size key).

use sha2::{Digest, Sha256};
use std::time::Duration;

/// The window of the secrets' and the open forms' bounds.
pub const WINDOW: Duration = Duration::from_secs(15 * 60);
/// Checks of one person's secrets in a window.
pub const SECRET_TRIES: u32 = 5;
/// Forms without an account per client address, and per email, in a window.
pub const FORMS_PER_WINDOW: u32 = 5;

/// One bound: at most `most` tries of one key of `scope` in a window. A
/// window opens at the first try and ends `window` later; the try that
/// fills the bound starts a full window of lockout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// The counters' name in the store (never changed once deployed).
    pub scope: &'static str,
    pub most: u32,
    pub window: Duration,
}

/// The dashboard's customers' secrets (password, emailed codes, PIN checks
/// behind a password, TOTP none).
pub const ACCOUNT_SECRETS: Bound = Bound {
    scope: "account-secrets",
    most: SECRET_TRIES,
    window: WINDOW,
};
/// The console's operators' secrets (password, TOTP code).
pub const OPERATOR_SECRETS: Bound = Bound {
    scope: "operator-secrets",
    most: SECRET_TRIES,
    window: WINDOW,
};
/// The open forms, per client address (IPv4 address, IPv6 /64).
pub const FORMS_BY_ADDRESS: Bound = Bound {
    scope: "forms-by-address",
    most: FORMS_PER_WINDOW,
    window: WINDOW,
};
/// The open forms, per email address (any case).
pub const FORMS_BY_EMAIL: Bound = Bound {
    scope: "forms-by-email",
    most: FORMS_PER_WINDOW,
    window: WINDOW,
};

/// A counter's key: SHA-256 of `text` trimmed and lowercased, in hex.
pub fn key(text: &str) -> String {
    hex::encode(Sha256::digest(text.trim().to_lowercase().as_bytes()))
}

/// Who a secret belongs to: an operator (the console's sign-in, My account)
/// or a customer's account (the dashboard's sign-in), named by email as
/// typed at sign-in (any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Who<'a> {
    kind: Kind,
    email: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Operator,
    Account,
}

impl<'a> Who<'a> {
    pub fn new(kind: Kind, email: &'a str) -> Self {
        Who { kind, email }
    }

    pub fn operator(email: &'a str) -> Self {
        Who::new(Kind::Operator, email)
    }

    pub fn account(email: &'a str) -> Self {
        Who::new(Kind::Account, email)
    }

    /// The budget this person's checks count in.
    pub fn bound(&self) -> Bound {
        match self.kind {
            Kind::Operator => OPERATOR_SECRETS,
            Kind::Account => ACCOUNT_SECRETS,
        }
    }

    /// Their counter's key (their email's [`key`]).
    pub fn key(&self) -> String {
        key(self.email)
    }
}

/// Too many tries: how long until one more is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockedOut(pub Duration);

impl LockedOut {
    /// The wait in whole minutes, at least one.
    pub fn minutes(&self) -> u64 {
        self.0.as_secs().div_ceil(60).max(1)
    }
}

impl std::fmt::Display for LockedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let minutes = self.minutes();
        let unit = if minutes == 1 { "minute" } else { "minutes" };
        write!(f, "too many failed attempts: try again in {minutes} {unit}")
    }
}

impl std::error::Error for LockedOut {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lockout_says_how_many_minutes_are_left() {
        let message = LockedOut(Duration::from_secs(61)).to_string();
        assert_eq!(message, "too many failed attempts: try again in 2 minutes");
        assert_eq!(LockedOut(Duration::ZERO).minutes(), 1);
    }

    #[test]
    fn keys_are_hashes_of_the_email_in_any_case() {
        assert_eq!(
            Who::account(" A@x.com").key(),
            Who::account("a@X.COM").key()
        );
        assert_eq!(Who::account("a@x.com").key().len(), 64);
        assert!(!Who::account("a@x.com").key().contains("a@x.com"));
        assert_eq!(key(&"x".repeat(2_000_000)).len(), 64, "a fixed size");
    }

    #[test]
    fn an_operator_and_an_account_of_one_email_are_counted_apart() {
        let (operator, account) = (Who::operator("a@x.com"), Who::account("a@x.com"));
        assert_ne!(operator.bound().scope, account.bound().scope);
    }
}
