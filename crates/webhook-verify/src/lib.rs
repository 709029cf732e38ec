//! Verify the signature on webhooks sent by billpay.
//!
//! When signing is enabled on an API key, every webhook carries:
//!
//! * `X-Service-Timestamp`: Unix time in seconds when the webhook was sent;
//! * `X-Service-Signature`: lowercase hex (64 characters) HMAC-SHA256, keyed
//!   with the webhook secret's UTF-8 bytes, over the timestamp, then `.`,
//!   then the raw request body bytes exactly as received.
//!
//! [`verify`] recomputes the signature, compares it in constant time and
//! rejects timestamps more than `tolerance_secs` away from now (use
//! [`DEFAULT_TOLERANCE_SECS`], 300 s). [`verify_now`] does the same with the
//! system clock and the default tolerance.
//!
//! Pass the body bytes as received, before any JSON parsing: re-serialising
//! a parsed body changes the bytes and the signature no longer matches.
//!
//! # Example
//!
//! ```
//! use billpay_webhook_verify::{verify, VerifyError, DEFAULT_TOLERANCE_SECS};
//!
//! // What your HTTP framework hands you:
//! let secret = "whsec_test_secret";
//! let body: &[u8] = br#"{"event":"airtime.purchase","reference_code":"ref-0001"}"#;
//! let timestamp_header = "1700000000";
//! let signature_header = "447837a00d95cd7d88977252a4864d50591964838213144562918e7317ac9678";
//!
//! // In a real receiver use `verify_now(secret, ts, sig, body)`; a fixed
//! // clock keeps this example deterministic.
//! let now = 1_700_000_030;
//! assert_eq!(
//!     verify(secret, timestamp_header, signature_header, body, now, DEFAULT_TOLERANCE_SECS),
//!     Ok(())
//! );
//!
//! // A tampered body is rejected.
//! let tampered: &[u8] = br#"{"event":"airtime.purchase","reference_code":"ref-0002"}"#;
//! assert_eq!(
//!     verify(secret, timestamp_header, signature_header, tampered, now, DEFAULT_TOLERANCE_SECS),
//!     Err(VerifyError::SignatureMismatch)
//! );
//!
//! // So is a replay an hour later.
//! assert_eq!(
//!     verify(secret, timestamp_header, signature_header, body, now + 3600, DEFAULT_TOLERANCE_SECS),
//!     Err(VerifyError::TimestampOutOfTolerance)
//! );
//! ```
//!
//! On any error, answer `401` (or `400`) and do not process the event. A
//! missing header (signing disabled, or a forged request) is the caller's to
//! handle: this crate only sees header values.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// Default allowed distance between the webhook's timestamp and now: 300 s.
pub const DEFAULT_TOLERANCE_SECS: i64 = 300;

/// Why a webhook failed verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyError {
    /// `X-Service-Timestamp` is not a non-negative decimal integer.
    MalformedTimestamp,
    /// `X-Service-Signature` is not 64 hex characters.
    MalformedSignature,
    /// The timestamp is more than the tolerance away from now (a replay, or
    /// a badly wrong clock).
    TimestampOutOfTolerance,
    /// The signature does not match the secret, timestamp and body.
    SignatureMismatch,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VerifyError::MalformedTimestamp => "malformed webhook timestamp header",
            VerifyError::MalformedSignature => "malformed webhook signature header",
            VerifyError::TimestampOutOfTolerance => "webhook timestamp is outside the tolerance",
            VerifyError::SignatureMismatch => "webhook signature does not match",
        })
    }
}

impl std::error::Error for VerifyError {}

