//! The shop's transaction PIN: exactly 4 digits, asked for on every purchase
//! made in the browser, stored as argon2id like a password (and checked with
//! the same bounded check, `billpay_webkit::PasswordCheck`). How many wrong
//! tries lock purchases, and for how long, is here so the store and the
//! pages say the same thing.

use crate::password::{PasswordError, hash_secret};
use std::time::Duration;

/// Wrong PINs in a row that lock purchases.
pub const MAX_FAILURES: u32 = 5;
/// How long purchases stay locked after [`MAX_FAILURES`].
pub const LOCK: Duration = Duration::from_secs(30 * 60);

/// Four digits, checked; never printed (no `Debug`, no `Display`).
pub struct TransactionPin(String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("A transaction PIN is exactly 4 digits.")]
pub struct PinFormat;

impl TransactionPin {
    pub fn parse(given: &str) -> Result<TransactionPin, PinFormat> {
        let given = given.trim();
        if given.len() == 4 && given.bytes().all(|b| b.is_ascii_digit()) {
            Ok(TransactionPin(given.to_owned()))
        } else {
            Err(PinFormat)
        }
    }

    /// The PIN itself, for the hash check only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Its argon2id PHC string (CPU-heavy: call from a blocking thread).
    pub fn hash(&self) -> Result<String, PasswordError> {
        hash_secret(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_digits_only() {
        assert!(TransactionPin::parse("0123").is_ok());
        assert!(TransactionPin::parse(" 4321 ").is_ok());
        for bad in ["", "123", "12345", "12a4", "١٢٣٤"] {
            assert_eq!(TransactionPin::parse(bad).err(), Some(PinFormat), "{bad}");
        }
    }

    #[test]
    fn hashed_with_argon2id_and_checked_like_a_password() {
        let pin = TransactionPin::parse("2468").unwrap();
        let hash = pin.hash().unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(crate::password::verify(Some(&hash), "2468"));
        assert!(!crate::password::verify(Some(&hash), "2469"));
    }
}
