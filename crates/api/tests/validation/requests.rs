//! Refusals of the request itself: the error envelope for routes, methods,
//! media types, sizes and broken JSON; bodies a plain parse would read
//! ambiguously; verification input; lookups without their parameter.

use crate::app::{App, Refusals, with_key};
use crate::kind::*;
use axum::body::Body;
use axum::http::Request;
use serde_json::json;

#[tokio::test]
async fn an_unknown_route_is_404_inside_and_outside_v1() {
    let app = App::start().await;
    let c = app.customer(1000).await;
    for path in ["/v1/no/such/route", "/v1/providers/television"] {
        app.get(&c.key, path).await.assert_error(404, "not_found");
    }
    let outside = Request::get("/nothing-here").body(Body::empty()).unwrap();
    app.send(outside).await.assert_error(404, "not_found");
}

#[tokio::test]
async fn a_path_segment_that_is_not_utf8_is_400() {
    let app = App::start().await;
    let c = app.customer(1000).await;
    let r = app.get(&c.key, "/v1/providers/%FF").await;
    r.assert_error(400, "bad_request");
}

#[tokio::test]
async fn a_method_the_route_lacks_is_405() {
    let app = App::start().await;
    let c = app.customer(1000).await;
    let delete = with_key(Request::delete("/v1/wallet/balance"), &c.key);
    let r = app.send(delete.body(Body::empty()).unwrap()).await;
    r.assert_error(405, "method_not_allowed");
    let r = app.get(&c.key, "/v1/airtime/purchase").await;
    r.assert_error(405, "method_not_allowed");
}

#[tokio::test]
async fn broken_json_a_wrong_media_type_or_a_body_over_64_kib_is_refused_in_the_envelope() {
    let app = App::start().await;
    let c = app.customer(1000).await;
    let post = |body: String, content_type: Option<&'static str>| {
        let mut request = with_key(Request::post("/v1/airtime/purchase"), &c.key);
        if let Some(ct) = content_type {
            request = request.header("content-type", ct);
        }
        app.send(request.body(Body::from(body)).unwrap())
    };
    let json = Some("application/json");
    let r = post("{not json".into(), json).await;
    r.assert_error(400, "invalid_json");
    let r = post("{}".into(), None).await;
    r.assert_error(415, "unsupported_media_type");
    let r = post("{}".into(), Some("text/plain")).await;
    r.assert_error(415, "unsupported_media_type");
    let r = post("[1,2]".into(), json).await;
    r.assert_error(422, "validation_error");
    let missing = post(
        r#"{"provider_id":"mtn"}"#.into(),
        Some("application/json; charset=utf-8"),
    )
    .await;
    missing.assert_error(422, "validation_error");
    let message = str_of(&missing.body["message"]);
    assert!(message.contains("is required"), "{}", missing.body);
    let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(70 * 1024));
    post(big, json).await.assert_error(413, "payload_too_large");

    let wrong_amount = json!({"provider_id":"mtn","phone":"08031234567","amount":100.123,"reference":"ref-000001"});
    let r = app
        .post(&c.key, "/v1/airtime/purchase", &wrong_amount)
        .await;
    r.assert_error(422, "validation_error");
    assert!(
        str_of(&r.body["message"]).starts_with("amount"),
        "{}",
        r.body
    );
    // none of that touched the wallet
    assert_eq!(app.balance_kobo(&c).await, 100_000);
}

fn airtime_text(amount: &str, reference: &str) -> String {
    format!(
        r#"{{"provider_id":"mtn","phone":"08031231234","amount":{amount},"reference":"{reference}"}}"#
    )
}

