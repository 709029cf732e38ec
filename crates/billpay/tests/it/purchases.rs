//! The "purchases" issue end to end: every purchase endpoint (live and
//! `/test`), verification, the contract's 422 refusals, transaction status
//! and e-pin batches, concurrency, crash durability and the operator CLI,
//! all over real HTTP against a spawned `billpay serve`.


use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use crate::support::*;

// ---------------------------------------------------------------------------
// The seven products and the bodies the tests send
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Airtime,
    Data,
    Epin,
    Cable,
    Electricity,
    Education,
    Bet,
}

use Kind::*;

const ALL: [Kind; 7] = [Airtime, Data, Epin, Cable, Electricity, Education, Bet];
/// Products whose recipient ends in digits the sandbox reacts to (not e-pins).
const WITH_RECIPIENT: [Kind; 6] = [Airtime, Data, Cable, Electricity, Education, Bet];

impl Kind {
    fn path(self) -> &'static str {
        match self {
            Airtime => "airtime",
            Data => "data",
            Epin => "epin",
            Cable => "cable",
            Electricity => "electricity",
            Education => "education",
            Bet => "bet",
        }
    }

    fn live(self) -> String {
        format!("/v1/{}/purchase", self.path())
    }

    fn test(self) -> String {
        format!("/v1/test/{}/purchase", self.path())
    }

    fn event(self) -> String {
        format!("{}.purchase", self.path())
    }

    fn has_plan(self) -> bool {
        matches!(self, Data | Cable)
    }

    fn label_fields(self) -> (&'static str, &'static str) {
        if self.has_plan() {
            ("plan", "item")
        } else {
            ("item", "plan")
        }
    }

    fn provider(self) -> &'static str {
        match self {
            Airtime | Data => "mtn",
            Epin => "airtel",
            Cable => "dstv",
            Electricity => "ikeja-electric",
            Education => "waec",
            Bet => "bet9ja",
        }
    }

    /// The recipient of a body built with `tail` (e-pins have none: their
    /// recipient is the batch id the service makes up).
    fn recipient(self, tail: &str) -> Option<String> {
        match self {
            Airtime => Some(format!("0803123{tail}")),
            Data => Some(format!("0906555{tail}")),
            Epin => None,
            Cable => Some(format!("702345{tail}")),
            Electricity => Some(format!("4501234{tail}")),
            Education => Some(format!("0701234{tail}")),
            Bet => Some(format!("BJ-55{tail}")),
        }
    }

    /// A valid body; `tail` (4 digits) ends the recipient.
    fn body(self, reference: &str, tail: &str) -> Value {
        let r = self.recipient(tail);
        match self {
            Airtime => {
                json!({ "provider_id": "mtn", "phone": r, "amount": 500, "reference": reference })
            }
            Data => {
                json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": r, "reference": reference })
            }
            Epin => {
                json!({ "provider_id": "airtel", "denomination": 200, "quantity": 3, "reference": reference })
            }
            Cable => {
                json!({ "provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": r, "phone": "08051112222", "reference": reference })
            }
            Electricity => {
                json!({ "provider_id": "ikeja-electric", "amount": 1500.5, "meter_number": r, "meter_type": 1, "reference": reference })
            }
            Education => {
                json!({ "provider_id": "waec", "quantity": 2, "phone": r, "reference": reference })
            }
            Bet => {
                json!({ "provider_id": "bet9ja", "customer_id": r, "amount": 2500, "reference": reference })
            }
        }
    }

    fn required_fields(self) -> &'static [&'static str] {
        match self {
            Airtime => &["provider_id", "phone", "amount", "reference"],
            Data => &["provider_id", "plan_id", "phone", "reference"],
            Epin => &["provider_id", "denomination", "quantity", "reference"],
            Cable => &["provider_id", "plan_id", "smartcard_number", "reference"],
            Electricity => &[
                "provider_id",
                "amount",
                "meter_number",
                "meter_type",
                "reference",
            ],
            Education => &["provider_id", "quantity", "reference"],
            Bet => &["provider_id", "customer_id", "amount", "reference"],
        }
    }

    /// The type's own fields that the accepted response echoes (besides recipient).
    fn own_fields(self) -> &'static [&'static str] {
        match self {
            Airtime => &["phone"],
            Data => &["phone"],
            Epin => &["batch_id", "quantity"],
            Cable => &["smartcard_number"],
            Electricity => &["meter_number"],
            Education => &["quantity"],
            Bet => &["customer_id"],
        }
    }
}

/// What a purchase of a kind costs and how it is named, read from the
/// catalogue endpoints (prices come from the catalogue, never the client).
#[derive(Clone, Debug)]
struct Expect {
    amount: i64,
    /// The plan name (exact) or a part of the item name (the provider's name).
    label: String,
}

async fn expectations(server: &TestServer, key: &str) -> HashMap<Kind, Expect> {
    let providers = server.get(key, "/v1/providers").await.assert_ok().clone();
    let name = |slug: &str| {
        providers
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["slug"] == slug)
            .unwrap_or_else(|| panic!("no provider {slug} in {providers}"))["name"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let plans = server
        .get(key, "/v1/data-plans?provider=mtn")
        .await
        .assert_ok()
        .clone();
    let data_plan = plans
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_id"] == "mtn-sme-1gb")
        .expect("mtn-sme-1gb listed")
        .clone();
    let cable = server
        .get(key, "/v1/cable-plans?provider=dstv")
        .await
        .assert_ok()
        .clone();
    let cable_plan = cable
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_id"] == "dstv-padi")
        .expect("dstv-padi listed")
        .clone();
    let education = server
        .get(key, "/v1/providers/education")
        .await
        .assert_ok()
        .clone();
    let waec_price = kobo(
        &education
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["slug"] == "waec")
            .expect("waec listed")["price"],
    );
    let denominations = server
        .get(key, "/v1/recharge-pins/denominations?provider=airtel")
        .await
        .assert_ok()
        .clone();
    assert!(
        denominations
            .as_array()
            .unwrap()
            .iter()
            .any(|d| kobo(&d["denomination"]) == 20_000),
        "airtel sells 200 Naira e-pins: {denominations}"
    );
    HashMap::from([
        (
            Airtime,
            Expect {
                amount: 50_000,
                label: name("mtn"),
            },
        ),
        (
            Data,
            Expect {
                amount: kobo(&data_plan["price"]),
                label: data_plan["name"].as_str().unwrap().to_owned(),
            },
        ),
        (
            Epin,
            Expect {
                amount: 3 * 20_000,
                label: name("airtel"),
            },
        ),
        (
            Cable,
            Expect {
                amount: kobo(&cable_plan["price"]),
                label: cable_plan["name"].as_str().unwrap().to_owned(),
            },
        ),
        (
            Electricity,
            Expect {
                amount: 150_050,
                label: name("ikeja-electric"),
            },
        ),
        (
            Education,
            Expect {
                amount: 2 * waec_price,
                label: name("waec"),
            },
        ),
        (
            Bet,
            Expect {
                amount: 250_000,
                label: name("bet9ja"),
            },
        ),
    ])
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

/// A JSON amount of Naira as kobo.
fn kobo(v: &Value) -> i64 {
    (v.as_f64().unwrap_or_else(|| panic!("not a number: {v}")) * 100.0).round() as i64
}

fn with(body: &Value, field: &str, value: Value) -> Value {
    let mut b = body.clone();
    b[field] = value;
    b
}

fn without(body: &Value, field: &str) -> Value {
    let mut b = body.clone();
    b.as_object_mut().unwrap().remove(field);
    b
}

fn str_of(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_owned()
}

/// ISO 8601 / RFC 3339 with an explicit offset.
fn assert_timestamp(v: &Value) {
    let s = v.as_str().unwrap_or_else(|| panic!("not a timestamp: {v}"));
    let b = s.as_bytes();
    let offset_ok = s.ends_with('Z') || {
        let t = &b[b.len().saturating_sub(6)..];
        t.len() == 6 && (t[0] == b'+' || t[0] == b'-') && t[3] == b':'
    };
    assert!(
        b.len() >= 20
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && offset_ok,
        "not ISO 8601 with offset: {s}"
    );
}

fn all_digits(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit())
}

