//! Both gateways sign a webhook the same way: the lowercase hex HMAC-SHA512
//! of the raw body bytes (re-serialised JSON would not match), keyed with a
//! secret of the merchant's. Compared in constant time.

use crate::WebhookError;
use hmac::{Hmac, Mac};
use reqwest::header::HeaderMap;
use sha2::Sha512;
use subtle::ConstantTimeEq;

/// The hex HMAC-SHA512 of `body` under `key` (what the gateway sends).
pub fn sign(key: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha512>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// Checks the signature in `header` over `body`.
pub fn check(
    headers: &HeaderMap,
    header: &str,
    key: &[u8],
    body: &[u8],
) -> Result<(), WebhookError> {
    let given = headers
        .get(header)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .ok_or(WebhookError::Unsigned)?;
    // Hex of either case is the same signature.
    let given = hex::decode(given).map_err(|_| WebhookError::BadSignature)?;
    let mut mac = Hmac::<Sha512>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(body);
    let expected = mac.finalize().into_bytes();
    if bool::from(expected.as_slice().ct_eq(&given)) {
        Ok(())
    } else {
        Err(WebhookError::BadSignature)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Monnify's published example (developers.monnify.com, "Transaction Hash
    /// Computation"): its sample event in compact JSON, under its sample key.
    pub(crate) const MONNIFY_SAMPLE_KEY: &str = "91MUDL9N6U3BQRXBQ2PJ9M0PW4J22M1Y";
    pub(crate) const MONNIFY_SAMPLE_BODY: &str = r#"{"eventData":{"product":{"reference":"111222333","type":"OFFLINE_PAYMENT_AGENT"},"transactionReference":"MNFY|76|20211117154810|000001","paymentReference":"0.01462001097368737","paidOn":"17/11/2021 3:48:10 PM","paymentDescription":"Mockaroo Jesse","metaData":{},"destinationAccountInformation":{},"paymentSourceInformation":{},"amountPaid":78000,"totalPayable":78000,"offlineProductInformation":{"code":"41470","type":"DYNAMIC"},"cardDetails":{},"paymentMethod":"CASH","currency":"NGN","settlementAmount":77600,"paymentStatus":"PAID","customer":{"name":"Mockaroo Jesse","email":"111222333@ZZAMZ4WT4Y3E.monnify"}},"eventType":"SUCCESSFUL_TRANSACTION"}"#;
    pub(crate) const MONNIFY_SAMPLE_HASH: &str = "f04fb635e04d71648bd3cc7999003da6861483342c856d05ddfa9b2dafacb873b0de1d0f8f67405d0010b4348b721c49fa171d317972618debba6b638aedcd3c";

    fn signed(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("monnify-signature", value.parse().unwrap());
        headers
    }

    #[test]
    fn reproduces_monnifys_published_test_vector() {
        let (key, body) = (
            MONNIFY_SAMPLE_KEY.as_bytes(),
            MONNIFY_SAMPLE_BODY.as_bytes(),
        );
        assert_eq!(sign(key, body), MONNIFY_SAMPLE_HASH);
        let header = "monnify-signature";
        assert_eq!(
            check(&signed(MONNIFY_SAMPLE_HASH), header, key, body),
            Ok(())
        );
        let upper = MONNIFY_SAMPLE_HASH.to_uppercase();
        assert_eq!(check(&signed(&upper), header, key, body), Ok(()));
    }

    #[test]
    fn refuses_a_changed_body_a_wrong_key_and_no_signature() {
        let (key, body) = (
            MONNIFY_SAMPLE_KEY.as_bytes(),
            MONNIFY_SAMPLE_BODY.as_bytes(),
        );
        let header = "monnify-signature";
        let tampered = MONNIFY_SAMPLE_BODY.replace("78000", "780000");
        let bad = Err(WebhookError::BadSignature);
        assert_eq!(
            check(
                &signed(MONNIFY_SAMPLE_HASH),
                header,
                key,
                tampered.as_bytes()
            ),
            bad
        );
        assert_eq!(
            check(&signed(MONNIFY_SAMPLE_HASH), header, b"other", body),
            bad
        );
        assert_eq!(check(&signed("zz"), header, key, body), bad);
        let none = HeaderMap::new();
        assert_eq!(check(&none, header, key, body), Err(WebhookError::Unsigned));
        // the pretty-printed sample (as Monnify's page shows it) does not match
        let pretty: serde_json::Value = serde_json::from_str(MONNIFY_SAMPLE_BODY).unwrap();
        let pretty = serde_json::to_string_pretty(&pretty).unwrap();
        assert_eq!(
            check(&signed(MONNIFY_SAMPLE_HASH), header, key, pretty.as_bytes()),
            bad
        );
    }
}
