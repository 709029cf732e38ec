//! Referrals (issue 49), through the real binary on the test backend and the
//! kit's fake VTpass (so a sale can fail and be reversed): A shares the
//! sign-up link from `GET /v1/referrals`, B signs up through it; B's
//! successful purchase earns A the exact percent, B's failed one nothing,
//! and VTpass reversing the successful one takes it back; moves of the bonus
//! raced with one reference move once; C, a second email with A's phone,
//! earns A nothing and the owner sees why. `billpay audit` runs when each
//! test ends (the kit's `Drop`).

use crate::dashboard::sign_up::{OPEN, text_rows};
use crate::dashboard::{csrf_in, no_redirects};
use crate::support::vtpass::FakeVtpass;
use crate::support::{Customer, TestServer, rand_suffix, reference};
use crate::vtpass::{buy, server_with};
use billpay_api_testkit::kind::kobo;
use serde_json::{Value, json};

const PASSWORD: &str = "correct horse battery";

/// Signs up over HTTP through `page` (the sign-up page, or a referrer's
/// link, whose code the form shows), then — as the email's code and the
/// owner's CLI would — verifies the address, gives the account a key and
/// funds it. The customer, and the form's referral field as shown.
pub(crate) async fn signed_up(
    server: &TestServer,
    page: &str,
    email: &str,
    phone: &str,
    naira: &str,
) -> (Customer, String) {
    let http = no_redirects();
    let shown = http.get(server.url(page)).send().await.unwrap();
    assert_eq!(shown.status(), 200, "{page}");
    let cookie = shown.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let html = shown.text().await.unwrap();
    let csrf = csrf_in(&html);
    let referral = html
        .split("id=\"referral\" value=\"")
        .nth(1)
        .or_else(|| {
            html.split("name=\"referral\" id=\"referral\" value=\"")
                .nth(1)
        })
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .unwrap_or_default();
    let fields = [
        ("name", "Ada Obi"),
        ("email", email),
        ("phone", phone),
        ("password", PASSWORD),
        ("password_again", PASSWORD),
        ("referral", referral.as_str()),
        ("csrf", csrf.as_str()),
    ];
    let answer = http
        .post(server.url("/dashboard/signup"))
        .header("Cookie", cookie)
        .form(&fields)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "{}", answer.text().await.unwrap());
    let sql = "SELECT id FROM accounts WHERE lower(email) = lower($1)";
    let id = text_rows(server, sql, email).await[0][0].clone().unwrap();
    let verified = format!(
        "UPDATE accounts SET email_verified_at = '2026-01-01T00:00:00.000+00:00' WHERE id = '{id}'"
    );
    server.raw_sql(&verified, &verified).await;
    if naira != "0" {
        let fund = format!("fund-{}", rand_suffix());
        server.cli(&[
            "wallet",
            "credit",
            "--account",
            &id,
            "--amount",
            naira,
            "--reference",
            &fund,
        ]);
    }
    let key = server.cli(&["key", "create", "--account", &id]);
    let customer = Customer {
        account_id: id,
        key_id: key["key_id"].as_str().unwrap().to_owned(),
        api_key: key["api_key"].as_str().unwrap().to_owned(),
    };
    (customer, referral)
}

pub(crate) fn email() -> String {
    format!("r{}@example.com", rand_suffix())
}

fn airtime(phone: &str) -> Value {
    json!({ "provider_id": "mtn", "amount": 1000, "phone": phone })
}

async fn referrals(server: &TestServer, who: &Customer) -> Value {
    server
        .get(&who.api_key, "/v1/referrals")
        .await
        .assert_ok()
        .clone()
}

async fn withdraw(
    server: &TestServer,
    who: &Customer,
    amount: f64,
    reference: &str,
) -> crate::support::Reply {
    let body = json!({ "amount": amount, "reference": reference });
    server
        .post(&who.api_key, "/v1/referrals/withdraw", body)
        .await
}