#[tokio::test]
async fn ambiguous_bodies_are_refused_naming_the_field() {
    let r = Refusals::start().await;
    let spare = r.spare.clone();
    let refusals = [
        // The last `amount` would win in a plain parse and debit ₦50,000.
        (
            airtime_text("50", &spare).replace("}", r#","amount":50000}"#),
            "amount: is given more than once",
        ),
        // An f64 reads this as exactly 50.
        (
            airtime_text("50.0000000000000001", &spare),
            "amount: must have at most 2 decimal places",
        ),
        (
            airtime_text("50.000", &spare),
            "amount: must have at most 2 decimal places",
        ),
        // Zero-width space and right-to-left override.
        (airtime_text("50", "order\u{200B}1234"), "reference"),
        (airtime_text("50", "order\u{202E}1234"), "reference"),
    ];
    for (body, message) in refusals {
        let reply = r
            .app
            .post_text(&r.c.key, &Airtime.live(), body.clone())
            .await;
        reply.assert_error(422, "validation_error");
        let said = str_of(&reply.body["message"]);
        assert!(said.contains(message), "{body}: {said}");
    }
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_fractional_count_is_refused_and_an_integral_one_accepted() {
    let app = App::start().await;
    let c = app.customer(100_000).await;
    let fractional = json!({ "provider_id": "waec", "quantity": 1.5, "phone": "07012341234", "reference": "ref-fractional" });
    let r = app.post(&c.key, &Education.live(), &fractional).await;
    r.assert_error(422, "validation_error");
    let said = str_of(&r.body["message"]);
    assert!(said.contains("quantity") && !said.contains("u32"), "{said}");
    assert_eq!(app.transaction_count(&c).await, 0);

    let body =
        r#"{"provider_id":"waec","quantity":1.0,"phone":"07012341234","reference":"ref-integral"}"#;
    let r = app.post_text(&c.key, &Education.live(), body.into()).await;
    assert_eq!(r.assert_ok()["quantity"], 1, "{}", r.body);
}

#[tokio::test]
async fn verification_refuses_bad_input_live_and_in_test_mode() {
    let app = App::start().await;
    let c = app.customer(0).await;
    for prefix in ["/v1", "/v1/test"] {
        let verify = |path: &str| format!("{prefix}/{path}/verify");
        let cable = json!({ "provider_id": "mtn", "smartcard_number": "7023451234" });
        let r = app.post(&c.key, &verify("cable"), &cable).await;
        r.assert_error(422, "invalid_provider");
        let bet = json!({ "provider_id": "nope", "customer_id": "x1" });
        let r = app.post(&c.key, &verify("bet"), &bet).await;
        r.assert_error(422, "invalid_provider");
        for (path, body, field) in [
            (
                "cable",
                json!({ "provider_id": "dstv", "smartcard_number": "12345" }),
                "smartcard_number",
            ),
            (
                "electricity",
                json!({ "provider_id": "ikeja-electric", "meter_number": "4501234", "meter_type": 3 }),
                "meter_type",
            ),
            (
                "electricity",
                json!({ "provider_id": "ikeja-electric", "meter_number": "45a", "meter_type": 1 }),
                "meter_number",
            ),
            (
                "bet",
                json!({ "provider_id": "bet9ja", "customer_id": "" }),
                "customer_id",
            ),
            ("bet", json!({ "provider_id": "bet9ja" }), "customer_id"),
        ] {
            let r = app.post(&c.key, &verify(path), &body).await;
            r.assert_error(422, "validation_error");
            let said = str_of(&r.body["message"]);
            assert!(said.contains(field), "message names {field}: {}", r.body);
        }
    }
}

#[tokio::test]
async fn a_lookup_without_its_parameter_is_422_and_of_nothing_404() {
    let app = App::start().await;
    let c = app.customer(0).await;
    for path in [
        "/v1/transaction/status",
        "/v1/transaction/status?reference_code=",
        "/v1/transaction/status?reference=",
        "/v1/transaction/status?other=1",
        "/v1/epin/batch",
        "/v1/epin/batch?batch_id=",
    ] {
        app.get(&c.key, path)
            .await
            .assert_error(422, "validation_error");
    }
    for path in [
        "/v1/transaction/status?reference_code=BP123",
        "/v1/transaction/status?reference_code=BP000000000000000000",
        "/v1/transaction/status?reference=no-such-reference",
        "/v1/epin/batch?batch_id=EP0NOSUCHBATCH",
    ] {
        app.get(&c.key, path).await.assert_error(404, "not_found");
    }
}
