//! Issue 32's level 1 through the API: `POST /v1/account/identity` against
//! a spawned server with the fake Monnify (`support::monnify`). A BVN that
//! matches raises a level-0 account to level 1 at once and the next purchase
//! is held to level 1's limits; a mismatch is `422 identity_mismatch` and
//! changes nothing; the 4th check of a Lagos day is `429 too_many_attempts`
//! with `Retry-After`, Monnify not asked; a NIN passes too; a level-2
//! account is not checked; without Monnify, `503 identity_unavailable`.
//! Then every number sent is looked for in the database (SQLite file and
//! WAL, or every PostgreSQL row) and the server's logs: absent. On the test
//! backend (`BILLPAY_TEST_BACKEND`).

use crate::dashboard::identity::assert_only_last4_kept;
use crate::support::monnify::*;
use crate::support::*;
use billpay_api_testkit::openapi::request_documented;
use serde_json::{Value, json};

const PATH: &str = "/v1/account/identity";
/// A BVN Monnify does not know.
const UNKNOWN_BVN: &str = "22299988877";
/// Every number sent in the test.
const NUMBERS: [&str; 4] = [BVN_PERSON, BVN_OTHER, NIN_PHONE_NUMBER, UNKNOWN_BVN];

/// A check of `BVN_PERSON`'s details, `dob` as the date of birth.
fn bvn(number: &str, first: &str, last: &str, dob: &str) -> Value {
    json!({
        "method": "bvn",
        "number": number,
        "first_name": first,
        "last_name": last,
        "date_of_birth": dob,
        "phone": "0814 222 3149",
    })
}

/// An operator-created customer (level 2) moved to level 0, with ₦100,000.
fn level0_customer(server: &TestServer) -> Customer {
    let c = server.customer("100000");
    server.cli(&[
        "kyc",
        "set-level",
        &c.account_id,
        "0",
        "--reason",
        "a new reseller",
    ]);
    c
}

fn airtime(naira: u32) -> Value {
    json!({"provider_id": "mtn", "phone": "08031231234", "amount": naira, "reference": reference()})
}

/// The reply, after checking no number sent is in it.
fn no_number(reply: &Reply) -> &Reply {
    let text = reply.body.to_string();
    for number in NUMBERS {
        assert!(!text.contains(number), "{number} in {text}");
        assert!(
            !text.contains(&number[..7]),
            "{number}'s first digits in {text}"
        );
    }
    reply
}

