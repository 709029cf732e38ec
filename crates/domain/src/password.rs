//! Dashboard passwords: argon2id with the crate's default (OWASP-recommended)
//! parameters, stored as PHC strings. CPU-heavy: call from a blocking thread.
//! A check needs 19 MiB of working memory: [`verify_with`] reuses a [`Memory`]
//! instead of allocating it each time, so a bounded number of checks holds a
//! bounded amount of memory whatever the allocator keeps.

use argon2::password_hash::{Output, PasswordHash, PasswordHasher, SaltString, rand_core::OsRng};
use argon2::{Algorithm, Argon2, Block, Params, Version};
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
    hash_secret(password)
}

/// argon2id of any secret whose own rules were checked by its caller (a
/// password above, a transaction PIN in `transaction_pin`).
pub(crate) fn hash_secret(password: &str) -> Result<String, PasswordError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|_| PasswordError::Hashing)
}

/// Working memory of password checks, kept from one check to the next.
#[derive(Default)]
pub struct Memory(Vec<Block>);

/// Checks `password` against a stored hash. With no hash (unknown user) it
/// still does the same work, so response time does not reveal who exists.
pub fn verify(stored: Option<&str>, password: &str) -> bool {
    verify_with(&mut Memory::default(), stored, password)
}

/// [`verify`] in `memory` (grown to the hash's size once, then reused).
pub fn verify_with(memory: &mut Memory, stored: Option<&str>, password: &str) -> bool {
    static DUMMY: LazyLock<String> = LazyLock::new(|| hash("not-a-real-password").expect("hashes"));
    let (stored, known) = match stored {
        Some(h) => (h, true),
        None => (DUMMY.as_str(), false),
    };
    let matches = PasswordHash::new(stored)
        .is_ok_and(|parsed| matches_in(memory, &parsed, password.as_bytes()));
    matches && known
}

/// argon2's own `verify_password` (same parameters, constant-time
/// comparison of the outputs), with the blocks taken from `memory`.
fn matches_in(memory: &mut Memory, stored: &PasswordHash, password: &[u8]) -> bool {
    let (Some(salt), Some(expected)) = (stored.salt, stored.hash) else {
        return false;
    };
    let Some(argon2) = hasher_of(stored) else {
        return false;
    };
    let mut salt_bytes = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    memory
        .0
        .resize(argon2.params().block_count(), Block::default());
    let computed = Output::init_with(expected.len(), |out| {
        argon2
            .hash_password_into_with_memory(password, salt, out, &mut memory.0[..])
            .map_err(Into::into)
    });
    computed.is_ok_and(|computed| computed == expected)
}

/// The argon2 instance (algorithm, version, parameters) a stored hash was made with.
fn hasher_of(stored: &PasswordHash) -> Option<Argon2<'static>> {
    let algorithm = Algorithm::try_from(stored.algorithm).ok()?;
    let version = match stored.version {
        Some(v) => Version::try_from(v).ok()?,
        None => Version::default(),
    };
    let params = Params::try_from(stored).ok()?;
    Some(Argon2::new(algorithm, version, params))
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

    #[test]
    fn one_memory_serves_every_check() {
        let h = hash("correct horse").unwrap();
        let mut memory = Memory::default();
        assert!(verify_with(&mut memory, Some(&h), "correct horse"));
        let size = memory.0.len();
        assert_eq!(size * Block::SIZE, 19 * 1024 * 1024);
        assert!(!verify_with(&mut memory, Some(&h), "wrong horse"));
        assert!(!verify_with(&mut memory, None, "not-a-real-password"));
        assert!(!verify_with(&mut memory, Some("not a PHC string"), "x"));
        assert_eq!(memory.0.len(), size, "reused, not grown");
    }
}
