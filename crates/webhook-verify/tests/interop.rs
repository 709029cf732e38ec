//! Signatures made by the sender (`billpay-webhooks`) verify here.

use billpay_webhook_verify::{DEFAULT_TOLERANCE_SECS, VerifyError, verify, verify_now};
use billpay_webhooks::sign;
use std::time::{SystemTime, UNIX_EPOCH};

#[test]
fn signature_from_billpay_webhooks_verifies() {
    let secret = "whsec_9f2c1e0d";
    let body =
        br#"{"event":"electricity.purchase","reference_code":"elec-2024-0001","pin":"1234-5678"}"#;
    let timestamp = 1_718_000_000;
    let signature = sign(secret, timestamp, body);

    assert_eq!(
        verify(
            secret,
            &timestamp.to_string(),
            &signature,
            body,
            timestamp + 5,
            DEFAULT_TOLERANCE_SECS
        ),
        Ok(())
    );
    assert_eq!(
        verify(
            "whsec_other",
            &timestamp.to_string(),
            &signature,
            body,
            timestamp,
            DEFAULT_TOLERANCE_SECS
        ),
        Err(VerifyError::SignatureMismatch)
    );
}

#[test]
fn fresh_signature_verifies_now() {
    let secret = "sécret with spaces and ünicode";
    let body = "{\"reference_code\":\"ref-ünicode\"}".as_bytes();
    let now = i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap();
    let signature = sign(secret, now, body);
    assert_eq!(
        verify_now(secret, &now.to_string(), &signature, body),
        Ok(())
    );
}