#[tokio::test]
async fn an_api_customer_verifies_their_bvn_and_the_number_is_kept_nowhere() {
    let monnify = FakeMonnify::start().await;
    let mut env = monnify.env();
    env.push(("BILLPAY_LOG", "info".to_owned()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    let c = level0_customer(&server);
    let key = c.api_key.as_str();

    // Level 0: ₦20,000 is over its largest single purchase.
    let refused = server
        .post(key, "/v1/airtime/purchase", airtime(20_000))
        .await;
    refused.assert_error(422, "limit_exceeded");
    assert_eq!(
        refused.body["message"],
        "This purchase is over the largest single purchase of 10000.00 Naira"
    );

    // Bodies that are refused before anything is counted or asked, the
    // number never quoted back.
    let mut as_number = bvn(BVN_PERSON, "Olatunde", "Ogunboyejo", "1993-04-27");
    as_number["number"] = json!(22222222226_u64);
    let r = server.post(key, PATH, as_number).await;
    no_number(&r).assert_error(422, "validation_error");
    assert_eq!(r.body["message"], "number: must be a string of 11 digits");
    let r = server
        .post(
            key,
            PATH,
            bvn("2222222222", "Olatunde", "Ogunboyejo", "1993-04-27"),
        )
        .await;
    r.assert_error(422, "validation_error");
    assert_eq!(r.body["message"], "number: must be 11 digits");
    // A BVN without its phone, missing or null: the document says so too
    // (one schema variant per method), so a client reading it never sends one.
    let mut no_phone = bvn(BVN_PERSON, "Olatunde", "Ogunboyejo", "1993-04-27");
    no_phone.as_object_mut().unwrap().remove("phone");
    let mut null_phone = bvn(BVN_PERSON, "Olatunde", "Ogunboyejo", "1993-04-27");
    null_phone["phone"] = Value::Null;
    for body in [no_phone, null_phone] {
        assert!(
            !request_documented(PATH, &body),
            "the document refuses {body}"
        );
        let r = server.post(key, PATH, body).await;
        no_number(&r).assert_error(422, "validation_error");
        assert_eq!(r.body["message"], "phone: is required for a BVN check");
    }
    let whole = bvn(BVN_PERSON, "Olatunde", "Ogunboyejo", "1993-04-27");
    assert!(request_documented(PATH, &whole), "a BVN with its phone");
    let mut nin = bvn(NIN_PHONE_NUMBER, "Olatunde", "Ogunboyejo", "1993-04-27");
    nin["method"] = json!("nin");
    nin["phone"] = Value::Null;
    assert!(request_documented(PATH, &nin), "a NIN needs no phone");
    assert_eq!(monnify.identity_checks(), (0, 0));

    // A date of birth not on the BVN: 422, saying which, nothing changed.
    let r = server
        .post(
            key,
            PATH,
            bvn(BVN_PERSON, "Olatunde", "Ogunboyejo", "1993-04-28"),
        )
        .await;
    no_number(&r).assert_error(422, "identity_mismatch");
    let message = r.body["message"].as_str().unwrap();
    assert_eq!(
        message,
        "Your BVN was found, but the date of birth did not match what it holds. Nothing has changed. You have 2 checks left today."
    );
    let account = server.get(key, "/v1/account").await;
    assert_eq!(account.assert_ok()["kyc_level"], 0);

    // Name, date of birth and phone: level 1 at once.
    let r = server
        .post(
            key,
            PATH,
            bvn(BVN_PERSON, " Olatunde ", "Ogunboyejo", "1993-04-27"),
        )
        .await;
    let data = no_number(&r).assert_ok();
    assert_eq!(
        *data,
        json!({"kyc_level": 1, "method": "bvn", "last4": "2226", "checked": true})
    );
    assert_eq!(monnify.identity_checks(), (2, 0));
    let account = server.get(key, "/v1/account").await;
    let account = account.assert_ok();
    assert_eq!(account["kyc_level"], 1);
    assert_eq!(account["limits"]["max_purchase"], 50000.0);
    let shown = server.cli(&["kyc", "show", &c.account_id]);
    assert_eq!(shown["kyc"]["method"], "bvn", "{shown}");
    assert_eq!(shown["kyc"]["last4"], "2226", "{shown}");
    assert_eq!(shown["kyc"]["set_by"], "self", "{shown}");

    // The next purchase is checked against level 1's limits: ₦20,000 goes.
    server
        .place(key, "/v1/airtime/purchase", airtime(20_000))
        .await;
    let account = server.get(key, "/v1/account").await;
    assert_eq!(account.assert_ok()["left_today"], 180000.0);

    // Checked again at level 1: nothing asked, nothing counted.
    let r = server
        .post(
            key,
            PATH,
            bvn(BVN_PERSON, "Olatunde", "Ogunboyejo", "1993-04-27"),
        )
        .await;
    assert_eq!(no_number(&r).assert_ok()["checked"], false);
    assert_eq!(monnify.identity_checks(), (2, 0));

    // Another account uses its 3 checks; the 4th is refused, Monnify not asked.
    let other = level0_customer(&server);
    let key = other.api_key.as_str();
    let r = server
        .post(key, PATH, bvn(BVN_OTHER, "Chidi", "Eze", "1990-01-01"))
        .await;
    no_number(&r).assert_error(422, "identity_mismatch");
    let r = server
        .post(key, PATH, bvn(UNKNOWN_BVN, "Ada", "Okafor", "1990-01-01"))
        .await;
    no_number(&r).assert_error(422, "identity_not_found");
    let r = server
        .post(key, PATH, bvn(BVN_PERSON, "Ada", "Okafor", "1990-01-01"))
        .await;
    no_number(&r).assert_error(422, "identity_mismatch");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .ends_with("You have no checks left today."),
        "{}",
        r.body
    );
    let asked = monnify.identity_checks();
    let r = server
        .post(key, PATH, bvn(BVN_OTHER, "Ada", "Okafor", "1990-01-01"))
        .await;
    no_number(&r).assert_error(429, "too_many_attempts");
    let retry_after: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&retry_after), "{retry_after}");
    let message = r.body["message"].as_str().unwrap();
    assert!(
        message.starts_with("This account has used today's 3 identity checks. Try again from ")
            && message.contains(" 00:00 WAT"),
        "{message}"
    );
    assert_eq!(monnify.identity_checks(), asked, "Monnify was not asked");
    let account = server.get(key, "/v1/account").await;
    assert_eq!(account.assert_ok()["kyc_level"], 0);

    // A NIN passes (no phone asked); a level-2 account is not checked.
    let third = level0_customer(&server);
    let nin = json!({"method": "nin", "number": "701 2345 6790", "first_name": "Ada",
        "last_name": "Okafor", "date_of_birth": "1990-01-01"});
    let r = server.post(&third.api_key, PATH, nin.clone()).await;
    assert_eq!(
        *no_number(&r).assert_ok(),
        json!({"kyc_level": 1, "method": "nin", "last4": "6790", "checked": true})
    );
    let operator_made = server.customer("0");
    let r = server.post(&operator_made.api_key, PATH, nin).await;
    let data = no_number(&r).assert_ok();
    assert_eq!(
        (&data["kyc_level"], &data["checked"]),
        (&json!(2), &json!(false))
    );
    assert_eq!(monnify.identity_checks().1, 1);

    // Only the last 4 digits anywhere: the database, the logs.
    assert_only_last4_kept(&server, &NUMBERS).await;
    server.assert_ledger_consistent(&c.account_id);
}

#[tokio::test]
async fn without_monnify_the_check_is_unavailable() {
    let server = TestServer::spawn().await;
    let c = level0_customer(&server);
    let r = server
        .post(
            &c.api_key,
            PATH,
            bvn(BVN_PERSON, "Olatunde", "Ogunboyejo", "1993-04-27"),
        )
        .await;
    no_number(&r).assert_error(503, "identity_unavailable");
    assert_eq!(
        r.body["message"],
        "Identity checks are not offered here: no verification service is configured. Ask the business to verify the account."
    );
    let account = server.get(&c.api_key, "/v1/account").await;
    assert_eq!(account.assert_ok()["kyc_level"], 0);
    // An account at level 2 is told its level, gateway or not.
    let operator_made = server.customer("0");
    let r = server
        .post(
            &operator_made.api_key,
            PATH,
            bvn(BVN_PERSON, "Olatunde", "Ogunboyejo", "1993-04-27"),
        )
        .await;
    let data = no_number(&r).assert_ok();
    assert_eq!(
        (&data["kyc_level"], &data["checked"]),
        (&json!(2), &json!(false))
    );
}