/// Posts VTpass's callback for the sale to `number`.
async fn callback(server: &TestServer, fake: &FakeVtpass, number: &str) {
    let request_id = &fake.request_ids_for(number)[0];
    let answer = server
        .http
        .post(server.url("/callbacks/vtpass"))
        .json(&fake.callback_body(request_id))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
}

#[tokio::test]
async fn a_referee_through_the_link_earns_the_exact_percent_and_a_failure_or_reversal_nothing() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &OPEN).await;
    server.cli(&[
        "referrals",
        "set",
        "--product",
        "airtime",
        "--percent",
        "1.5",
    ]);
    let shown = server.cli(&["referrals", "show"]);
    assert_eq!(shown["rates"][0]["percent"], 1.5, "{shown}");

    let (a, _) = signed_up(&server, "/dashboard/signup", &email(), "08031110001", "0").await;
    let mine = referrals(&server, &a).await;
    let code = mine["code"].as_str().unwrap().to_owned();
    assert_eq!(code.len(), 7);
    assert!(!code.contains(['0', 'O', '1', 'I']), "{code}");
    let link = mine["link"].as_str().unwrap();
    assert_eq!(
        link,
        server.url(&format!("/dashboard/signup?ref={code}")),
        "a whole link, on the address customers reach"
    );

    // B signs up through A's link (the code typed in lower case reads the same)
    let lower = format!("/dashboard/signup?ref={}", code.to_lowercase());
    let (b, typed) = signed_up(&server, &lower, &email(), "08031110002", "5000").await;
    assert_eq!(typed, code, "the form shows the link's code");
    let mine = referrals(&server, &a).await;
    assert_eq!(mine["referees_count"], 1);
    assert_eq!(mine["referees"][0]["name"], "A** O**", "masked");
    assert_eq!(mine["referees"][0]["state"], "earning");

    // a successful ₦1,000 purchase: 1.5 % = ₦15.00 exactly
    let ok_phone = "08033330001";
    let ok = buy(&server, &b, "airtime", airtime(ok_phone)).await;
    assert_eq!(
        server.wait_final(&b.api_key, &ok).await["status"],
        "successful"
    );
    let mine = referrals(&server, &a).await;
    assert_eq!(kobo(&mine["earned"]), 1_500);
    assert_eq!(kobo(&mine["bonus_balance"]), 1_500);
    assert_eq!(mine["history"][0]["kind"], "commission");
    assert_eq!(
        server.balance(&a.api_key).await,
        0.0,
        "never in the wallet by itself"
    );

    // a failed one: nothing
    let failed = buy(&server, &b, "airtime", airtime("08000000016")).await;
    assert_eq!(
        server.wait_final(&b.api_key, &failed).await["status"],
        "failed"
    );
    assert_eq!(kobo(&referrals(&server, &a).await["earned"]), 1_500);

    // VTpass reverses the successful one: the commission is taken back
    fake.reverse(ok_phone);
    callback(&server, &fake, ok_phone).await;
    let path = format!("/v1/transaction/status?reference_code={ok}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let status = server.get(&b.api_key, &path).await;
        if status.assert_ok()["status"] == "failed" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never reversed: {}",
            status.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let mine = referrals(&server, &a).await;
    assert_eq!(kobo(&mine["earned"]), 0);
    assert_eq!(kobo(&mine["bonus_balance"]), 0);
    let kinds: Vec<&str> = mine["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["reversal", "commission"]);
    // B's own bonus never moved, and the test purchases earn nothing
    let test = json!({ "provider_id": "mtn", "amount": 1000, "phone": "08031234567", "reference": reference() });
    server
        .post(&b.api_key, "/v1/test/airtime/purchase", test)
        .await
        .assert_ok();
    assert_eq!(kobo(&referrals(&server, &b).await["bonus_balance"]), 0);
    assert_eq!(kobo(&referrals(&server, &a).await["earned"]), 0);
    let (passed, audit) = server.audit();
    assert!(passed, "{audit}");
}

#[tokio::test]
async fn moves_raced_with_one_reference_move_once_and_a_self_referral_earns_nothing() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &OPEN).await;
    server.cli(&[
        "referrals",
        "set",
        "--product",
        "airtime",
        "--percent",
        "10",
    ]);
    server.cli(&["referrals", "settings", "--min-withdrawal", "20"]);
    let (a, _) = signed_up(&server, "/dashboard/signup", &email(), "08031110011", "0").await;
    let code = referrals(&server, &a).await["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let link = format!("/dashboard/signup?ref={code}");
    let (b, _) = signed_up(&server, &link, &email(), "08031110012", "5000").await;
    for phone in ["08033330011", "08033330012"] {
        let code = buy(&server, &b, "airtime", airtime(phone)).await;
        assert_eq!(
            server.wait_final(&b.api_key, &code).await["status"],
            "successful"
        );
    }
    assert_eq!(kobo(&referrals(&server, &a).await["bonus_balance"]), 20_000);

    // nothing, below the owner's minimum, more than the balance: refused,
    // nothing moved
    withdraw(&server, &a, 0.0, &reference())
        .await
        .assert_error(422, "validation_error");
    let below = withdraw(&server, &a, 10.0, &reference()).await;
    below.assert_error(422, "minimum_amount");
    let said = below.body["message"].as_str().unwrap();
    assert!(said.contains("at least ₦20.00"), "{said}");
    let over = withdraw(&server, &a, 300.0, &reference()).await;
    over.assert_error(422, "insufficient_balance");
    let said = over.body["message"].as_str().unwrap();
    assert!(said.contains("bonus balance of ₦200.00"), "{said}");
    assert_eq!(server.balance(&a.api_key).await, 0.0);

    // ten moves with one reference: one moves, the others answer it
    let same = reference();
    let racers = (0..10).map(|_| withdraw(&server, &a, 150.0, &same));
    let answers = futures_util::future::join_all(racers).await;
    let mut moved = 0;
    for answer in &answers {
        let data = answer.assert_ok();
        assert_eq!(kobo(&data["bonus_balance"]), 5_000);
        assert_eq!(kobo(&data["balance"]), 15_000);
        moved += usize::from(data["repeated"] == false);
    }
    assert_eq!(moved, 1, "one of the ten moved");
    assert_eq!(server.balance(&a.api_key).await, 150.0);
    let other = withdraw(&server, &a, 20.0, &same).await;
    other.assert_error(422, "duplicate_reference");
    let said = other.body["message"].as_str().unwrap();
    assert!(said.contains("a new reference"), "{said}");
    server.assert_ledger_consistent(&a.account_id);

    // C: a second email with A's phone, through A's link: no commission
    let (c, _) = signed_up(&server, &link, &email(), "+234 803 111 0011", "5000").await;
    let code = buy(&server, &c, "airtime", airtime("08033330013")).await;
    assert_eq!(
        server.wait_final(&c.api_key, &code).await["status"],
        "successful"
    );
    let mine = referrals(&server, &a).await;
    assert_eq!(kobo(&mine["earned"]), 20_000, "nothing more earned");
    let states: Vec<&str> = mine["referees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["no commission", "earning"]);
    let sql = "SELECT matched FROM referrals WHERE referee_id = $1";
    let why = text_rows(&server, sql, &c.account_id).await[0][0]
        .clone()
        .unwrap();
    assert!(why.contains("the same phone"), "the owner sees why: {why}");

    // the owner voids B's referral: B's next purchase earns nothing
    server.cli(&[
        "referrals",
        "void",
        &b.account_id,
        "--reason",
        "same household",
    ]);
    let code = buy(&server, &b, "airtime", airtime("08033330014")).await;
    assert_eq!(
        server.wait_final(&b.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(kobo(&referrals(&server, &a).await["earned"]), 20_000);
    let shown = server.cli(&["referrals", "show"]);
    assert_eq!(
        shown["top_referrers"][0]["referrer_id"],
        a.account_id.as_str()
    );
    assert_eq!(kobo(&shown["top_referrers"][0]["cost"]), 20_000);
    let (passed, audit) = server.audit();
    assert!(passed, "{audit}");
}
