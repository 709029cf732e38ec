//! Dashboard passwords: argon2id with the crate's default (OWASP-recommended)
//! parameters, stored as PHC strings. CPU-heavy: call from a blocking thread.

use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use std::sync::LazyLock;

pub const MIN_LENGTH: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("password must be at least {MIN_LENGTH} characters")]
    TooShort,
    #[error("password could not be hashed")]
    Hashing,
}

pub fn hash(password: &str) -> Result<String, PasswordError> {
    if password.chars().count() < MIN_LENGTH {
        return Err(PasswordError::TooShort);
    }
    let salt = SaltString::generate(&mut OsRng);
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|_| PasswordError::Hashing)
}

/// Checks `password` against a stored hash. With no hash (unknown user) it
/// still does the same work, so response time does not reveal who exists.
pub fn verify(stored: Option<&str>, password: &str) -> bool {
    static DUMMY: LazyLock<String> = LazyLock::new(|| hash("not-a-real-password").expect("hashes"));
    let (stored, known) = match stored {
        Some(h) => (h, true),
        None => (DUMMY.as_str(), false),
    };
    let matches = PasswordHash::new(stored)
        .map(|parsed| {
            argon2::Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false);
    matches && known
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_verifies() {
        let h = hash("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify(Some(&h), "correct horse"));
        assert!(!verify(Some(&h), "wrong horse"));
        assert!(!verify(None, "not-a-real-password"));
        assert_eq!(hash("short"), Err(PasswordError::TooShort));
    }
}
