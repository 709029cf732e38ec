//! Verification (cable, electricity, betting), live and in `/test`: the
//! sandbox finds every number but those ending 0000. Its refusals of bad
//! input run in-process: `crates/api/tests/validation.rs`.

use crate::support::*;
use serde_json::json;

#[tokio::test]
async fn verification_finds_customers_live_and_in_test_mode() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let cases = [
        (
            "cable",
            "smartcard_number",
            json!({ "provider_id": "dstv", "smartcard_number": "7023451234" }),
            json!({ "provider_id": "dstv", "smartcard_number": "7023450000" }),
        ),
        (
            "electricity",
            "meter_number",
            json!({ "provider_id": "ikeja-electric", "meter_number": "45012341234", "meter_type": 2 }),
            json!({ "provider_id": "ikeja-electric", "meter_number": "45012340000", "meter_type": 1 }),
        ),
        (
            "bet",
            "customer_id",
            json!({ "provider_id": "bet9ja", "customer_id": "BJ-551234" }),
            json!({ "provider_id": "bet9ja", "customer_id": "BJ-550000" }),
        ),
    ];
    for (path, number_field, found, missing) in &cases {
        let mut names = Vec::new();
        for prefix in ["/v1", "/v1/test"] {
            let url = format!("{prefix}/{path}/verify");
            let d = server
                .post(&c.api_key, &url, found.clone())
                .await
                .assert_ok()
                .clone();
            assert!(
                d["customer_name"].as_str().is_some_and(|n| !n.is_empty()),
                "{url}: {d}"
            );
            assert_eq!(d[*number_field], found[*number_field], "{url}: {d}");
            assert_eq!(d["provider"], found["provider_id"], "{url}: {d}");
            if *path == "electricity" {
                assert!(d["address"].as_str().is_some_and(|a| !a.is_empty()), "{d}");
                assert_eq!(d["meter_type"], 2, "{d}");
            }
            if prefix == "/v1/test" {
                assert_eq!(d["test_mode"], true, "{d}");
            } else {
                assert!(d.get("test_mode").is_none_or(|t| t == false), "{d}");
            }
            names.push(d["customer_name"].clone());
            server
                .post(&c.api_key, &url, missing.clone())
                .await
                .assert_error(422, "customer_not_found");
        }
        assert_eq!(names[0], names[1], "the same made-up name live and in test");
    }
}

/// A provider's UUID works like its slug; a number ending 1111 is found.
#[tokio::test]
async fn verification_takes_a_provider_uuid_and_finds_numbers_ending_1111() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let ikeja = server.provider_id(&c.api_key, "ikeja-electric").await;
    for prefix in ["/v1", "/v1/test"] {
        let d = server
            .post(
                &c.api_key,
                &format!("{prefix}/electricity/verify"),
                json!({ "provider_id": ikeja, "meter_number": "45012341111", "meter_type": 1 }),
            )
            .await
            .assert_ok()
            .clone();
        assert_eq!(d["provider"], "ikeja-electric");
        assert_eq!(d["meter_type"], 1);
    }
}