/// Electricity token: 20 digits as five groups of four joined by '-'.
fn assert_token(pin: &Value) {
    let token = str_of(pin);
    let groups: Vec<&str> = token.split('-').collect();
    assert!(
        groups.len() == 5 && groups.iter().all(|g| all_digits(g, 4)),
        "bad electricity token {token}"
    );
}

/// Exam pins: 12 digits each (several pins are comma-separated).
fn assert_exam_pins(pin: &Value, quantity: usize) {
    let pins = str_of(pin);
    let parts: Vec<&str> = pins.split(',').collect();
    assert_eq!(parts.len(), quantity, "pins {pins}");
    assert!(
        parts.iter().all(|p| all_digits(p, 12)),
        "bad exam pins {pins}"
    );
}

async fn status_by_code(server: &TestServer, key: &str, code: &str) -> Value {
    server
        .get(
            key,
            &format!("/v1/transaction/status?reference_code={code}"),
        )
        .await
        .assert_ok()
        .clone()
}

async fn status_by_reference(server: &TestServer, key: &str, reference: &str) -> Value {
    server
        .get(
            key,
            &format!("/v1/transaction/status?reference={reference}"),
        )
        .await
        .assert_ok()
        .clone()
}

/// Checks the accepted response of a live purchase and returns it.
fn assert_accepted(
    d: &Value,
    kind: Kind,
    reference: &str,
    tail: &str,
    expect: &Expect,
    before: i64,
) -> Value {
    assert_eq!(d["status"], true, "{kind:?}: {d}");
    assert_eq!(d["message"], "Transaction is processing", "{d}");
    assert!(
        d["reference_code"].as_str().is_some_and(|c| !c.is_empty()),
        "{d}"
    );
    assert_eq!(d["reference"], reference, "{d}");
    assert_eq!(kobo(&d["amount"]), expect.amount, "{kind:?} amount: {d}");
    assert_eq!(kobo(&d["balance_before"]), before, "{kind:?}: {d}");
    assert_eq!(
        kobo(&d["balance_after"]),
        before - expect.amount,
        "{kind:?}: {d}"
    );
    let (label, other) = kind.label_fields();
    let shown = str_of(&d[label]);
    if kind.has_plan() {
        assert_eq!(shown, expect.label, "{d}");
    } else {
        assert!(shown.contains(&expect.label), "{kind:?} item {shown}: {d}");
    }
    assert!(d.get(other).is_none_or(Value::is_null), "{d}");
    for field in kind.own_fields() {
        assert!(
            d.get(*field).is_some_and(|v| !v.is_null()),
            "{kind:?} accepted response lacks {field}: {d}"
        );
    }
    match kind.recipient(tail) {
        Some(recipient) => assert_eq!(d["recipient"], recipient.as_str(), "{d}"),
        None => {
            let batch = str_of(&d["batch_id"]);
            assert!(!batch.is_empty());
            assert_eq!(
                d["recipient"],
                batch.as_str(),
                "e-pin recipient is the batch: {d}"
            );
        }
    }
    match kind {
        Airtime | Data => assert_eq!(d["phone"], d["recipient"]),
        Cable => assert_eq!(d["smartcard_number"], d["recipient"]),
        Electricity => assert_eq!(d["meter_number"], d["recipient"]),
        Bet => assert_eq!(d["customer_id"], d["recipient"]),
        Epin => assert_eq!(d["quantity"], 3),
        Education => assert_eq!(d["quantity"], 2),
    }
    d.clone()
}

/// Checks a transaction status record against its accepted response.
fn assert_status_record(s: &Value, accepted: &Value, kind: Kind, status: &str) {
    assert_eq!(s["reference_code"], accepted["reference_code"], "{s}");
    assert_eq!(s["reference"], accepted["reference"], "{s}");
    assert_eq!(s["event"], kind.event(), "{s}");
    assert_eq!(s["status"], status, "{kind:?}: {s}");
    assert!(s["message"].as_str().is_some_and(|m| !m.is_empty()), "{s}");
    assert_eq!(kobo(&s["amount"]), kobo(&accepted["amount"]), "{s}");
    assert_eq!(s["recipient"], accepted["recipient"], "{s}");
    let (label, other) = kind.label_fields();
    assert_eq!(s[label], accepted[label], "{s}");
    assert!(s.get(other).is_none_or(Value::is_null), "{s}");
    assert_eq!(
        kobo(&s["balance_before"]),
        kobo(&accepted["balance_before"])
    );
    assert_eq!(kobo(&s["balance_after"]), kobo(&accepted["balance_after"]));
    assert_timestamp(&s["created_at"]);
    assert!(
        s.as_object().unwrap().contains_key("completed_at"),
        "completed_at always present: {s}"
    );
    if status == "processing" {
        assert!(s["completed_at"].is_null(), "processing: {s}");
    } else {
        assert_timestamp(&s["completed_at"]);
    }
    if kind == Epin {
        assert_eq!(s["batch_id"], accepted["batch_id"], "{s}");
    }
    match (kind, status) {
        (Electricity, "successful") => assert_token(&s["pin"]),
        (Education, "successful") => {
            assert_exam_pins(&s["pin"], accepted["quantity"].as_u64().unwrap() as usize)
        }
        (Electricity | Education, _) => {
            assert!(s.get("pin").is_none_or(Value::is_null), "no pin yet: {s}")
        }
        _ => {}
    }
}

/// Both lookups (code and client reference) give the same record in `status`.
async fn assert_status_both(
    server: &TestServer,
    key: &str,
    accepted: &Value,
    kind: Kind,
    status: &str,
) -> Value {
    let code = str_of(&accepted["reference_code"]);
    let reference = str_of(&accepted["reference"]);
    let by_code = status_by_code(server, key, &code).await;
    assert_status_record(&by_code, accepted, kind, status);
    let by_ref = status_by_reference(server, key, &reference).await;
    assert_status_record(&by_ref, accepted, kind, status);
    by_code
}