/// Verifies a webhook against an explicit clock.
///
/// * `secret`: the webhook secret, as shown when it was created;
/// * `timestamp_header`, `signature_header`: the `X-Service-Timestamp` and
///   `X-Service-Signature` header values (surrounding whitespace is ignored;
///   hex digits may be in either case);
/// * `body`: the raw request body bytes;
/// * `now_unix`: the current Unix time in seconds;
/// * `tolerance_secs`: largest accepted `|now - timestamp|`, in seconds
///   (negative values count as 0).
///
/// The signature comparison is constant time.
pub fn verify(
    secret: &str,
    timestamp_header: &str,
    signature_header: &str,
    body: &[u8],
    now_unix: i64,
    tolerance_secs: i64,
) -> Result<(), VerifyError> {
    let timestamp_str = timestamp_header.trim();
    let timestamp = parse_timestamp(timestamp_str)?;
    let signature = parse_signature(signature_header.trim())?;

    let tolerance = u64::try_from(tolerance_secs).unwrap_or(0);
    if now_unix.abs_diff(timestamp) > tolerance {
        return Err(VerifyError::TimestampOutOfTolerance);
    }

    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .expect("HMAC accepts keys of any length");
    mac.update(timestamp_str.as_bytes());
    mac.update(b".");
    mac.update(body);
    let expected = mac.finalize().into_bytes();

    if bool::from(expected.as_slice().ct_eq(&signature)) {
        Ok(())
    } else {
        Err(VerifyError::SignatureMismatch)
    }
}

/// [`verify`] with the system clock and [`DEFAULT_TOLERANCE_SECS`].
pub fn verify_now(
    secret: &str,
    timestamp_header: &str,
    signature_header: &str,
    body: &[u8],
) -> Result<(), VerifyError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    verify(
        secret,
        timestamp_header,
        signature_header,
        body,
        now,
        DEFAULT_TOLERANCE_SECS,
    )
}

/// ASCII digits only (no sign, no spaces), fitting an `i64`.
fn parse_timestamp(value: &str) -> Result<i64, VerifyError> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(VerifyError::MalformedTimestamp);
    }
    value.parse().map_err(|_| VerifyError::MalformedTimestamp)
}

