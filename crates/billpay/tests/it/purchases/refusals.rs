//! The 422 refusals that need the database, the operator CLI or a second
//! account: each changes nothing, live and test alike. The refusals of the
//! request itself (fields, types, formats, limits, unknown providers and
//! plans) run in-process: `crates/api/tests/validation.rs`; one of each slug
//! is sent here too, over real HTTP.

use super::checks::*;
use super::kind::*;
use crate::support::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test]
async fn refusals_over_http_change_nothing_and_leave_the_reference_free() {
    let server = TestServer::spawn().await;
    let c = server.customer("1000000");
    let key = c.api_key.as_str();
    let start = balance_kobo(&server, key).await;
    let spare = reference();
    let airtime = Airtime.body(&spare, "1234");
    let data = Data.body(&spare, "1234");
    let no_phone = without(&airtime, "phone");
    refused(&server, key, Airtime, no_phone, "validation_error", "phone").await;
    let nope = with(&airtime, "provider_id", json!("nope"));
    refused(&server, key, Airtime, nope, "invalid_provider", "").await;
    let plan = with(&data, "plan_id", json!("mtn-nope"));
    refused(&server, key, Data, plan, "invalid_plan", "").await;
    let cheap = with(&airtime, "amount", json!(0));
    refused(&server, key, Airtime, cheap, "minimum_amount", "").await;
    let dear = with(&airtime, "amount", json!(500_000));
    refused(&server, key, Airtime, dear, "maximum_amount", "").await;

    assert_eq!(balance_kobo(&server, key).await, start);
    assert!(transactions(&server, &c.account_id, None).is_empty());
    server.assert_ledger_consistent(&c.account_id);
    // The reference every refusal used is still free: test, then live.
    let body = Electricity.body(&spare, "1234");
    let d = server
        .post(key, &Electricity.test(), body.clone())
        .await
        .assert_ok()
        .clone();
    assert_test_reply(&d, &body, 150_050, start);
    let live = server.post(key, &Electricity.live(), body).await;
    assert_eq!(kobo(&live.assert_ok()["balance_before"]), start);
    server.assert_ledger_consistent(&c.account_id);
}

/// Polls in test mode (which never spends anything) until both are refused.
async fn until_refused(server: &TestServer, key: &str, airtime: &Value, data: &Value) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let p = server.post(key, &Airtime.test(), airtime.clone()).await;
        let q = server.post(key, &Data.test(), data.clone()).await;
        if p.status == 422 && q.status == 422 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "disabling took effect within 3 s: {} {}",
            p.body,
            q.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_provider_or_plan_the_operator_disabled_is_refused_and_the_rest_still_sells() {
    let server = TestServer::spawn().await;
    let c = server.customer("1000000");
    let key = c.api_key.as_str();
    let start = balance_kobo(&server, key).await;
    let spare = reference();
    let base_airtime = Airtime.body(&spare, "1234");
    let base_data = Data.body(&spare, "1234");
    server.cli(&["provider", "disable", "glo"]);
    server.cli(&["plan", "disable", "mtn-sme-2gb"]);
    let glo_airtime = with(&base_airtime, "provider_id", json!("glo"));
    let glo_airtime = with(&glo_airtime, "phone", json!("08051234567"));
    let disabled_plan = with(&base_data, "plan_id", json!("mtn-sme-2gb"));
    until_refused(&server, key, &glo_airtime, &disabled_plan).await;

    let slug = "invalid_provider";
    refused(&server, key, Airtime, glo_airtime.clone(), slug, "").await;
    let glo_uuid = server.provider_id(key, "glo").await;
    let by_uuid = with(&glo_airtime, "provider_id", json!(glo_uuid));
    refused(&server, key, Airtime, by_uuid, slug, "").await;
    let glo_data = with(
        &with(&base_data, "provider_id", json!("glo")),
        "plan_id",
        json!("glo-gifting-1gb"),
    );
    let glo_data = with(&glo_data, "phone", json!("08051234567"));
    refused(&server, key, Data, glo_data, slug, "").await;
    let glo_epin = with(&Epin.body(&spare, "1234"), "provider_id", json!("glo"));
    refused(&server, key, Epin, glo_epin, slug, "").await;
    refused(&server, key, Data, disabled_plan, "invalid_plan", "").await;
    // The rest of the catalogue is unaffected.
    server.post(key, &Data.test(), base_data).await.assert_ok();
    let airtel = with(&base_airtime, "provider_id", json!("airtel"));
    let airtel = with(&airtel, "phone", json!("08021234567"));
    server.post(key, &Airtime.test(), airtel).await.assert_ok();

    assert_eq!(balance_kobo(&server, key).await, start);
    assert!(transactions(&server, &c.account_id, None).is_empty());
    server.assert_ledger_consistent(&c.account_id);
}