/// Polls `--json` output of the CLI until `done` holds (deadline 10 s).
async fn cli_until(server: &TestServer, args: &[&str], done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let value = server.cli(args);
        if done(&value) {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "billpay {args:?} never settled: {value}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An account's webhook events once all `count` exist and none is pending.
async fn settled_events(server: &TestServer, account: &str, count: usize) -> Vec<Value> {
    let list = cli_until(
        server,
        &["webhook", "list", "--account", account, "--limit", "1000"],
        |v| {
            let events = v["events"].as_array().unwrap();
            events.len() >= count && events.iter().all(|e| e["event"]["status"] != "pending")
        },
    )
    .await;
    let events = list["events"].as_array().unwrap().clone();
    assert_eq!(events.len(), count, "one event per transaction: {list}");
    events
}

fn transactions(server: &TestServer, account: &str, status: Option<&str>) -> Vec<Value> {
    let mut args = vec![
        "transaction",
        "list",
        "--account",
        account,
        "--limit",
        "1000",
    ];
    if let Some(status) = status {
        args.extend(["--status", status]);
    }
    server.cli(&args)["transactions"]
        .as_array()
        .unwrap()
        .clone()
}

/// The ledger entries of one transaction: (kind, signed kobo).
fn ledger_of(statement: &Value, code: &str) -> Vec<(String, i64)> {
    statement["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["transaction_code"] == code)
        .map(|e| (str_of(&e["kind"]), kobo(&e["amount"])))
        .collect()
}

async fn balance_kobo(server: &TestServer, key: &str) -> i64 {
    (server.balance(key).await * 100.0).round() as i64
}

/// Sends all requests at once; replies in the order given.
async fn post_all(server: &TestServer, key: &str, requests: Vec<(String, Value)>) -> Vec<Reply> {
    let mut set = tokio::task::JoinSet::new();
    let count = requests.len();
    for (i, (path, body)) in requests.into_iter().enumerate() {
        let request = server
            .http
            .post(server.url(&path))
            .bearer_auth(key)
            .json(&body);
        set.spawn(async move { (i, reply(request.send().await.unwrap()).await) });
    }
    let mut out: Vec<Option<Reply>> = (0..count).map(|_| None).collect();
    while let Some(done) = set.join_next().await {
        let (i, r) = done.unwrap();
        out[i] = Some(r);
    }
    out.into_iter().map(Option::unwrap).collect()
}

fn assert_test_reply(d: &Value, sent: &Value, would_deduct: i64, balance: i64) {
    assert_eq!(d["test_mode"], true, "{d}");
    let message = str_of(&d["message"]).to_lowercase();
    assert!(
        message.contains("nothing") && message.contains("deduct"),
        "test message says nothing was deducted: {d}"
    );
    assert_eq!(&d["request"], sent, "request echo");
    assert_eq!(kobo(&d["would_deduct"]), would_deduct, "{d}");
    assert_eq!(kobo(&d["balance"]), balance, "{d}");
    assert!(d.get("reference_code").is_none(), "nothing recorded: {d}");
}

// ---------------------------------------------------------------------------
// 1. Success, live and test, for every product
// ---------------------------------------------------------------------------

#[tokio::test]
async fn every_product_succeeds_live_and_is_only_simulated_in_test_mode() {
    // A second of supplier latency keeps each purchase observably processing.
    let server = TestServer::spawn_with(Options {
        latency_ms: 1000,
        ..Default::default()
    })
    .await;
    let c = server.customer("200000");
    let expect = expectations(&server, &c.api_key).await;
    let start = balance_kobo(&server, &c.api_key).await;
    assert_eq!(start, 20_000_000);

    // Test mode first, with the references the live purchases will use.
    let references: HashMap<Kind, String> = ALL.iter().map(|k| (*k, reference())).collect();
    for kind in ALL {
        let body = kind.body(&references[&kind], "1234");
        let d = server
            .post(&c.api_key, &kind.test(), body.clone())
            .await
            .assert_ok()
            .clone();
        assert_test_reply(&d, &body, expect[&kind].amount, start);
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, start);
    assert!(transactions(&server, &c.account_id, None).is_empty());
    for kind in ALL {
        server
            .get(
                &c.api_key,
                &format!("/v1/transaction/status?reference={}", references[&kind]),
            )
            .await
            .assert_error(404, "not_found");
    }

    // Live: the same references are still unused.
    let mut accepted = Vec::new();
    let mut balance = start;
    for kind in ALL {
        let reference = &references[&kind];
        let r = server
            .post(&c.api_key, &kind.live(), kind.body(reference, "1234"))
            .await;
        let d = assert_accepted(
            r.assert_ok(),
            kind,
            reference,
            "1234",
            &expect[&kind],
            balance,
        );
        balance -= expect[&kind].amount;
        // Right after acceptance: processing, by code and by reference.
        assert_status_both(&server, &c.api_key, &d, kind, "processing").await;
        if kind == Epin {
            let batch = server
                .get(
                    &c.api_key,
                    &format!("/v1/epin/batch?batch_id={}", str_of(&d["batch_id"])),
                )
                .await
                .assert_ok()
                .clone();
            assert_eq!(batch["status"], "processing", "{batch}");
            assert_eq!(batch["pins"], json!([]), "no pins before success: {batch}");
        }
        accepted.push((kind, d));
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, balance);

    // All reach `successful`.
    let mut finals = HashMap::new();
    for (kind, d) in &accepted {
        let code = str_of(&d["reference_code"]);
        server.wait_final(&c.api_key, &code).await;
        let s = assert_status_both(&server, &c.api_key, d, *kind, "successful").await;
        finals.insert(code, s);
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, balance);
    let statement = server.assert_ledger_consistent(&c.account_id);
    for (kind, d) in &accepted {
        assert_eq!(
            ledger_of(&statement, d["reference_code"].as_str().unwrap()),
            vec![("debit".to_owned(), -expect[kind].amount)],
            "one debit, no refund"
        );
    }

    // The e-pin batch: three pins, only the contract's fields.
    let (_, epin) = accepted.iter().find(|(k, _)| *k == Epin).unwrap();
    let batch = server
        .get(
            &c.api_key,
            &format!("/v1/epin/batch?batch_id={}", str_of(&epin["batch_id"])),
        )
        .await
        .assert_ok()
        .clone();
    assert_eq!(batch["batch_id"], epin["batch_id"]);
    assert_eq!(batch["status"], "successful");
    assert_eq!(batch["provider"], "airtel");
    assert_eq!(kobo(&batch["denomination"]), 20_000);
    assert_eq!(batch["quantity"], 3);
    let pins = batch["pins"].as_array().unwrap();
    assert_eq!(pins.len(), 3, "{batch}");
    for pin in pins {
        let fields: Vec<&String> = pin.as_object().unwrap().keys().collect();
        assert_eq!(fields.len(), 3, "only serial, pin, expires_on: {pin}");
        assert!(!str_of(&pin["serial"]).is_empty());
        assert!(!str_of(&pin["pin"]).is_empty());
        let expires = str_of(&pin["expires_on"]);
        let b = expires.as_bytes();
        assert!(
            b.len() == 10 && b[4] == b'-' && b[7] == b'-',
            "expires_on is YYYY-MM-DD: {expires}"
        );
    }

    // CLI: show by code and by reference, list with and without a status filter.
    for (kind, d) in &accepted {
        let code = str_of(&d["reference_code"]);
        for key in [code.clone(), str_of(&d["reference"])] {
            let shown = server.cli(&["transaction", "show", &key]);
            let tx = &shown["transaction"];
            assert_eq!(tx["code"], code.as_str(), "{shown}");
            assert_eq!(tx["status"], "successful");
            assert_eq!(tx["supplier"], "sandbox");
            assert_eq!(tx["reference"], d["reference"]);
            assert_eq!(tx["account_id"], c.account_id.as_str());
            assert_eq!(tx["recipient"], d["recipient"]);
            assert_eq!(kobo(&tx["amount"]), expect[kind].amount);
            assert_eq!(
                tx["product"],
                if *kind == Bet { "betting" } else { kind.path() }
            );
        }
    }
    let listed = transactions(&server, &c.account_id, None);
    assert_eq!(listed.len(), 7);
    assert_eq!(
        transactions(&server, &c.account_id, Some("successful")).len(),
        7
    );
    assert!(transactions(&server, &c.account_id, Some("failed")).is_empty());
    assert!(transactions(&server, &c.account_id, Some("processing")).is_empty());

    // One webhook event each (no URL configured: skipped), carrying the final state.
    let events = settled_events(&server, &c.account_id, 7).await;
    for (kind, d) in &accepted {
        let code = str_of(&d["reference_code"]);
        let mine: Vec<&Value> = events
            .iter()
            .filter(|e| e["event"]["transaction_code"] == code.as_str())
            .collect();
        assert_eq!(mine.len(), 1, "exactly one event for {code}");
        let event = &mine[0]["event"];
        assert_eq!(event["status"], "skipped", "{event}");
        assert_eq!(event["event"], kind.event());
        let payload: Value = serde_json::from_str(event["payload"].as_str().unwrap()).unwrap();
        let fin = &finals[&code];
        assert_eq!(payload["event"], kind.event());
        assert_eq!(payload["reference"], d["reference"]);
        assert_eq!(payload["reference_code"], code.as_str());
        assert_eq!(payload["status"], "successful");
        assert_eq!(payload["recipient"], d["recipient"]);
        assert_eq!(kobo(&payload["amount"]), expect[kind].amount);
        assert_eq!(payload["completed_at"], fin["completed_at"]);
        let (label, _) = kind.label_fields();
        assert_eq!(payload[label], d[label]);
        if matches!(kind, Electricity | Education) {
            assert_eq!(payload["pin"], fin["pin"], "webhook pin = status pin");
        }
        if *kind == Epin {
            assert_eq!(payload["batch_id"], d["batch_id"]);
        }
    }
}

// ---------------------------------------------------------------------------
// 2. Failure with refund (recipient ending 0000)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn failed_purchases_are_refunded_exactly_once() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let expect = expectations(&server, &c.api_key).await;
    let mut failed = Vec::new();
    for kind in WITH_RECIPIENT {
        let before = balance_kobo(&server, &c.api_key).await;
        let reference = reference();
        let r = server
            .post(&c.api_key, &kind.live(), kind.body(&reference, "0000"))
            .await;
        let d = assert_accepted(
            r.assert_ok(),
            kind,
            &reference,
            "0000",
            &expect[&kind],
            before,
        );
        let code = str_of(&d["reference_code"]);
        let done = server.wait_final(&c.api_key, &code).await;
        assert_eq!(done["status"], "failed", "{kind:?}: {done}");
        let s = assert_status_both(&server, &c.api_key, &d, kind, "failed").await;
        let message = str_of(&s["message"]).to_lowercase();
        assert!(message.contains("refunded"), "message says refunded: {s}");
        assert_eq!(
            balance_kobo(&server, &c.api_key).await,
            before,
            "{kind:?}: balance restored exactly"
        );
        failed.push((kind, d));
    }
    let statement = server.assert_ledger_consistent(&c.account_id);
    for (kind, d) in &failed {
        let amount = expect[kind].amount;
        let mut entries = ledger_of(&statement, d["reference_code"].as_str().unwrap());
        entries.sort();
        assert_eq!(
            entries,
            vec![("debit".into(), -amount), ("refund".into(), amount)],
            "{kind:?}: one debit and one refund"
        );
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, 10_000_000);

    // CLI views agree.
    assert_eq!(
        transactions(&server, &c.account_id, Some("failed")).len(),
        6
    );
    assert!(transactions(&server, &c.account_id, Some("successful")).is_empty());
    assert!(transactions(&server, &c.account_id, Some("processing")).is_empty());
    for (_, d) in &failed {
        let shown = server.cli(&["transaction", "show", d["reference"].as_str().unwrap()]);
        assert_eq!(shown["transaction"]["code"], d["reference_code"]);
        assert_eq!(shown["transaction"]["status"], "failed");
    }

    // One failed webhook event each, saying so.
    let events = settled_events(&server, &c.account_id, 6).await;
    for (_, d) in &failed {
        let event = events
            .iter()
            .find(|e| e["event"]["transaction_code"] == d["reference_code"])
            .expect("event for each failure");
        let payload: Value =
            serde_json::from_str(event["event"]["payload"].as_str().unwrap()).unwrap();
        assert_eq!(payload["status"], "failed");
        assert!(
            str_of(&payload["message"])
                .to_lowercase()
                .contains("refunded"),
            "{payload}"
        );
        assert!(payload.get("pin").is_none_or(Value::is_null), "{payload}");
    }
}

// ---------------------------------------------------------------------------
// 3. Pending, then successful on requery (recipient ending 1111)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn pending_purchases_stay_processing_until_the_requery() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let expect = expectations(&server, &c.api_key).await;
    let mut balance = balance_kobo(&server, &c.api_key).await;
    let mut pending = Vec::new();
    for kind in WITH_RECIPIENT {
        let reference = reference();
        // Measured from before the request: the purchase cannot be older.
        let sent_at = Instant::now();
        let r = server
            .post(&c.api_key, &kind.live(), kind.body(&reference, "1111"))
            .await;
        let d = assert_accepted(
            r.assert_ok(),
            kind,
            &reference,
            "1111",
            &expect[&kind],
            balance,
        );
        balance -= expect[&kind].amount;
        let code = str_of(&d["reference_code"]);
        // The supplier has answered "pending" once…
        let shown = cli_until(&server, &["transaction", "show", &code], |v| {
            v["transaction"]["attempts"].as_u64().unwrap() >= 1
        })
        .await;
        assert_eq!(shown["transaction"]["status"], "processing", "{shown}");
        // …and the API still says processing, with no completion time.
        assert_status_both(&server, &c.api_key, &d, kind, "processing").await;
        pending.push((kind, d, sent_at));
    }
    for (kind, d, sent_at) in &pending {
        let code = str_of(&d["reference_code"]);
        let done = server.wait_final(&c.api_key, &code).await;
        let waited = sent_at.elapsed();
        assert_eq!(done["status"], "successful", "{kind:?}: {done}");
        assert!(
            waited >= Duration::from_millis(950),
            "{kind:?} resolved by the requery about a second later, not at once ({waited:?})"
        );
        assert_status_both(&server, &c.api_key, d, *kind, "successful").await;
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, balance);
    let statement = server.assert_ledger_consistent(&c.account_id);
    for (kind, d, _) in &pending {
        assert_eq!(
            ledger_of(&statement, d["reference_code"].as_str().unwrap()),
            vec![("debit".to_owned(), -expect[kind].amount)]
        );
    }
    assert_eq!(
        transactions(&server, &c.account_id, Some("successful")).len(),
        6
    );
    settled_events(&server, &c.account_id, 6).await;
}

// ---------------------------------------------------------------------------
// 4. Verification, live and test
// ---------------------------------------------------------------------------

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
    // Providers by UUID, the 1111 rule (found), and the contract's refusals.
    let providers = server
        .get(&c.api_key, "/v1/providers")
        .await
        .assert_ok()
        .clone();
    let uuid = |slug: &str| {
        str_of(
            &providers
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["slug"] == slug)
                .unwrap()["id"],
        )
    };
    for prefix in ["/v1", "/v1/test"] {
        let d = server
            .post(
                &c.api_key,
                &format!("{prefix}/electricity/verify"),
                json!({ "provider_id": uuid("ikeja-electric"), "meter_number": "45012341111", "meter_type": 1 }),
            )
            .await
            .assert_ok()
            .clone();
        assert_eq!(d["provider"], "ikeja-electric");
        assert_eq!(d["meter_type"], 1);
        server
            .post(
                &c.api_key,
                &format!("{prefix}/cable/verify"),
                json!({ "provider_id": "mtn", "smartcard_number": "7023451234" }),
            )
            .await
            .assert_error(422, "invalid_provider");
        server
            .post(
                &c.api_key,
                &format!("{prefix}/bet/verify"),
                json!({ "provider_id": "nope", "customer_id": "x1" }),
            )
            .await
            .assert_error(422, "invalid_provider");
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
            let r = server
                .post(&c.api_key, &format!("{prefix}/{path}/verify"), body)
                .await;
            r.assert_error(422, "validation_error");
            assert!(
                str_of(&r.body["message"]).contains(field),
                "message names {field}: {}",
                r.body
            );
        }
    }
}