/// Exactly 64 hex digits: 32 bytes.
fn parse_signature(value: &str) -> Result<[u8; 32], VerifyError> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(value, &mut bytes).map_err(|_| VerifyError::MalformedSignature)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_test_secret";
    const BODY: &[u8] = br#"{"event":"airtime.purchase","reference_code":"ref-0001"}"#;
    const TS: &str = "1700000000";
    const NOW: i64 = 1_700_000_000;
    // Computed with Python 3's hmac module.
    const SIG: &str = "447837a00d95cd7d88977252a4864d50591964838213144562918e7317ac9678";

    fn check(secret: &str, ts: &str, sig: &str, body: &[u8], now: i64) -> Result<(), VerifyError> {
        verify(secret, ts, sig, body, now, DEFAULT_TOLERANCE_SECS)
    }

    #[test]
    fn good_signature_passes() {
        assert_eq!(check(SECRET, TS, SIG, BODY, NOW), Ok(()));
    }

    #[test]
    fn uppercase_hex_and_surrounding_whitespace_pass() {
        let upper = SIG.to_ascii_uppercase();
        assert_eq!(check(SECRET, TS, &upper, BODY, NOW), Ok(()));
        assert_eq!(
            check(SECRET, " 1700000000 ", &format!(" {SIG}\t"), BODY, NOW),
            Ok(())
        );
    }

    #[test]
    fn every_flipped_byte_fails() {
        let mut raw = hex::decode(SIG).unwrap();
        for i in 0..raw.len() {
            raw[i] ^= 0x01;
            let flipped = hex::encode(&raw);
            assert_eq!(
                check(SECRET, TS, &flipped, BODY, NOW),
                Err(VerifyError::SignatureMismatch),
                "byte {i}"
            );
            raw[i] ^= 0x01;
        }
    }

    #[test]
    fn changed_body_fails() {
        let mut body = BODY.to_vec();
        body[10] ^= 0x20;
        assert_eq!(
            check(SECRET, TS, SIG, &body, NOW),
            Err(VerifyError::SignatureMismatch)
        );
        let mut longer = BODY.to_vec();
        longer.push(b'\n');
        assert_eq!(
            check(SECRET, TS, SIG, &longer, NOW),
            Err(VerifyError::SignatureMismatch)
        );
        assert_eq!(
            check(SECRET, TS, SIG, b"", NOW),
            Err(VerifyError::SignatureMismatch)
        );
    }

    #[test]
    fn wrong_secret_fails() {
        assert_eq!(
            check("whsec_test_secreT", TS, SIG, BODY, NOW),
            Err(VerifyError::SignatureMismatch)
        );
        assert_eq!(
            check("", TS, SIG, BODY, NOW),
            Err(VerifyError::SignatureMismatch)
        );
    }

    #[test]
    fn timestamp_is_part_of_the_signature() {
        // Same signature, different (in-tolerance) timestamp.
        assert_eq!(
            check(SECRET, "1700000001", SIG, BODY, NOW),
            Err(VerifyError::SignatureMismatch)
        );
    }

    #[test]
    fn old_timestamps() {
        assert_eq!(
            check(SECRET, TS, SIG, BODY, NOW + 301),
            Err(VerifyError::TimestampOutOfTolerance)
        );
        assert_eq!(check(SECRET, TS, SIG, BODY, NOW + 300), Ok(()));
        assert_eq!(check(SECRET, TS, SIG, BODY, NOW + 299), Ok(()));
    }

    #[test]
    fn future_timestamps() {
        // The sender's clock ahead of ours.
        assert_eq!(check(SECRET, TS, SIG, BODY, NOW - 299), Ok(()));
        assert_eq!(check(SECRET, TS, SIG, BODY, NOW - 300), Ok(()));
        assert_eq!(
            check(SECRET, TS, SIG, BODY, NOW - 301),
            Err(VerifyError::TimestampOutOfTolerance)
        );
    }

    #[test]
    fn custom_and_negative_tolerance() {
        assert_eq!(verify(SECRET, TS, SIG, BODY, NOW + 10, 10), Ok(()));
        assert_eq!(
            verify(SECRET, TS, SIG, BODY, NOW + 11, 10),
            Err(VerifyError::TimestampOutOfTolerance)
        );
        assert_eq!(verify(SECRET, TS, SIG, BODY, NOW, -5), Ok(()));
        assert_eq!(
            verify(SECRET, TS, SIG, BODY, NOW + 1, -5),
            Err(VerifyError::TimestampOutOfTolerance)
        );
    }

    #[test]
    fn extreme_clock_values_do_not_overflow() {
        assert_eq!(
            check(SECRET, TS, SIG, BODY, i64::MIN),
            Err(VerifyError::TimestampOutOfTolerance)
        );
        assert_eq!(
            check(SECRET, "9223372036854775807", SIG, BODY, i64::MIN),
            Err(VerifyError::TimestampOutOfTolerance)
        );
    }

    #[test]
    fn malformed_timestamps() {
        for ts in [
            "",
            "   ",
            "abc",
            "-1700000000",
            "+1700000000",
            "1700000000.5",
            "1.7e9",
            "17000 00000",
            "99999999999999999999",
            "١٧٠٠٠٠٠٠٠٠", // non-ASCII digits
        ] {
            assert_eq!(
                check(SECRET, ts, SIG, BODY, NOW),
                Err(VerifyError::MalformedTimestamp),
                "{ts:?}"
            );
        }
    }

    #[test]
    fn malformed_signatures() {
        for sig in [
            "",
            "zz",
            &SIG[..63],
            &SIG[..62],
            &format!("{SIG}00"),
            &format!("sha256={SIG}"),
            &SIG.replace('a', "g"),
        ] {
            assert_eq!(
                check(SECRET, TS, sig, BODY, NOW),
                Err(VerifyError::MalformedSignature),
                "{sig:?}"
            );
        }
    }

    #[test]
    fn malformed_timestamp_is_reported_before_signature() {
        assert_eq!(
            check(SECRET, "x", "y", BODY, NOW),
            Err(VerifyError::MalformedTimestamp)
        );
    }

    #[test]
    fn verify_now_uses_the_clock() {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let ts = now.to_string();
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(SECRET.as_bytes()).unwrap();
        mac.update(format!("{ts}.").as_bytes());
        mac.update(BODY);
        let sig = hex::encode(mac.finalize().into_bytes());
        assert_eq!(verify_now(SECRET, &ts, &sig, BODY), Ok(()));
        // The fixed 2023 vector is far outside the default tolerance today.
        assert_eq!(
            verify_now(SECRET, TS, SIG, BODY),
            Err(VerifyError::TimestampOutOfTolerance)
        );
    }

    #[test]
    fn errors_display() {
        assert_eq!(
            VerifyError::SignatureMismatch.to_string(),
            "webhook signature does not match"
        );
        let boxed: Box<dyn std::error::Error> = Box::new(VerifyError::MalformedTimestamp);
        assert_eq!(boxed.to_string(), "malformed webhook timestamp header");
    }
}

/// Compiles and runs the README's example.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
