//! One signed webhook per purchase, for every product and both outcomes,
//! carrying the spec's payload fields.

use super::*;
use std::collections::BTreeSet;

/// `2026-11-22T01:51:22.123+00:00`: ISO 8601 with a numeric offset.
fn assert_iso8601_with_offset(value: &Value) {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"));
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    let ok = b.len() >= 25
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && {
            let offset = &b[b.len() - 6..];
            matches!(offset[0], b'+' | b'-')
                && offset[1..3].iter().all(u8::is_ascii_digit)
                && offset[3] == b':'
                && offset[4..6].iter().all(u8::is_ascii_digit)
        }
        && {
            let fraction = &b[19..b.len() - 6];
            fraction.is_empty()
                || (fraction[0] == b'.'
                    && fraction.len() > 1
                    && fraction[1..].iter().all(u8::is_ascii_digit))
        };
    assert!(ok, "not ISO 8601 with offset: {s:?}");
}

/// What one purchase's webhook must say.
struct Expect<'a> {
    event: &'a str,
    successful: bool,
    /// `plan` (data, cable) or `item` (the others).
    label_field: &'a str,
    /// Electricity and education: a `pin` on success.
    pin: Option<fn(&str) -> bool>,
    epin: bool,
}

/// Checks a webhook body against the spec's payload fields, the accepted
/// response and the status endpoint.
fn assert_payload(hook: &Received, accepted: &Value, status: &Value, expect: &Expect<'_>) {
    let body = hook.json();
    let code = accepted["reference_code"].as_str().unwrap();
    let ctx = format!("webhook for {code}: {body}");
    let fields: BTreeSet<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let allowed: BTreeSet<&str> = [
        "event",
        "reference",
        "reference_code",
        "status",
        "message",
        "plan",
        "item",
        "recipient",
        "amount",
        "pin",
        "units",
        "completed_at",
        "batch_id",
    ]
    .into();
    assert!(fields.is_subset(&allowed), "unexpected fields: {ctx}");

    assert_eq!(body["event"], expect.event, "{ctx}");
    assert_eq!(body["reference"], accepted["reference"], "{ctx}");
    assert!(body["reference"].is_string(), "{ctx}");
    assert_eq!(body["reference_code"], code, "{ctx}");
    let want_status = if expect.successful {
        "successful"
    } else {
        "failed"
    };
    assert_eq!(body["status"], want_status, "{ctx}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(!message.is_empty(), "{ctx}");
    assert_eq!(body["message"], status["message"], "{ctx}");
    if !expect.successful {
        assert!(
            message.contains("refunded"),
            "failure message must say the wallet was refunded: {ctx}"
        );
    }

    let other = if expect.label_field == "plan" {
        "item"
    } else {
        "plan"
    };
    assert!(
        body[expect.label_field]
            .as_str()
            .is_some_and(|l| !l.is_empty()),
        "{ctx}"
    );
    assert_eq!(
        body[expect.label_field], accepted[expect.label_field],
        "{ctx}"
    );
    assert!(body.get(other).is_none(), "only one of plan/item: {ctx}");

    assert_eq!(body["recipient"], accepted["recipient"], "{ctx}");
    assert!(body["amount"].is_number(), "amount is a number: {ctx}");
    assert_eq!(body["amount"], accepted["amount"], "{ctx}");

    match (expect.pin, expect.successful) {
        (Some(valid), true) => {
            let pin = body["pin"]
                .as_str()
                .unwrap_or_else(|| panic!("no pin: {ctx}"));
            assert!(valid(pin), "pin {pin:?}: {ctx}");
            assert_eq!(body["pin"], status["pin"], "{ctx}");
        }
        _ => assert!(body.get("pin").is_none(), "no pin expected: {ctx}"),
    }
    // A delivered electricity token comes with its units, as the status says.
    if expect.event == "electricity.purchase" && expect.successful {
        assert!(body["units"].as_f64().is_some_and(|u| u > 0.0), "{ctx}");
        assert_eq!(body["units"], status["units"], "{ctx}");
    } else {
        assert!(body.get("units").is_none(), "no units expected: {ctx}");
    }
    if expect.epin {
        let batch = body["batch_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no batch_id: {ctx}"));
        assert!(!batch.is_empty(), "{ctx}");
        assert_eq!(body["batch_id"], accepted["batch_id"], "{ctx}");
    } else {
        assert!(body.get("batch_id").is_none(), "{ctx}");
    }

    assert_iso8601_with_offset(&body["completed_at"]);
    assert_eq!(body["completed_at"], status["completed_at"], "{ctx}");
}

fn is_electricity_token(pin: &str) -> bool {
    let groups: Vec<&str> = pin.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .all(|g| g.len() == 4 && g.bytes().all(|b| b.is_ascii_digit()))
}