// ---------------------------------------------------------------------------
// 5. The 422 refusals: each changes nothing, live and test alike
// ---------------------------------------------------------------------------

/// Asserts the same 422 slug live and in test mode (and, for validation
/// errors, that the message names the field).
async fn refused(server: &TestServer, key: &str, kind: Kind, body: Value, slug: &str, field: &str) {
    for path in [kind.live(), kind.test()] {
        let r = server.post(key, &path, body.clone()).await;
        r.assert_error(422, slug);
        if slug == "validation_error" {
            assert!(
                str_of(&r.body["message"]).contains(field),
                "{path}: message names `{field}`: {} (sent {body})",
                r.body
            );
        }
    }
}

#[tokio::test]
async fn every_refusal_has_its_slug_and_changes_nothing() {
    let server = TestServer::spawn().await;
    let rich = server.customer("1000000");
    let key = rich.api_key.as_str();
    let start = balance_kobo(&server, key).await;
    // Every refusal below uses this reference; it must stay usable.
    let spare = reference();
    let base: HashMap<Kind, Value> = ALL.iter().map(|k| (*k, k.body(&spare, "1234"))).collect();

    // validation_error: each required field missing.
    for kind in ALL {
        for field in kind.required_fields() {
            refused(
                &server,
                key,
                kind,
                without(&base[&kind], field),
                "validation_error",
                field,
            )
            .await;
        }
    }
    // validation_error: wrong types.
    let wrong_types = [
        (Airtime, "amount", json!("500")),
        (Airtime, "phone", json!(8031231234_u64)),
        (Airtime, "provider_id", json!(5)),
        (Airtime, "reference", json!(12345678901_u64)),
        (Electricity, "meter_type", json!("1")),
        (Electricity, "amount", json!(true)),
        (Electricity, "meter_number", json!(45012341234_u64)),
        (Epin, "quantity", json!("2")),
        (Epin, "denomination", json!("200")),
        (Education, "quantity", json!(1.5)),
        (Data, "plan_id", json!(["mtn-sme-1gb"])),
        (Bet, "amount", json!(null)),
        (Cable, "smartcard_number", json!(7023451234_u64)),
    ];
    for (kind, field, value) in wrong_types {
        refused(
            &server,
            key,
            kind,
            with(&base[&kind], field, value),
            "validation_error",
            field,
        )
        .await;
    }
    // validation_error: amounts with 3 decimals, negative or NaN-like.
    for kind in [Airtime, Electricity, Bet] {
        for bad in [
            json!(1500.123),
            json!(-1500),
            json!(-0.5),
            json!("NaN"),
            json!(1000.001),
        ] {
            refused(
                &server,
                key,
                kind,
                with(&base[&kind], "amount", bad),
                "validation_error",
                "amount",
            )
            .await;
        }
    }
    // validation_error: phone numbers.
    for bad in [
        "12345",
        "0803123123",
        "080312312345",
        "01031231234",
        "+08031231234",
        "2358031231234",
        "0803123123a",
        "0803--1231234",
        "",
    ] {
        refused(
            &server,
            key,
            Airtime,
            with(&base[&Airtime], "phone", json!(bad)),
            "validation_error",
            "phone",
        )
        .await;
        refused(
            &server,
            key,
            Data,
            with(&base[&Data], "phone", json!(bad)),
            "validation_error",
            "phone",
        )
        .await;
    }
    refused(
        &server,
        key,
        Education,
        with(&base[&Education], "phone", json!("12345")),
        "validation_error",
        "phone",
    )
    .await;
    refused(
        &server,
        key,
        Cable,
        with(&base[&Cable], "phone", json!("0803")),
        "validation_error",
        "phone",
    )
    .await;
    // validation_error: references.
    for bad in [
        "abc1234".to_owned(),
        "x".repeat(101),
        "abcd efgh".to_owned(),
        "abcd\tefgh".to_owned(),
        "abcdefgh\u{7}".to_owned(),
        " abcdefgh".to_owned(),
        String::new(),
    ] {
        for kind in [Airtime, Electricity, Epin] {
            refused(
                &server,
                key,
                kind,
                with(&base[&kind], "reference", json!(bad)),
                "validation_error",
                "reference",
            )
            .await;
        }
    }
    // validation_error: meter type and number.
    for bad in [json!(0), json!(3), json!(-1), json!(256)] {
        refused(
            &server,
            key,
            Electricity,
            with(&base[&Electricity], "meter_type", bad),
            "validation_error",
            "meter_type",
        )
        .await;
    }
    for bad in [
        "12345abc".to_owned(),
        "1".repeat(21),
        String::new(),
        "4501 2341".to_owned(),
        "-4501234".to_owned(),
    ] {
        refused(
            &server,
            key,
            Electricity,
            with(&base[&Electricity], "meter_number", json!(bad)),
            "validation_error",
            "meter_number",
        )
        .await;
    }
    // validation_error: smartcard length and digits.
    for bad in [
        "12345".to_owned(),
        "1".repeat(21),
        "70234a1234".to_owned(),
        String::new(),
    ] {
        refused(
            &server,
            key,
            Cable,
            with(&base[&Cable], "smartcard_number", json!(bad)),
            "validation_error",
            "smartcard_number",
        )
        .await;
    }
    // validation_error: quantity out of range.
    for bad in [json!(0), json!(101), json!(-1)] {
        refused(
            &server,
            key,
            Epin,
            with(&base[&Epin], "quantity", bad),
            "validation_error",
            "quantity",
        )
        .await;
    }
    for bad in [json!(0), json!(11), json!(-3)] {
        refused(
            &server,
            key,
            Education,
            with(&base[&Education], "quantity", bad),
            "validation_error",
            "quantity",
        )
        .await;
    }
    // validation_error: a denomination the provider does not sell; customer id length.
    for bad in [json!(150), json!(200.5), json!(0), json!(-200)] {
        refused(
            &server,
            key,
            Epin,
            with(&base[&Epin], "denomination", bad),
            "validation_error",
            "denomination",
        )
        .await;
    }
    for bad in [String::new(), "x".repeat(41)] {
        refused(
            &server,
            key,
            Bet,
            with(&base[&Bet], "customer_id", json!(bad)),
            "validation_error",
            "customer_id",
        )
        .await;
    }
    // Not an object at all.
    for kind in [Airtime, Data] {
        for path in [kind.live(), kind.test()] {
            server
                .post(key, &path, json!([1, 2]))
                .await
                .assert_error(422, "validation_error");
        }
    }

    // invalid_provider: unknown, another service's, another service's UUID.
    let providers = server.get(key, "/v1/providers").await.assert_ok().clone();
    let uuid = |slug: &str| {
        str_of(
            &providers
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["slug"] == slug)
                .unwrap()["id"],
        )
    };
    let other_service = [
        (Airtime, "dstv"),
        (Data, "ikeja-electric"),
        (Epin, "dstv"),
        (Cable, "mtn"),
        (Electricity, "mtn"),
        (Education, "bet9ja"),
        (Bet, "waec"),
    ];
    for (kind, other) in other_service {
        for provider in [
            "nope".to_owned(),
            "MTN ".to_owned(),
            other.to_owned(),
            uuid(other),
            "00000000-0000-4000-8000-000000000000".to_owned(),
        ] {
            refused(
                &server,
                key,
                kind,
                with(&base[&kind], "provider_id", json!(provider)),
                "invalid_provider",
                "",
            )
            .await;
        }
    }

    // invalid_plan: unknown, another provider's, a plan of the wrong product.
    let airtel_plans = server
        .get(key, "/v1/data-plans?provider=airtel")
        .await
        .assert_ok()
        .clone();
    let airtel_plan = str_of(&airtel_plans[0]["plan_id"]);
    let gotv_plans = server
        .get(key, "/v1/cable-plans?provider=gotv")
        .await
        .assert_ok()
        .clone();
    let gotv_plan = str_of(&gotv_plans[0]["plan_id"]);
    for plan in ["mtn-nope", airtel_plan.as_str(), "dstv-padi", ""] {
        refused(
            &server,
            key,
            Data,
            with(&base[&Data], "plan_id", json!(plan)),
            "invalid_plan",
            "",
        )
        .await;
    }
    for plan in ["dstv-nope", gotv_plan.as_str(), "mtn-sme-1gb"] {
        refused(
            &server,
            key,
            Cable,
            with(&base[&Cable], "plan_id", json!(plan)),
            "invalid_plan",
            "",
        )
        .await;
    }

    // minimum_amount / maximum_amount at each product's limits; the limits themselves pass.
    for (kind, min, max) in [
        (Airtime, 50, 50_000),
        (Electricity, 1_000, 500_000),
        (Bet, 100, 500_000),
    ] {
        let below = min as f64 - 0.01;
        let above = max as f64 + 0.01;
        refused(
            &server,
            key,
            kind,
            with(&base[&kind], "amount", json!(below)),
            "minimum_amount",
            "",
        )
        .await;
        refused(
            &server,
            key,
            kind,
            with(&base[&kind], "amount", json!(0)),
            "minimum_amount",
            "",
        )
        .await;
        refused(
            &server,
            key,
            kind,
            with(&base[&kind], "amount", json!(above)),
            "maximum_amount",
            "",
        )
        .await;
        refused(
            &server,
            key,
            kind,
            with(&base[&kind], "amount", json!(max * 10)),
            "maximum_amount",
            "",
        )
        .await;
        for ok in [min, max] {
            let body = with(&base[&kind], "amount", json!(ok));
            let d = server
                .post(key, &kind.test(), body.clone())
                .await
                .assert_ok()
                .clone();
            assert_test_reply(&d, &body, ok * 100, start);
        }
    }
    // Boundaries of the other rules pass too (test mode, so nothing is spent).
    for (kind, field, ok) in [
        (Airtime, "reference", json!("abcdefgh")),
        (Airtime, "reference", json!("r".repeat(100))),
        (Electricity, "meter_number", json!("7")),
        (Electricity, "meter_number", json!("1".repeat(20))),
        (Electricity, "meter_type", json!(2)),
        (Cable, "smartcard_number", json!("702345")),
        (Cable, "smartcard_number", json!("7".repeat(20))),
        (Epin, "quantity", json!(1)),
        (Epin, "quantity", json!(100)),
        (Education, "quantity", json!(10)),
        (Bet, "customer_id", json!("x".repeat(40))),
        (Bet, "customer_id", json!("7")),
    ] {
        let body = with(&base[&kind], field, ok);
        server.post(key, &kind.test(), body).await.assert_ok();
    }

    // Operator switches: a disabled provider and a disabled plan.
    server.cli(&["provider", "disable", "glo"]);
    server.cli(&["plan", "disable", "mtn-sme-2gb"]);
    let glo_airtime = with(&base[&Airtime], "provider_id", json!("glo"));
    let disabled_plan = with(&base[&Data], "plan_id", json!("mtn-sme-2gb"));
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        // Polled in test mode, which never spends anything.
        let p = server.post(key, &Airtime.test(), glo_airtime.clone()).await;
        let q = server.post(key, &Data.test(), disabled_plan.clone()).await;
        if p.status == 422 && q.status == 422 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "disabling took effect within 3 s: {} {}",
            p.body,
            q.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    refused(
        &server,
        key,
        Airtime,
        glo_airtime.clone(),
        "invalid_provider",
        "",
    )
    .await;
    refused(
        &server,
        key,
        Airtime,
        with(&glo_airtime, "provider_id", json!(uuid("glo"))),
        "invalid_provider",
        "",
    )
    .await;
    let glo_data = with(
        &with(&base[&Data], "provider_id", json!("glo")),
        "plan_id",
        json!("glo-gifting-1gb"),
    );
    refused(&server, key, Data, glo_data, "invalid_provider", "").await;
    refused(
        &server,
        key,
        Epin,
        with(&base[&Epin], "provider_id", json!("glo")),
        "invalid_provider",
        "",
    )
    .await;
    refused(&server, key, Data, disabled_plan, "invalid_plan", "").await;
    // The rest of the catalogue is unaffected.
    server
        .post(key, &Data.test(), base[&Data].clone())
        .await
        .assert_ok();
    server
        .post(
            key,
            &Airtime.test(),
            with(&base[&Airtime], "provider_id", json!("airtel")),
        )
        .await
        .assert_ok();

    // Nothing of all this changed anything.
    assert_eq!(balance_kobo(&server, key).await, start);
    assert!(transactions(&server, &rich.account_id, None).is_empty());
    server.assert_ledger_consistent(&rich.account_id);

    // insufficient_balance, live and test, changes nothing either.
    let poor = server.customer("100");
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

    // duplicate_reference: a used reference is refused whatever the body.
    let used = reference();
    let first = server
        .post(key, &Airtime.live(), Airtime.body(&used, "1234"))
        .await;
    let first = first.assert_ok().clone();
    let after_first = start - 50_000;
    for kind in ALL {
        refused(
            &server,
            key,
            kind,
            kind.body(&used, "5678"),
            "duplicate_reference",
            "",
        )
        .await;
    }
    refused(
        &server,
        key,
        Airtime,
        Airtime.body(&used, "1234"),
        "duplicate_reference",
        "",
    )
    .await;
    // Even a body that would be refused for balance is a duplicate first.
    let poor_ref = reference();
    let cheap = with(&Airtime.body(&poor_ref, "1234"), "amount", json!(50));
    server
        .post(&poor.api_key, &Airtime.live(), cheap)
        .await
        .assert_ok();
    refused(
        &server,
        &poor.api_key,
        Airtime,
        Airtime.body(&poor_ref, "1234"),
        "duplicate_reference",
        "",
    )
    .await;
    // Another account may use the same reference.
    let other = server
        .post(
            &poor.api_key,
            &Airtime.live(),
            with(&Airtime.body(&used, "1234"), "amount", json!(50)),
        )
        .await;
    let other = other.assert_ok().clone();
    assert_ne!(other["reference_code"], first["reference_code"]);
    assert_eq!(balance_kobo(&server, key).await, after_first);
    assert_eq!(balance_kobo(&server, &poor.api_key).await, 0);
    // Each account sees its own transaction under the shared reference.
    assert_eq!(
        status_by_reference(&server, key, &used).await["reference_code"],
        first["reference_code"]
    );
    assert_eq!(
        status_by_reference(&server, &poor.api_key, &used).await["reference_code"],
        other["reference_code"]
    );
    let statement = server.assert_ledger_consistent(&rich.account_id);
    assert_eq!(
        ledger_of(&statement, first["reference_code"].as_str().unwrap()),
        vec![("debit".to_owned(), -50_000)]
    );
    assert_eq!(transactions(&server, &rich.account_id, None).len(), 1);
    server.assert_ledger_consistent(&poor.account_id);

    // The reference every refusal used is still free: test, then live.
    let body = Electricity.body(&spare, "1234");
    let d = server
        .post(key, &Electricity.test(), body.clone())
        .await
        .assert_ok()
        .clone();
    assert_test_reply(&d, &body, 150_050, after_first);
    let live = server.post(key, &Electricity.live(), body).await;
    assert_eq!(kobo(&live.assert_ok()["balance_before"]), after_first);
    server.assert_ledger_consistent(&rich.account_id);
}