#[tokio::test]
async fn an_insufficient_balance_is_refused_and_changes_nothing() {
    let server = TestServer::spawn().await;
    let poor = server.customer("100");
    let spare = reference();
    for kind in ALL {
        let body = kind.body(&spare, "1234");
        refused(
            &server,
            &poor.api_key,
            kind,
            body,
            "insufficient_balance",
            "",
        )
        .await;
    }
    assert_eq!(balance_kobo(&server, &poor.api_key).await, 10_000);
    assert!(transactions(&server, &poor.account_id, None).is_empty());
}

#[tokio::test]
async fn a_used_reference_is_refused_whatever_the_body() {
    let server = TestServer::spawn().await;
    let rich = server.customer("1000000");
    let key = rich.api_key.as_str();
    let start = balance_kobo(&server, key).await;
    let used = reference();
    let first = server
        .post(key, &Airtime.live(), Airtime.body(&used, "1234"))
        .await;
    let first = first.assert_ok().clone();
    for kind in ALL {
        let body = kind.body(&used, "5678");
        refused(&server, key, kind, body, "duplicate_reference", "").await;
    }
    let same = Airtime.body(&used, "1234");
    refused(&server, key, Airtime, same, "duplicate_reference", "").await;
    assert_eq!(balance_kobo(&server, key).await, start - 50_000);
    let statement = server.assert_ledger_consistent(&rich.account_id);
    assert_eq!(
        ledger_of(&statement, first["reference_code"].as_str().unwrap()),
        vec![("debit".to_owned(), -50_000)]
    );
    assert_eq!(transactions(&server, &rich.account_id, None).len(), 1);
}

#[tokio::test]
async fn a_used_reference_is_a_duplicate_before_the_balance_is_checked() {
    let server = TestServer::spawn().await;
    let poor = server.customer("100");
    let poor_ref = reference();
    let cheap = with(&Airtime.body(&poor_ref, "1234"), "amount", json!(50));
    server
        .post(&poor.api_key, &Airtime.live(), cheap)
        .await
        .assert_ok();
    // ₦500 would be refused for balance; the reference is refused first.
    let dear = Airtime.body(&poor_ref, "1234");
    refused(
        &server,
        &poor.api_key,
        Airtime,
        dear,
        "duplicate_reference",
        "",
    )
    .await;
    assert_eq!(balance_kobo(&server, &poor.api_key).await, 5_000);
}

#[tokio::test]
async fn another_account_may_use_the_same_reference() {
    let server = TestServer::spawn().await;
    let rich = server.customer("1000000");
    let poor = server.customer("100");
    let used = reference();
    let first = server
        .post(&rich.api_key, &Airtime.live(), Airtime.body(&used, "1234"))
        .await;
    let first = first.assert_ok().clone();
    let other = server
        .post(
            &poor.api_key,
            &Airtime.live(),
            with(&Airtime.body(&used, "1234"), "amount", json!(50)),
        )
        .await;
    let other = other.assert_ok().clone();
    assert_ne!(other["reference_code"], first["reference_code"]);
    assert_eq!(
        balance_kobo(&server, &rich.api_key).await,
        100_000_000 - 50_000
    );
    assert_eq!(balance_kobo(&server, &poor.api_key).await, 5_000);
    // Each account sees its own transaction under the shared reference.
    assert_eq!(
        status_by_reference(&server, &rich.api_key, &used).await["reference_code"],
        first["reference_code"]
    );
    assert_eq!(
        status_by_reference(&server, &poor.api_key, &used).await["reference_code"],
        other["reference_code"]
    );
    server.assert_ledger_consistent(&rich.account_id);
    server.assert_ledger_consistent(&poor.account_id);
}

