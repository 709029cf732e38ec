//! Purchases fulfilled by VTpass (`BILLPAY_SUPPLIER=vtpass`), against the
//! test kit's fake VTpass (support/vtpass.rs) written from VTpass's docs.


use serde_json::{Value, json};
use std::time::Duration;
use crate::support::receiver::Receiver;
use crate::support::vtpass::FakeVtpass;
use crate::support::{Customer, Options, TestServer, reference};

async fn server_with(fake: &FakeVtpass, extra: &[(&str, &str)]) -> TestServer {
    let env = fake.env();
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // Short enough that a slow VTpass counts as a timeout within the test.
    all.push(("BILLPAY_VTPASS_TIMEOUT_MS", "1000"));
    all.extend_from_slice(extra);
    TestServer::spawn_with_env(Options::default(), &all).await
}

/// Places a purchase and returns its reference code.
async fn buy(server: &TestServer, who: &Customer, product: &str, mut body: Value) -> String {
    body["reference"] = json!(reference());
    let accepted = server
        .post(&who.api_key, &format!("/v1/{product}/purchase"), body)
        .await;
    accepted.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Waits for `done` (failing the test after 30 s: something hangs).
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn meter(number: &str) -> Value {
    json!({ "provider_id": "ikeja-electric", "amount": 1000, "meter_number": number, "meter_type": 1 })
}

#[tokio::test]
async fn every_product_vtpass_sells_is_delivered() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("100000");
    let phone = "08011111111";
    // (product, body, what the status shows as `pin`: a token, two exam pins)
    let orders = [
        (
            "airtime",
            json!({ "provider_id": "9mobile", "amount": 100, "phone": phone }),
            None,
        ),
        (
            "data",
            json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": phone }),
            None,
        ),
        (
            "cable",
            json!({ "provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": "1212121212", "phone": phone }),
            None,
        ),
        ("electricity", meter("1111111111111"), Some(("-", 5))),
        (
            "electricity",
            json!({ "provider_id": "eko-electric", "amount": 2000, "meter_number": "1010101010101", "meter_type": 2 }),
            None,
        ),
        (
            "education",
            json!({ "provider_id": "waec", "quantity": 2, "phone": phone }),
            Some((",", 2)),
        ),
    ];
    for (product, body, pin) in orders {
        let code = buy(&server, &who, product, body).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "successful", "{product}: {status}");
        assert!(
            status.get("supplier").is_none(),
            "status JSON as before: {status}"
        );
        // The operator sees who served it and its reference there.
        let shown = &server.cli(&["transaction", "show", &code])["transaction"];
        assert_eq!(shown["supplier"], "vtpass", "{shown}");
        let request_id = shown["supplier_reference"].as_str().unwrap();
        assert!(request_id.ends_with(&code[2..]), "{request_id}");
        if let Some((separator, parts)) = pin {
            let pin = status["pin"].as_str().unwrap_or_default();
            assert_eq!(
                pin.split(separator).filter(|p| !p.is_empty()).count(),
                parts,
                "{status}"
            );
        }
    }
    // What VTpass received follows its docs.
    let calls = fake.pay_calls_for(phone);
    let services: Vec<&str> = calls
        .iter()
        .filter_map(|c| c["serviceID"].as_str())
        .collect();
    assert_eq!(services, ["etisalat", "mtn-data", "waec"]);
    assert_eq!(calls[1]["variation_code"], "mtn-sme-1gb");
    assert!(calls.iter().all(|c| {
        c["request_id"].as_str().unwrap()[..12]
            .bytes()
            .all(|b| b.is_ascii_digit())
    }));
    let cable = &fake.pay_calls_for("1212121212")[0];
    assert_eq!(
        (
            cable["serviceID"].as_str(),
            cable["subscription_type"].as_str()
        ),
        (Some("dstv"), Some("change"))
    );
    assert_eq!(
        fake.pay_calls_for("1010101010101")[0]["variation_code"],
        "postpaid"
    );

    // Verification goes to /api/merchant-verify.
    let found = server
        .post(&who.api_key, "/v1/electricity/verify", json!({ "provider_id": "ikeja-electric", "meter_number": "1111111111111", "meter_type": 1 }))
        .await;
    assert_eq!(found.assert_ok()["customer_name"], "TESTMETER1");
    server
        .post(
            &who.api_key,
            "/v1/cable/verify",
            json!({ "provider_id": "dstv", "smartcard_number": "7012345678" }),
        )
        .await
        .assert_error(422, "customer_not_found");

    // VTpass sells no betting: refused before any money moves.
    let before = server.balance(&who.api_key).await;
    let refused = server
        .post(&who.api_key, "/v1/bet/purchase", json!({ "provider_id": "bet9ja", "customer_id": "12345", "amount": 500, "reference": reference() }))
        .await;
    refused.assert_error(422, "invalid_provider");
    assert_eq!(server.balance(&who.api_key).await, before);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn unclear_answers_are_requeried_and_never_refunded() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("10000");
    // pending, a timeout, a dropped connection, an HTML page: VTpass sold
    // each once; we learn it by requery and charge the customer once.
    let numbers = [
        "201000000000",
        "300000000000",
        "400000000000",
        "500000000000",
    ];
    for number in numbers {
        let code = buy(&server, &who, "electricity", meter(number)).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "successful", "{number}: {status}");
        assert_eq!(fake.sales_for(number), 1, "{number}");
        assert_eq!(fake.pay_calls_for(number).len(), 1, "{number}: bought once");
    }
    assert!(fake.requery_calls() >= numbers.len());
    assert_eq!(server.balance(&who.api_key).await, 10_000.0 - 4.0 * 1000.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn definite_failures_and_reversals_refund_once() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let who = server.customer("5000");
    for number in ["08000000016", "08000000091", "08000000040"] {
        let body = json!({ "provider_id": "mtn", "amount": 1000, "phone": number });
        let code = buy(&server, &who, "airtime", body).await;
        let status = server.wait_final(&who.api_key, &code).await;
        assert_eq!(status["status"], "failed", "{number}: {status}");
        assert!(
            status["message"].as_str().unwrap().contains("refunded"),
            "{status}"
        );
    }
    assert_eq!(server.balance(&who.api_key).await, 5000.0);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn a_crash_while_vtpass_answers_ends_in_a_requery_not_a_second_purchase() {
    let fake = FakeVtpass::start().await;
    fake.set_slow(Duration::from_secs(3600));
    let mut server = server_with(&fake, &[("BILLPAY_VTPASS_TIMEOUT_MS", "60000")]).await;
    let who = server.customer("5000");
    let number = "300000000000";
    let code = buy(&server, &who, "electricity", meter(number)).await;
    // VTpass has the order (and sold it); we crash before recording its answer.
    until("VTpass has the order", || {
        !fake.pay_calls_for(number).is_empty()
    })
    .await;
    server.kill();
    server.start();
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "successful", "{status}");
    assert_eq!(fake.pay_calls_for(number).len(), 1, "never paid twice");
    assert!(fake.requery_calls() >= 1, "learnt by requery");
    assert_eq!(fake.sales_for(number), 1);
    assert_eq!(server.balance(&who.api_key).await, 4000.0);
}

