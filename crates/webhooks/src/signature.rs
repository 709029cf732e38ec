//! The webhook signature recipe.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Header carrying the Unix time (seconds) at which a signed webhook was sent.
pub const TIMESTAMP_HEADER: &str = "X-Service-Timestamp";

/// Header carrying the hex HMAC-SHA256 signature of a signed webhook.
pub const SIGNATURE_HEADER: &str = "X-Service-Signature";

/// Signs a webhook body.
///
/// Returns the lowercase hex encoding (64 characters) of
/// HMAC-SHA256 with key = `secret`'s UTF-8 bytes (used as given, not decoded)
/// over the message `timestamp` (decimal) + `"."` + `body` (the raw bytes
/// exactly as sent).
///
/// ```
/// let sig = billpay_webhooks::sign("whsec_test_secret", 1_700_000_000, b"{}");
/// assert_eq!(sig.len(), 64);
/// ```
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .expect("HMAC accepts keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values computed with Python 3:
    // hmac.new(key, b"1700000000." + body, hashlib.sha256).hexdigest()
    #[test]
    fn known_vector() {
        let body = br#"{"event":"airtime.purchase","reference_code":"ref-0001"}"#;
        assert_eq!(
            sign("whsec_test_secret", 1_700_000_000, body),
            "447837a00d95cd7d88977252a4864d50591964838213144562918e7317ac9678"
        );
    }

    #[test]
    fn known_vector_non_ascii_secret_is_utf8_bytes() {
        assert_eq!(
            sign("sécret-ñ", 1_700_000_000, b"{}"),
            "04e8d83eae470ab360502bf1aa31030ba309811cda31b637be378de46595b41f"
        );
    }

    #[test]
    fn known_vector_empty_secret_and_body() {
        assert_eq!(
            sign("", 0, b""),
            "b849d5a581847b281957065739df36df2463d1977ea8d6e1e4e6cf33fadc68c3"
        );
    }

    #[test]
    fn output_is_64_lowercase_hex() {
        let sig = sign("k", 1, b"body");
        assert_eq!(sig.len(), 64);
        assert!(sig.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    }

    #[test]
    fn every_input_matters() {
        let base = sign("k", 1_700_000_000, b"body");
        assert_ne!(base, sign("K", 1_700_000_000, b"body"));
        assert_ne!(base, sign("k", 1_700_000_001, b"body"));
        assert_ne!(base, sign("k", 1_700_000_000, b"body "));
    }
}
