//! How a purchase names things: a provider by slug or UUID, a phone number
//! in any accepted form, and a price that only the catalogue sets.

use super::checks::*;
use super::expect::*;
use super::kind::*;
use crate::support::*;
use serde_json::{Value, json};

/// A server and a customer with ₦1,000,000.
async fn with_customer() -> (TestServer, Customer) {
    let server = TestServer::spawn().await;
    let c = server.customer("1000000");
    (server, c)
}

#[tokio::test]
async fn a_provider_uuid_buys_like_its_slug_and_is_stored_by_slug() {
    let (server, c) = with_customer().await;
    let key = c.api_key.as_str();
    let expect = expectations(&server, key).await;
    // A provider's UUID works like its slug, live and test, for every product.
    for kind in ALL {
        let reference = reference();
        let id = server.provider_id(key, kind.provider()).await;
        let id = if kind == Cable { id.to_uppercase() } else { id };
        let body = with(&kind.body(&reference, "1234"), "provider_id", json!(id));
        let before = balance_kobo(&server, key).await;
        let d = server
            .post(key, &kind.test(), body.clone())
            .await
            .assert_ok()
            .clone();
        assert_test_reply(&d, &body, expect[&kind].amount, before);
        let d = server
            .post(key, &kind.live(), body)
            .await
            .assert_ok()
            .clone();
        let d = assert_accepted(&d, kind, &reference, "1234", &expect[&kind], before);
        let code = str_of(&d["reference_code"]);
        let done = server.wait_final(key, &code).await;
        assert_eq!(done["status"], "successful");
        let shown = server.cli(&["transaction", "show", &code]);
        assert_eq!(
            shown["transaction"]["provider"],
            kind.provider(),
            "stored by slug"
        );
    }
    settled_events(&server, &c.account_id, ALL.len()).await;
    server.assert_ledger_consistent(&c.account_id);
}

#[tokio::test]
async fn phones_in_every_accepted_form_are_stored_and_returned_in_local_form() {
    let (server, c) = with_customer().await;
    let key = c.api_key.as_str();
    // Phone numbers in every accepted form are stored and returned as 0XXXXXXXXXX.
    let forms = [
        "08031234567",
        "2348031234567",
        "+2348031234567",
        "0803 123 4567",
        "0803-123-4567",
        "+234 803 123 4567",
        "234 803 123 4567",
    ];
    let mut phone_codes = Vec::new();
    for (i, form) in forms.iter().enumerate() {
        let kind = [Airtime, Data, Education][i % 3];
        let reference = reference();
        let body = with(&kind.body(&reference, "1234"), "phone", json!(form));
        let test = server
            .post(key, &kind.test(), body.clone())
            .await
            .assert_ok()
            .clone();
        assert_eq!(
            test["request"]["phone"], *form,
            "test mode echoes the body as sent"
        );
        let d = server
            .post(key, &kind.live(), body)
            .await
            .assert_ok()
            .clone();
        assert_eq!(d["recipient"], "08031234567", "{form}: {d}");
        assert_eq!(d["phone"], "08031234567", "{form}: {d}");
        let code = str_of(&d["reference_code"]);
        let s = status_by_reference(&server, key, &reference).await;
        assert_eq!(s["recipient"], "08031234567", "{form}: {s}");
        assert_eq!(
            server.cli(&["transaction", "show", &code])["transaction"]["recipient"],
            "08031234567"
        );
        server.wait_final(key, &code).await;
        phone_codes.push(code);
    }
    // One webhook event each, carrying the local form.
    let events = settled_events(&server, &c.account_id, phone_codes.len()).await;
    for code in &phone_codes {
        let event = events
            .iter()
            .find(|e| e["event"]["transaction_code"] == code.as_str())
            .unwrap();
        let payload: Value =
            serde_json::from_str(event["event"]["payload"].as_str().unwrap()).unwrap();
        assert_eq!(
            payload["recipient"], "08031234567",
            "webhooks carry the local form"
        );
    }
}

#[tokio::test]
async fn prices_come_from_the_catalogue_and_the_clients_amount_is_ignored() {
    let (server, c) = with_customer().await;
    let key = c.api_key.as_str();
    let plans = server
        .get(key, "/v1/data-plans?provider=airtel")
        .await
        .assert_ok()
        .clone();
    let plan = plans.as_array().unwrap().last().unwrap().clone();
    let cable = server
        .get(key, "/v1/cable-plans?provider=gotv")
        .await
        .assert_ok()
        .clone();
    let cable_plan = cable[0].clone();
    let waec_price = kobo(
        &server
            .get(key, "/v1/providers/education")
            .await
            .assert_ok()
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["slug"] == "waec")
            .unwrap()["price"],
    );
    let cases = [
        (
            json!({ "provider_id": "airtel", "plan_id": plan["plan_id"], "phone": "09015551234", "amount": 1, "price": 1 }),
            "data",
            kobo(&plan["price"]),
            plan["name"].clone(),
        ),
        (
            json!({ "provider_id": "gotv", "plan_id": cable_plan["plan_id"], "smartcard_number": "7023451234", "amount": 1 }),
            "cable",
            kobo(&cable_plan["price"]),
            cable_plan["name"].clone(),
        ),
        (
            json!({ "provider_id": "waec", "quantity": 3, "amount": 1 }),
            "education",
            3 * waec_price,
            Value::Null,
        ),
        (
            json!({ "provider_id": "mtn", "denomination": 500, "quantity": 5, "amount": 1 }),
            "epin",
            5 * 50_000,
            Value::Null,
        ),
    ];
    for (body, path, price, plan_name) in cases {
        let reference = reference();
        let body = with(&body, "reference", json!(reference));
        let before = balance_kobo(&server, key).await;
        let test = server
            .post(key, &format!("/v1/test/{path}/purchase"), body.clone())
            .await
            .assert_ok()
            .clone();
        assert_eq!(kobo(&test["would_deduct"]), price, "{path}: {test}");
        let d = server
            .post(key, &format!("/v1/{path}/purchase"), body)
            .await
            .assert_ok()
            .clone();
        assert_eq!(kobo(&d["amount"]), price, "{path}: {d}");
        assert_eq!(kobo(&d["balance_after"]), before - price, "{path}: {d}");
        if !plan_name.is_null() {
            assert_eq!(d["plan"], plan_name);
        }
        assert_eq!(balance_kobo(&server, key).await, before - price);
        let done = server
            .wait_final(key, d["reference_code"].as_str().unwrap())
            .await;
        assert_eq!(kobo(&done["amount"]), price);
        if path == "education" {
            assert_eq!(done["recipient"], "", "no phone given: {done}");
            assert_exam_pins(&done["pin"], 3);
        }
    }
    server.assert_ledger_consistent(&c.account_id);
}