// ---------------------------------------------------------------------------
// 6. Provider UUIDs, phone normalisation, catalogue prices
// ---------------------------------------------------------------------------

#[tokio::test]
async fn uuids_phones_and_catalogue_prices() {
    let server = TestServer::spawn().await;
    let c = server.customer("1000000");
    let key = c.api_key.as_str();
    let expect = expectations(&server, key).await;

    // A provider's UUID works like its slug, live and test, for every product.
    let providers = server.get(key, "/v1/providers").await.assert_ok().clone();
    let uuid = |slug: &str| {
        str_of(
            &providers
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["slug"] == slug)
                .unwrap()["id"],
        )
    };
    let mut codes = Vec::new();
    for kind in ALL {
        let reference = reference();
        let id = uuid(kind.provider());
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
        codes.push(code);
    }

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
    let events = settled_events(&server, &c.account_id, codes.len() + phone_codes.len()).await;
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

    // Prices come from the catalogue; an `amount` or `price` from the client is ignored.
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
    let jamb_price = kobo(
        &server
            .get(key, "/v1/providers/education")
            .await
            .assert_ok()
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["slug"] == "jamb")
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
            json!({ "provider_id": "jamb", "quantity": 3, "amount": 1 }),
            "education",
            3 * jamb_price,
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

