//! API keys: 256 random bits, shown once, stored only as their SHA-256.
//!
//! The store looks a key up by its hash through a unique index. The hash is of
//! a 256-bit random value, so timing differences of that lookup tell an
//! attacker nothing about any real key (they would have to find a preimage).

use rand::RngCore;
use sha2::{Digest, Sha256};

/// Prefix that makes leaked keys easy to recognise in code and logs scanners.
pub const KEY_PREFIX: &str = "bp_live_";

/// A freshly generated key: `secret` is shown to the user once, `hash` is stored.
pub struct NewApiKey {
    pub secret: String,
    pub hash: String,
    /// First characters of the key, safe to display ("bp_live_a1b2c3…").
    pub display_prefix: String,
}

pub fn generate_api_key() -> NewApiKey {
    let secret = format!("{KEY_PREFIX}{}", random_hex(32));
    NewApiKey {
        hash: hash_api_key(&secret),
        display_prefix: secret[..KEY_PREFIX.len() + 6].to_owned(),
        secret,
    }
}

/// The stored form of a key: lowercase hex SHA-256.
pub fn hash_api_key(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// `bytes` random bytes as lowercase hex, from the OS-seeded CSPRNG.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex::encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_random_and_hashed() {
        let a = generate_api_key();
        let b = generate_api_key();
        assert_ne!(a.secret, b.secret);
        assert_eq!(a.secret.len(), KEY_PREFIX.len() + 64);
        assert_eq!(a.hash, hash_api_key(&a.secret));
        assert_eq!(a.hash.len(), 64);
        assert!(!a.hash.contains(&a.secret[KEY_PREFIX.len()..]));
        assert!(a.secret.starts_with(&a.display_prefix));
    }

    #[test]
    fn hash_is_sha256_hex() {
        // echo -n abc | sha256sum
        assert_eq!(
            hash_api_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
