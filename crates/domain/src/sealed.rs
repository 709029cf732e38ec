//! Secrets the service must use later (webhook signing secrets) are stored
//! sealed with ChaCha20-Poly1305 under the operator's master key, never in clear.

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;

#[derive(Clone)]
pub struct SecretBox {
    cipher: ChaCha20Poly1305,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    #[error("master key must be 64 hex characters (32 bytes)")]
    BadMasterKey,
    #[error("sealed secret cannot be opened with this master key")]
    CannotOpen,
}

impl SecretBox {
    /// From a 64-character hex master key.
    pub fn from_hex(master_key_hex: &str) -> Result<SecretBox, SealError> {
        let bytes = hex::decode(master_key_hex.trim()).map_err(|_| SealError::BadMasterKey)?;
        if bytes.len() != 32 {
            return Err(SealError::BadMasterKey);
        }
        Ok(SecretBox {
            cipher: ChaCha20Poly1305::new(Key::from_slice(&bytes)),
        })
    }

    /// A new random master key, hex encoded.
    pub fn generate_master_key() -> String {
        crate::keys::random_hex(32)
    }

    /// `hex(nonce || ciphertext)`.
    pub fn seal(&self, secret: &str) -> String {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let ciphertext = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), secret.as_bytes())
            .expect("encryption with a valid key cannot fail");
        let mut out = nonce.to_vec();
        out.extend(ciphertext);
        // Into one buffer: `hex::encode` collects a `String` a char at a
        // time, ~20 instructions a byte (20 k a purchase's sealed result).
        let mut text = vec![0; out.len() * 2];
        hex::encode_to_slice(&out, &mut text).expect("a buffer twice as long");
        String::from_utf8(text).expect("hex digits are ASCII")
    }

    /// Opens a secret that may not be set: `Ok(None)` when there is none.
    pub fn open_optional(&self, sealed: Option<&str>) -> Result<Option<String>, SealError> {
        sealed.map(|s| self.open(s)).transpose()
    }

    pub fn open(&self, sealed: &str) -> Result<String, SealError> {
        let bytes = hex::decode(sealed).map_err(|_| SealError::CannotOpen)?;
        if bytes.len() < 12 {
            return Err(SealError::CannotOpen);
        }
        let (nonce, ciphertext) = bytes.split_at(12);
        let plain = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), ciphertext)
            .map_err(|_| SealError::CannotOpen)?;
        String::from_utf8(plain).map_err(|_| SealError::CannotOpen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_and_opens() {
        let key = SecretBox::generate_master_key();
        let sb = SecretBox::from_hex(&key).unwrap();
        let sealed = sb.seal("whsec_abc");
        assert!(!sealed.contains("whsec"));
        assert_eq!(sb.open(&sealed).unwrap(), "whsec_abc");
        let other = SecretBox::from_hex(&SecretBox::generate_master_key()).unwrap();
        assert_eq!(other.open(&sealed), Err(SealError::CannotOpen));
        assert_eq!(
            SecretBox::from_hex("abcd").err(),
            Some(SealError::BadMasterKey)
        );
    }
}