fn are_exam_pins(pin: &str) -> bool {
    let pins: Vec<&str> = pin.split(',').collect();
    pins.len() == 2
        && pins
            .iter()
            .all(|p| p.len() == 12 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// One signed webhook per purchase, for every product and both outcomes,
/// carrying the spec's payload fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_product_gets_one_signed_webhook_with_the_spec_payload() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    let c = server.customer("100000");
    set_url(&server, &c.key_id, &receiver.url("/ok"));
    let secret = enable_signing(&server, &c.key_id);

    let item = "item";
    let plan = "plan";
    let purchases: Vec<(&str, Value, Expect<'_>)> = vec![
        (
            "/v1/electricity/purchase",
            electricity(&reference(), "12345678901", 1500.0),
            Expect {
                event: "electricity.purchase",
                successful: true,
                label_field: item,
                pin: Some(is_electricity_token),
                epin: false,
            },
        ),
        (
            // The sandbox fails recipients ending in 0000.
            "/v1/electricity/purchase",
            electricity(&reference(), "45670000", 2000.0),
            Expect {
                event: "electricity.purchase",
                successful: false,
                label_field: item,
                pin: Some(is_electricity_token),
                epin: false,
            },
        ),
        (
            "/v1/epin/purchase",
            json!({ "provider_id": "mtn", "denomination": 100, "quantity": 3, "reference": reference() }),
            Expect {
                event: "epin.purchase",
                successful: true,
                label_field: item,
                pin: None,
                epin: true,
            },
        ),
        (
            "/v1/airtime/purchase",
            // International form in; the webhook carries the local form.
            json!({ "provider_id": "mtn", "phone": "2348031234567", "amount": 500, "reference": reference() }),
            Expect {
                event: "airtime.purchase",
                successful: true,
                label_field: item,
                pin: None,
                epin: false,
            },
        ),
        (
            "/v1/data/purchase",
            json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": "08031234568", "reference": reference() }),
            Expect {
                event: "data.purchase",
                successful: true,
                label_field: plan,
                pin: None,
                epin: false,
            },
        ),
        (
            "/v1/cable/purchase",
            json!({ "provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": "7012345678", "reference": reference() }),
            Expect {
                event: "cable.purchase",
                successful: true,
                label_field: plan,
                pin: None,
                epin: false,
            },
        ),
        (
            "/v1/education/purchase",
            json!({ "provider_id": "waec", "quantity": 2, "phone": "08031234569", "reference": reference() }),
            Expect {
                event: "education.purchase",
                successful: true,
                label_field: item,
                pin: Some(are_exam_pins),
                epin: false,
            },
        ),
        (
            "/v1/bet/purchase",
            json!({ "provider_id": "bet9ja", "customer_id": "BET12345", "amount": 1000, "reference": reference() }),
            Expect {
                event: "bet.purchase",
                successful: true,
                label_field: item,
                pin: None,
                epin: false,
            },
        ),
    ];

    let mut placed = Vec::new();
    for (path, body, expect) in purchases {
        let accepted = buy(&server, &c, path, body.clone()).await;
        assert_eq!(accepted["reference"], body["reference"]);
        placed.push((accepted, expect));
    }
    for (accepted, expect) in &placed {
        let code = code_of(accepted);
        let status = server.wait_final(&c.api_key, &code).await;
        let hooks = receiver.wait_for(&code, 1).await;
        let hook = &hooks[0];
        assert_eq!(hook.path, "/ok");
        assert_json_content_type(hook);
        assert_signed(hook, &secret);
        assert_payload(hook, accepted, &status, expect);
    }
    let airtime_hook = receiver.for_code(&code_of(&placed[3].0));
    assert_eq!(airtime_hook[0].json()["recipient"], "08031234567");

    // Exactly one each, and each logged as delivered with one 2xx attempt.
    tokio::time::sleep(SETTLE).await;
    for (accepted, expect) in &placed {
        let code = code_of(accepted);
        assert_eq!(receiver.for_code(&code).len(), 1, "webhooks for {code}");
        let entry = wait_settled(&server, &c.account_id, &code).await;
        assert_eq!(entry["event"]["status"], "delivered", "{entry}");
        assert_eq!(entry["event"]["event"], expect.event, "{entry}");
        assert_eq!(entry["event"]["attempts"], 1, "{entry}");
        let tries = attempts(&entry);
        assert_eq!(tries.len(), 1, "{entry}");
        assert_eq!(tries[0]["http_status"], 200, "{entry}");
        assert_eq!(tries[0]["error"], Value::Null, "{entry}");
        assert_eq!(tries[0]["url"], receiver.url("/ok"), "{entry}");
        // The logged payload is the body that was sent, byte for byte.
        let sent = receiver.for_code(&code)[0].body.clone();
        assert_eq!(
            entry["event"]["payload"].as_str().unwrap().as_bytes(),
            &sent[..]
        );
    }
    assert_eq!(receiver.received().len(), placed.len());
}