#[tokio::test]
async fn a_used_reference_names_its_transaction_and_a_short_balance_says_both_amounts() {
    let server = TestServer::spawn().await;
    let c = server.customer("600");
    let key = c.api_key.as_str();
    let used = reference();
    let first = server
        .post(key, &Airtime.live(), Airtime.body(&used, "1234"))
        .await;
    let code = first.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    for path in [Airtime.live(), Airtime.test()] {
        let again = server.post(key, &path, Airtime.body(&used, "5678")).await;
        again.assert_error(422, "duplicate_reference");
        assert_eq!(again.body["reference_code"], json!(code), "{path}");
        assert_eq!(
            again.body["message"],
            format!(
                "Duplicate reference: this reference has already been used by transaction {code}"
            )
        );
    }
    // ₦100 left, ₦500 needed: both said.
    let short = Airtime.body(&reference(), "1234");
    for path in [Airtime.live(), Airtime.test()] {
        let r = server.post(key, &path, short.clone()).await;
        r.assert_error(422, "insufficient_balance");
        assert_eq!(
            r.body["message"],
            "Insufficient wallet balance: the balance is 100.00 Naira \
             and this purchase needs 500.00 Naira",
            "{path}"
        );
        assert!(r.body.get("reference_code").is_none(), "{}", r.body);
    }
    assert_eq!(balance_kobo(&server, key).await, 10_000);
}

/// Airtime or data for a number whose prefix is another network's is money
/// lost: refused (live and test) unless the client says the number is ported.
/// A prefix the table does not know passes.
#[tokio::test]
async fn a_number_of_another_network_is_refused_unless_ported() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let key = c.api_key.as_str();
    let mtn_uuid = server.provider_id(key, "mtn").await;
    for kind in [Airtime, Data] {
        let before = balance_kobo(&server, key).await;
        let sold_before = transactions(&server, &c.account_id, None).len();
        let mtn = kind.body(&reference(), "1234");
        let glo_number = with(&mtn, "phone", json!("+234 805 123 4567"));
        for body in [
            glo_number.clone(),
            with(&glo_number, "provider_id", json!(mtn_uuid)),
            with(&glo_number, "ported", json!(false)),
        ] {
            for path in [kind.live(), kind.test()] {
                let r = server.post(key, &path, body.clone()).await;
                r.assert_refusal("validation_error", "phone", &format!("{body} to {path}"));
                assert_eq!(
                    r.body["message"],
                    "phone: another network's number: 08051234567 belongs to Glo, not MTN; \
                     if it was ported to MTN, send \"ported\": true"
                );
            }
        }
        assert_eq!(balance_kobo(&server, key).await, before);
        let sold = transactions(&server, &c.account_id, None).len();
        assert_eq!(sold, sold_before, "nothing recorded");

        // Said to be ported: sold, live and test.
        let ported = with(&glo_number, "ported", json!(true));
        server
            .post(key, &kind.test(), ported.clone())
            .await
            .assert_ok();
        let sold = server.post(key, &kind.live(), ported).await;
        assert_eq!(sold.assert_ok()["status"], json!(true));
        // A prefix not in the table (no network known) passes.
        let unknown = with(&mtn, "phone", json!("08001234567"));
        let unknown = with(&unknown, "reference", json!(reference()));
        server.post(key, &kind.test(), unknown).await.assert_ok();
    }
    // Glo's own number to Glo is sold.
    let glo = with(
        &with(
            &Airtime.body(&reference(), "1234"),
            "provider_id",
            json!("glo"),
        ),
        "phone",
        json!("08051234567"),
    );
    server.post(key, &Airtime.test(), glo).await.assert_ok();
}