// ---------------------------------------------------------------------------
// 7. Lookups: privacy, unknown references, missing parameters
// ---------------------------------------------------------------------------

#[tokio::test]
async fn lookups_are_private_and_validated() {
    let server = TestServer::spawn().await;
    let a = server.customer("10000");
    let b = server.customer("10000");
    let airtime_ref = reference();
    let tx = server
        .post(
            &a.api_key,
            &Airtime.live(),
            Airtime.body(&airtime_ref, "1234"),
        )
        .await;
    let code = str_of(&tx.assert_ok()["reference_code"]);
    let epin_ref = reference();
    let epin = server
        .post(&a.api_key, &Epin.live(), Epin.body(&epin_ref, "1234"))
        .await;
    let batch = str_of(&epin.assert_ok()["batch_id"]);
    server.wait_final(&a.api_key, &code).await;
    server
        .wait_final(&a.api_key, epin.data()["reference_code"].as_str().unwrap())
        .await;

    // The owner sees them…
    status_by_code(&server, &a.api_key, &code).await;
    status_by_reference(&server, &a.api_key, &airtime_ref).await;
    let own = server
        .get(&a.api_key, &format!("/v1/epin/batch?batch_id={batch}"))
        .await;
    assert_eq!(own.assert_ok()["pins"].as_array().unwrap().len(), 3);
    // …another account gets 404, as for something that does not exist.
    for path in [
        format!("/v1/transaction/status?reference_code={code}"),
        format!("/v1/transaction/status?reference={airtime_ref}"),
        format!("/v1/transaction/status?reference={epin_ref}"),
        format!("/v1/epin/batch?batch_id={batch}"),
        "/v1/transaction/status?reference_code=BP000000000000000000".to_owned(),
        "/v1/transaction/status?reference=no-such-reference".to_owned(),
        "/v1/epin/batch?batch_id=EP0NOSUCHBATCH".to_owned(),
    ] {
        server
            .get(&b.api_key, &path)
            .await
            .assert_error(404, "not_found");
    }
    server
        .get(&a.api_key, "/v1/transaction/status?reference_code=BP123")
        .await
        .assert_error(404, "not_found");
    // A transaction code is not a batch id, nor the other way round.
    server
        .get(&a.api_key, &format!("/v1/epin/batch?batch_id={code}"))
        .await
        .assert_error(404, "not_found");
    server
        .get(
            &a.api_key,
            &format!("/v1/transaction/status?reference_code={batch}"),
        )
        .await
        .assert_error(404, "not_found");
    // Missing query parameters.
    for path in [
        "/v1/transaction/status",
        "/v1/transaction/status?reference_code=",
        "/v1/transaction/status?reference=",
        "/v1/transaction/status?other=1",
        "/v1/epin/batch",
        "/v1/epin/batch?batch_id=",
    ] {
        server
            .get(&a.api_key, path)
            .await
            .assert_error(422, "validation_error");
    }
    // B's balance and ledger never moved.
    assert_eq!(balance_kobo(&server, &b.api_key).await, 1_000_000);
    assert!(transactions(&server, &b.account_id, None).is_empty());
}