#[test]
fn vtpass_without_its_keys_does_not_start_and_never_prints_a_key() {
    let secret = "SK_do-not-print-me";
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(crate::support::BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}/b.db", dir.path().display()))
        .env("BILLPAY_MASTER_KEY", crate::support::MASTER_KEY)
        .env("BILLPAY_SUPPLIER", "vtpass")
        .env("BILLPAY_VTPASS_SECRET_KEY", secret)
        .env("BILLPAY_VTPASS_PUBLIC_KEY", "PK_x")
        .env_remove("BILLPAY_VTPASS_API_KEY")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("BILLPAY_VTPASS_API_KEY"), "{said}");
    assert!(!said.contains(secret), "{said}");
}

/// Posts VTpass's callback for the sale of `number`; returns our answer.
async fn callback(server: &TestServer, fake: &FakeVtpass, number: &str) -> Value {
    let request_id = &fake.request_ids_for(number)[0];
    let answer = server
        .http
        .post(server.url("/callbacks/vtpass"))
        .json(&fake.callback_body(request_id))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    answer.json().await.unwrap()
}

#[tokio::test]
async fn a_reversal_after_success_refunds_once_and_sends_the_webhook_again() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let receiver = Receiver::start().await;
    let who = server.customer("5000");
    server.cli(&["key", "webhook", &who.key_id, "--url", &receiver.url("/ok")]);
    let number = "08033333333";
    let body = json!({ "provider_id": "mtn", "amount": 1000, "phone": number });
    let code = buy(&server, &who, "airtime", body).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(
        receiver.wait_for(&code, 1).await[0].json()["status"],
        "successful"
    );

    // A callback for a sale that stands changes nothing, however often it
    // comes (each is answered once its requery is done).
    let requeries = fake.requery_calls();
    for _ in 0..2 {
        assert_eq!(
            callback(&server, &fake, number).await,
            json!({"response": "success"})
        );
    }
    assert_eq!(
        fake.requery_calls(),
        requeries + 2,
        "each callback requeries"
    );
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(server.balance(&who.api_key).await, 4000.0);

    // VTpass reverses it: its callback makes us requery, refund once, and tell the client.
    fake.reverse(number);
    for _ in 0..3 {
        callback(&server, &fake, number).await;
    }
    let webhooks = receiver.wait_for(&code, 2).await;
    assert_eq!(
        webhooks[1].json()["status"],
        "failed",
        "{}",
        webhooks[1].json()
    );
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "failed", "{status}");
    // Once failed, later callbacks have nothing to ask.
    assert_eq!(fake.requery_calls(), requeries + 3);
    assert_eq!(server.balance(&who.api_key).await, 5000.0, "refunded once");
    server.assert_ledger_consistent(&who.account_id);

    // A callback about nothing of ours is answered and ignored.
    let answer = server
        .http
        .post(server.url("/callbacks/vtpass"))
        .json(&json!({"type": "transaction-update", "data": {"requestId": "202601010000nope"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer.json::<Value>().await.unwrap(),
        json!({"response": "success"})
    );
}

// Multi-threaded: the fake VTpass answers while a blocking CLI call waits on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_too_long_needs_review_and_the_operator_resolves_it_once() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[("BILLPAY_NEEDS_REVIEW_AFTER_SECS", "0")]).await;
    let who = server.customer("5000");
    let never_clear = "209000000000";
    let to_fail = buy(&server, &who, "electricity", meter(never_clear)).await;
    let to_succeed = buy(&server, &who, "electricity", meter(never_clear)).await;
    until("both requeried", || fake.requery_calls() >= 2).await;
    // Requeried, still unknown: processing (debited), flagged, never refunded on a guess.
    let status = server
        .get(
            &who.api_key,
            &format!("/v1/transaction/status?reference_code={to_fail}"),
        )
        .await;
    assert_eq!(status.assert_ok()["status"], "processing");
    assert_eq!(server.balance(&who.api_key).await, 3000.0);
    let flagged = server.cli(&["transaction", "list", "--needs-review"]);
    let codes: Vec<&str> = flagged["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["code"].as_str())
        .collect();
    assert!(
        codes.contains(&to_fail.as_str()) && codes.contains(&to_succeed.as_str()),
        "{flagged}"
    );
    assert_eq!(
        server.cli(&["transaction", "show", &to_fail])["needs_review"],
        true
    );

    // The operator decides: failed refunds once, successful refunds nothing.
    let resolved = server.cli(&["transaction", "resolve", &to_fail, "--failed"]);
    assert_eq!(resolved["status"], "failed", "{resolved}");
    let (ok, again) = server.cli_result(&["transaction", "resolve", &to_fail, "--successful"]);
    assert!(
        !ok && again.to_string().contains("already failed"),
        "{again}"
    );
    server.cli(&["transaction", "resolve", &to_succeed, "--successful"]);
    assert_eq!(
        server.wait_final(&who.api_key, &to_fail).await["status"],
        "failed"
    );
    assert_eq!(
        server.wait_final(&who.api_key, &to_succeed).await["status"],
        "successful"
    );
    assert_eq!(server.balance(&who.api_key).await, 4000.0);
    let flagged = server.cli(&["transaction", "list", "--needs-review"]);
    assert_eq!(flagged["transactions"], json!([]), "{flagged}");
    server.assert_ledger_consistent(&who.account_id);

    // The float at VTpass: ₦250,000 less what it sold us.
    let float = server.cli(&["supplier", "balance"]);
    assert_eq!(
        (float["balance"].as_f64(), float["low"].as_bool()),
        (Some(248_000.0), Some(false)),
        "{float}"
    );
    let float = server.cli(&["supplier", "balance", "--supplier-low-balance", "300000"]);
    assert_eq!(float["low"], true, "{float}");
}

#[tokio::test]
async fn the_sandbox_has_no_float() {
    let server = TestServer::spawn().await;
    let (ok, answer) = server.cli_result(&["supplier", "balance"]);
    assert!(
        !ok && answer.to_string().contains("BILLPAY_SUPPLIER=vtpass"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routes_fail_over_only_on_a_definite_failure() {
    let fake = FakeVtpass::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("billpay.toml");
    std::fs::write(
        &config,
        r#"
[routes]
airtime = ["vtpass", "sandbox"]
electricity = ["vtpass", "sandbox"]
"airtime.glo" = ["sandbox"]
betting = ["sandbox"]
"#,
    )
    .unwrap();
    let server = server_with(&fake, &[("BILLPAY_CONFIG", config.to_str().unwrap())]).await;
    let who = server.customer("20000");
    let served_by = |code: &str| {
        let shown = server.cli(&["transaction", "show", code]);
        shown["transaction"]["supplier"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let airtime = |provider: &str, phone: &str| json!({ "provider_id": provider, "amount": 500, "phone": phone });

    // VTpass did not charge (091): the next supplier delivers.
    let not_charged = "08000000091";
    let code = buy(&server, &who, "airtime", airtime("mtn", not_charged)).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(served_by(&code), "sandbox");
    assert_eq!(fake.pay_calls_for(not_charged).len(), 1);
    assert_eq!(fake.sales_for(not_charged), 0);

    // A timeout is an unknown outcome: never sent elsewhere, settled by requery at VTpass.
    let slow = "300000000000";
    let code = buy(&server, &who, "electricity", meter(slow)).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(served_by(&code), "vtpass");
    assert_eq!(fake.sales_for(slow), 1);

    // Per provider, and products VTpass does not sell, go where the routes say.
    let glo = "08055555555";
    let code = buy(&server, &who, "airtime", airtime("glo", glo)).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(served_by(&code), "sandbox");
    assert!(fake.pay_calls_for(glo).is_empty());
    let bet = json!({ "provider_id": "bet9ja", "customer_id": "12345", "amount": 500 });
    let code = buy(&server, &who, "bet", bet).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(served_by(&code), "sandbox");

    // Data routes to VTpass alone: its definite failure is final and refunded.
    let data = json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": not_charged });
    let code = buy(&server, &who, "data", data).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "failed"
    );
    assert_eq!(served_by(&code), "vtpass");
    assert_eq!(
        server.balance(&who.api_key).await,
        20000.0 - 3.0 * 500.0 - 1000.0
    );
    server.assert_ledger_consistent(&who.account_id);
}

const SMALL_CATALOGUE: &str = r#"
[[providers]]
id = "6cb0f555-921c-4533-96c4-8a84af46714b"
slug = "mtn"
name = "MTN Nigeria"
type = "telco"
services = ["airtime", "data"]
active = true

[[providers]]
id = "7e5983d6-afe5-4ce0-a124-4d0cdf41deed"
slug = "dstv"
name = "DStv"
type = "cable"
services = ["cable"]
active = true

[[data_categories]]
id = "sme"
name = "SME"
provider = "mtn"

[[data_plans]]
plan_id = "mtn-1gb"
provider = "mtn"
category = "sme"
name = "MTN 1GB"
price = 600.0
duration = 7
active = true
vtpass_variation_code = "mtn-1gb-vt"

[[data_plans]]
plan_id = "mtn-2gb"
provider = "mtn"
category = "sme"
name = "MTN 2GB"
price = 1200.0
duration = 30
active = true

[[data_plans]]
plan_id = "mtn-old"
provider = "mtn"
category = "sme"
name = "MTN 3GB"
price = 1500.0
duration = 30
active = true

[[cable_plans]]
plan_id = "dstv-padi"
provider = "dstv"
name = "DStv Padi"
price = 4400.0
duration = 30
active = true
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalogue_codes_reach_vtpass_and_sync_shows_differences_before_applying() {
    let fake = FakeVtpass::start().await;
    let server = server_with(&fake, &[]).await;
    let file = server.path().join("small.toml");
    std::fs::write(&file, SMALL_CATALOGUE).unwrap();
    server.cli(&["catalogue", "import", file.to_str().unwrap()]);
    fake.set_variations(
        "mtn-data",
        &[
            ("mtn-1gb-vt", "MTN 1GB", "650.00"),
            ("mtn-2gb", "MTN 2GB", "1200.00"),
            ("mtn-5gb", "MTN 5GB", "2500.00"),
        ],
    );
    fake.set_variations("dstv", &[("dstv-padi", "DStv Padi", "4400.00")]);

    // A plan's vtpass_variation_code is what VTpass receives.
    let who = server.customer("5000");
    let phone = "08044444444";
    let data = json!({ "provider_id": "mtn", "plan_id": "mtn-1gb", "phone": phone });
    let code = buy(&server, &who, "data", data).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(fake.pay_calls_for(phone)[0]["variation_code"], "mtn-1gb-vt");

    // First the differences, nothing changed…
    let shown = server.cli(&["catalogue", "sync-vtpass"]);
    assert_eq!(shown["applied"], false);
    assert_eq!(
        shown["differences"],
        json!([
            {"kind": "price", "provider": "mtn", "plan_id": "mtn-1gb", "ours": 600.0, "vtpass": 650.0},
            {"kind": "new", "provider": "mtn", "variation_code": "mtn-5gb", "name": "MTN 5GB", "price": 2500.0},
            {"kind": "missing", "provider": "mtn", "plan_id": "mtn-old"},
        ]),
        "{shown}"
    );
    let plans = server
        .get(&who.api_key, "/v1/data-plans?provider=mtn")
        .await;
    assert!(plans.body.to_string().contains("mtn-old"), "{}", plans.body);

    // …then applied: VTpass's price, the missing plan off sale, the new one left to us.
    let applied = server.cli(&["catalogue", "sync-vtpass", "--apply"]);
    assert_eq!(applied["applied"], true, "{applied}");
    let exported = server.cli(&["catalogue", "export"])["catalogue"].clone();
    let plan = |id: &str| {
        exported["data_plans"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["plan_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(plan("mtn-1gb")["price"], 650.0);
    assert_eq!(plan("mtn-old")["active"], false);
    assert!(
        exported.to_string().contains("mtn-1gb-vt"),
        "the mapping is kept"
    );
    let again = server.cli(&["catalogue", "sync-vtpass"]);
    assert_eq!(
        again["differences"],
        json!([{"kind": "new", "provider": "mtn", "variation_code": "mtn-5gb", "name": "MTN 5GB", "price": 2500.0}])
    );
}

// Multi-threaded: the fake VTpass answers while this test reads the server's log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_float_is_logged_and_the_keys_never_are() {
    use std::io::{BufRead, BufReader};
    let fake = FakeVtpass::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(crate::support::BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
        .arg(format!("sqlite://{}/b.db", dir.path().display()))
        .env("BILLPAY_MASTER_KEY", crate::support::MASTER_KEY)
        .env("BILLPAY_LOG", "info")
        .envs(fake.env())
        .env("BILLPAY_SUPPLIER_LOW_BALANCE", "300000") // the fake holds ₦250,000
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let log = tokio::task::spawn_blocking(move || {
        let mut seen = String::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if line.contains("supplier balance is low") {
                break;
            }
        }
        seen
    });
    let log = tokio::time::timeout(Duration::from_secs(30), log).await;
    child.kill().unwrap();
    child.wait().unwrap();
    let log = log
        .expect("no low-balance warning: the server hangs")
        .unwrap();
    assert!(log.contains("supplier balance is low"), "{log}");
    for key in [
        crate::support::vtpass::API_KEY,
        crate::support::vtpass::SECRET_KEY,
        crate::support::vtpass::PUBLIC_KEY,
    ] {
        assert!(!log.contains(key), "a key in the log: {log}");
    }
}
