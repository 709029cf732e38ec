//! Dashboard passwords: argon2id with the crate's default (OWASP-recommended)
//! parameters, stored as PHC strings. CPU-heavy: call from a blocking thread.
//! A hash or a check needs 19 MiB of working memory, given back to the
//! system as soon as it is done ([`working_memory`]).

use argon2::password_hash::{
    Output, ParamsString, PasswordHash, Salt, SaltString, rand_core::OsRng,
};
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
/// password above, a transaction PIN in `transaction_pin`): argon2's own
/// `hash_password`, in a [`working_memory`].
pub(crate) fn hash_secret(password: &str) -> Result<String, PasswordError> {
    hash_with_salt(password, &SaltString::generate(&mut OsRng))
}

fn hash_with_salt(password: &str, salt: &SaltString) -> Result<String, PasswordError> {
    let (algorithm, version) = (Algorithm::default(), Version::default());
    let argon2 = Argon2::new(algorithm, version, Params::default());
    let params = argon2.params();
    let output_len = params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN);
    let output = output_of(&argon2, password.as_bytes(), salt.as_salt(), output_len)
        .ok_or(PasswordError::Hashing)?;
    let hashed = PasswordHash {
        algorithm: algorithm.ident(),
        version: Some(version.into()),
        params: ParamsString::try_from(params).map_err(|_| PasswordError::Hashing)?,
        salt: Some(salt.as_salt()),
        hash: Some(output),
    };
    Ok(hashed.to_string())
}

/// At least this much is asked of the allocator for a working memory: glibc
/// maps a request this large on its own and unmaps it when freed, whatever
/// it has seen before (its largest dynamic mmap threshold, mallopt(3)). A
/// 19 MiB block, once freed, raises that threshold above its size, so the
/// next one comes from an arena, which keeps it resident after the check
/// (issue 18; the bench's peak RSS, docs/benchmarks.md 2026-12-01).
const ALWAYS_MAPPED: usize = 32 * 1024 * 1024;

/// `blocks` of argon2 working memory for one hash or check. Only those are
/// written (so resident); the rest of the capacity is never touched.
fn working_memory(blocks: usize) -> Vec<Block> {
    let mut memory = Vec::with_capacity(blocks.max(ALWAYS_MAPPED / Block::SIZE));
    memory.resize(blocks, Block::default());
    memory
}

/// Checks `password` against a stored hash. With no hash (unknown user) it
/// still does the same work, so response time does not reveal who exists.
pub fn verify(stored: Option<&str>, password: &str) -> bool {
    static DUMMY: LazyLock<String> = LazyLock::new(|| hash("not-a-real-password").expect("hashes"));
    let (stored, known) = match stored {
        Some(h) => (h, true),
        None => (DUMMY.as_str(), false),
    };
    let matches =
        PasswordHash::new(stored).is_ok_and(|parsed| matches(&parsed, password.as_bytes()));
    matches && known
}

/// argon2's own `verify_password` (same parameters, constant-time
/// comparison of the outputs), in a [`working_memory`].
fn matches(stored: &PasswordHash, password: &[u8]) -> bool {
    let (Some(salt), Some(expected)) = (stored.salt, stored.hash) else {
        return false;
    };
    let Some(argon2) = hasher_of(stored) else {
        return false;
    };
    output_of(&argon2, password, salt, expected.len()).is_some_and(|computed| computed == expected)
}

/// argon2's output of `len` bytes for `password` and `salt`, computed in a
/// [`working_memory`]: what a hash stores and a check compares.
fn output_of(argon2: &Argon2, password: &[u8], salt: Salt, len: usize) -> Option<Output> {
    let mut salt_bytes = [0u8; 64];
    let salt = salt.decode_b64(&mut salt_bytes).ok()?;
    let mut memory = working_memory(argon2.params().block_count());
    Output::init_with(len, |out| {
        argon2
            .hash_password_into_with_memory(password, salt, out, &mut memory)
            .map_err(Into::into)
    })
    .ok()
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
        assert!(!verify(Some("not a PHC string"), "x"));
        assert_eq!(hash("short"), Err(PasswordError::TooShort));
    }

    #[test]
    fn a_hash_is_argon2s_own_for_the_same_salt() {
        use argon2::password_hash::PasswordHasher;
        let salt = SaltString::generate(&mut OsRng);
        let ours = hash_with_salt("correct horse", &salt).unwrap();
        let argon2s = Argon2::default()
            .hash_password(b"correct horse", &salt)
            .unwrap()
            .to_string();
        assert_eq!(ours, argon2s);
    }

    #[test]
    fn a_working_memory_is_the_hashs_blocks_in_a_mapped_allocation() {
        let blocks = Argon2::default().params().block_count();
        let memory = working_memory(blocks);
        assert_eq!(memory.len() * Block::SIZE, 19 * 1024 * 1024);
        assert!(memory.capacity() * Block::SIZE >= ALWAYS_MAPPED);
    }
}