// ---------------------------------------------------------------------------
// 8. Concurrency
// ---------------------------------------------------------------------------

#[tokio::test]
async fn concurrent_purchases_debit_once_and_never_overdraw() {
    let server = TestServer::spawn().await;

    // 100 purchases at once with one reference: one is accepted.
    let c = server.customer("10000");
    let shared = reference();
    let requests = (0..100)
        .map(|i| {
            let kind = [Airtime, Bet, Electricity, Data][i % 4];
            (kind.live(), kind.body(&shared, "1234"))
        })
        .collect();
    let replies = post_all(&server, &c.api_key, requests).await;
    let accepted: Vec<&Reply> = replies.iter().filter(|r| r.status == 200).collect();
    assert_eq!(accepted.len(), 1, "exactly one accepted");
    for r in replies.iter().filter(|r| r.status != 200) {
        r.assert_error(422, "duplicate_reference");
    }
    let d = accepted[0].data();
    let amount = kobo(&d["amount"]);
    let code = str_of(&d["reference_code"]);
    server.wait_final(&c.api_key, &code).await;
    assert_eq!(balance_kobo(&server, &c.api_key).await, 1_000_000 - amount);
    let statement = server.assert_ledger_consistent(&c.account_id);
    let debits = statement["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "debit")
        .count();
    assert_eq!(debits, 1, "one debit: {statement}");
    assert_eq!(
        ledger_of(&statement, &code),
        vec![("debit".to_owned(), -amount)]
    );
    assert_eq!(transactions(&server, &c.account_id, None).len(), 1);

    // 40 purchases of ₦1,000 at once against ₦10,000: never overdrawn.
    let c = server.customer("10000");
    let requests = (0..40)
        .map(|_| {
            let body = with(&Airtime.body(&reference(), "1234"), "amount", json!(1000));
            (Airtime.live(), body)
        })
        .collect();
    let replies = post_all(&server, &c.api_key, requests).await;
    let mut spent = 0;
    let mut codes = Vec::new();
    for r in &replies {
        if r.status == 200 {
            let d = r.data();
            assert!(kobo(&d["balance_after"]) >= 0, "{d}");
            assert_eq!(
                kobo(&d["balance_before"]) - kobo(&d["balance_after"]),
                100_000
            );
            spent += kobo(&d["amount"]);
            codes.push(str_of(&d["reference_code"]));
        } else {
            r.assert_error(422, "insufficient_balance");
        }
    }
    assert!(spent <= 1_000_000, "successes sum to at most the balance");
    assert_eq!(codes.len(), 10, "the whole balance, and no more, was spent");
    for code in &codes {
        assert_eq!(
            server.wait_final(&c.api_key, code).await["status"],
            "successful"
        );
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, 1_000_000 - spent);
    let statement = server.assert_ledger_consistent(&c.account_id);
    for e in statement["entries"].as_array().unwrap() {
        assert!(kobo(&e["balance_after"]) >= 0, "never negative: {e}");
    }
    assert_eq!(
        transactions(&server, &c.account_id, None).len(),
        codes.len()
    );
}

// ---------------------------------------------------------------------------
// 9. Crash durability
// ---------------------------------------------------------------------------

#[tokio::test]
async fn purchases_in_flight_survive_a_crash() {
    let mut server = TestServer::spawn_with(Options {
        latency_ms: 3000,
        ..Default::default()
    })
    .await;
    let c = server.customer("500000");
    let start = balance_kobo(&server, &c.api_key).await;
    let plan: [(Kind, &str); 20] = [
        (Airtime, "1234"),
        (Airtime, "5678"),
        (Airtime, "0000"),
        (Airtime, "1111"),
        (Data, "1234"),
        (Data, "0000"),
        (Data, "1111"),
        (Epin, "1234"),
        (Epin, "5678"),
        (Cable, "1234"),
        (Cable, "0000"),
        (Cable, "1111"),
        (Electricity, "1234"),
        (Electricity, "0000"),
        (Electricity, "1111"),
        (Education, "1234"),
        (Education, "0000"),
        (Bet, "1234"),
        (Bet, "0000"),
        (Bet, "1111"),
    ];
    let requests = plan
        .iter()
        .map(|(kind, tail)| (kind.live(), kind.body(&reference(), tail)))
        .collect();
    let replies = post_all(&server, &c.api_key, requests).await;
    let placed: Vec<(Kind, bool, String, i64)> = plan
        .iter()
        .zip(&replies)
        .map(|((kind, tail), r)| {
            let d = r.assert_ok();
            (
                *kind,
                *tail == "0000",
                str_of(&d["reference_code"]),
                kobo(&d["amount"]),
            )
        })
        .collect();
    // Let the worker hand them to the (slow) supplier, then crash mid-call.
    let deadline = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < deadline {
        let list = transactions(&server, &c.account_id, None);
        if list.len() == 20 && list.iter().all(|t| t["submitted"] == true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.kill();
    let list = transactions(&server, &c.account_id, None);
    assert_eq!(list.len(), 20);
    assert!(
        list.iter().all(|t| t["status"] == "processing"),
        "killed while all were processing"
    );

    server.start_with_latency(0);
    let mut spent = 0;
    for (kind, fails, code, amount) in &placed {
        let done = server.wait_final(&c.api_key, code).await;
        let want = if *fails { "failed" } else { "successful" };
        assert_eq!(done["status"], want, "{kind:?} {code}: {done}");
        if !fails {
            spent += amount;
        }
    }
    assert_eq!(balance_kobo(&server, &c.api_key).await, start - spent);
    let statement = server.cli(&[
        "wallet",
        "statement",
        "--account",
        &c.account_id,
        "--limit",
        "1000",
    ]);
    assert_eq!(statement["balance"], statement["ledger_sum"]);
    for (kind, fails, code, amount) in &placed {
        let mut entries = ledger_of(&statement, code);
        entries.sort();
        let mut want = vec![("debit".to_owned(), -amount)];
        if *fails {
            want.push(("refund".to_owned(), *amount));
        }
        assert_eq!(
            entries, want,
            "{kind:?} {code}: one debit, refunded iff failed"
        );
    }
    let list = transactions(&server, &c.account_id, None);
    assert_eq!(list.len(), 20);
    let failed = transactions(&server, &c.account_id, Some("failed"));
    assert_eq!(failed.len(), placed.iter().filter(|p| p.1).count());
    assert!(transactions(&server, &c.account_id, Some("processing")).is_empty());
    // Exactly one webhook event per transaction (no URL configured: skipped).
    let events = settled_events(&server, &c.account_id, 20).await;
    for (_, fails, code, _) in &placed {
        let mine: Vec<&Value> = events
            .iter()
            .filter(|e| e["event"]["transaction_code"] == code.as_str())
            .collect();
        assert_eq!(mine.len(), 1, "{code}");
        assert_eq!(mine[0]["event"]["status"], "skipped");
        let payload: Value =
            serde_json::from_str(mine[0]["event"]["payload"].as_str().unwrap()).unwrap();
        assert_eq!(
            payload["status"],
            if *fails { "failed" } else { "successful" }
        );
    }
}

/// A supplier outage: verifications answer 503, and a purchase whose outcome
/// is unknown stays `processing` — debited, never refunded on a guess — and is
/// requeried until the supplier is back, then completes exactly once.
#[tokio::test]
async fn a_supplier_outage_never_refunds_on_a_guess() {
    let mut server = TestServer::spawn_with_env(
        Options::default(),
        &[("BILLPAY_SANDBOX_UNREACHABLE", "true")],
    )
    .await;
    let c = server.customer("10000");
    let verify =
        json!({"provider_id": "ikeja-electric", "meter_number": "45012345678", "meter_type": 1});
    server
        .post(&c.api_key, "/v1/electricity/verify", verify.clone())
        .await
        .assert_error(503, "supplier_unavailable");
    // the test twin never calls the supplier
    assert_eq!(
        server
            .post(&c.api_key, "/v1/test/electricity/verify", verify)
            .await
            .assert_ok()["test_mode"],
        true
    );

    let reference = reference();
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 1000, "reference": reference});
    let code = server
        .post(&c.api_key, "/v1/airtime/purchase", body)
        .await
        .assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    // past the first requery (1 s after the first attempt): still processing, still debited
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let shown = server.cli(&["transaction", "show", &code]);
        if shown["transaction"]["attempts"].as_u64().unwrap_or(0) >= 2 {
            assert_eq!(shown["transaction"]["status"], "processing", "{shown}");
            assert!(
                shown["transaction"]["result"]["last_note"]
                    .as_str()
                    .unwrap()
                    .contains("unavailable"),
                "{shown}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no requery seen: {shown}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let status = server
        .get(
            &c.api_key,
            &format!("/v1/transaction/status?reference_code={code}"),
        )
        .await;
    assert_eq!(status.assert_ok()["status"], "processing");
    assert_eq!(server.balance(&c.api_key).await, 9000.0);
    let kinds: Vec<String> = server.assert_ledger_consistent(&c.account_id)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        !kinds.contains(&"refund".to_owned()),
        "refunded on a guess: {kinds:?}"
    );

    // the supplier is back: the requery completes it, once
    server.kill();
    server.set_env(&[]);
    server.start();
    let done = server.wait_final(&c.api_key, &code).await;
    assert_eq!(done["status"], "successful");
    assert_eq!(server.balance(&c.api_key).await, 9000.0);
    let events = server.cli(&["webhook", "list", "--account", &c.account_id]);
    assert_eq!(events["events"].as_array().unwrap().len(), 1, "{events}");
}

/// Sends `body` as written: duplicate keys and number literals survive.
async fn post_text(server: &TestServer, key: &str, path: &str, body: String) -> Reply {
    let response = server
        .http
        .post(server.url(path))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    reply(response).await
}

#[tokio::test]
async fn ambiguous_bodies_are_refused_and_integral_counts_accepted() {
    let server = TestServer::spawn().await;
    let key = server.customer("100000").api_key;
    let start = balance_kobo(&server, &key).await;
    let airtime = |amount: &str, reference: &str| {
        format!(
            r#"{{"provider_id":"mtn","phone":"08031231234","amount":{amount},"reference":"{reference}"}}"#
        )
    };
    let refusals = [
        // The last `amount` would win in a plain parse and debit ₦50,000.
        (
            airtime("50", &reference()).replace("}", r#","amount":50000}"#),
            "amount: is given more than once",
        ),
        // An f64 reads this as exactly 50.
        (
            airtime("50.0000000000000001", &reference()),
            "amount: must have at most 2 decimal places",
        ),
        (
            airtime("50.000", &reference()),
            "amount: must have at most 2 decimal places",
        ),
        // Zero-width space and right-to-left override.
        (airtime("50", "order\u{200B}1234"), "reference"),
        (airtime("50", "order\u{202E}1234"), "reference"),
    ];
    for (body, message) in refusals {
        let r = post_text(&server, &key, &Airtime.live(), body.clone()).await;
        r.assert_error(422, "validation_error");
        let said = str_of(&r.body["message"]);
        assert!(said.contains(message), "{body}: {said}");
    }
    assert_eq!(
        balance_kobo(&server, &key).await,
        start,
        "refusals charge nothing"
    );

    let fractional = json!({ "provider_id": "waec", "quantity": 1.5, "phone": "07012341234", "reference": reference() });
    let r = server.post(&key, &Education.live(), fractional).await;
    r.assert_error(422, "validation_error");
    let said = str_of(&r.body["message"]);
    assert!(said.contains("quantity") && !said.contains("u32"), "{said}");

    let body = format!(
        r#"{{"provider_id":"waec","quantity":1.0,"phone":"07012341234","reference":"{}"}}"#,
        reference()
    );
    let r = post_text(&server, &key, &Education.live(), body).await;
    assert_eq!(r.assert_ok()["quantity"], 1, "{}", r.body);
}
