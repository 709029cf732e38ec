//! Checks and small helpers the purchase tests share.

use super::expect::*;
use super::kind::*;
use crate::support::*;
use serde_json::Value;
use std::time::{Duration, Instant};

/// ISO 8601 / RFC 3339 with an explicit offset.
pub fn assert_timestamp(v: &Value) {
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

pub fn all_digits(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit())
}

/// Electricity token: 20 digits as five groups of four joined by '-'.
pub fn assert_token(pin: &Value) {
    let token = str_of(pin);
    let groups: Vec<&str> = token.split('-').collect();
    assert!(
        groups.len() == 5 && groups.iter().all(|g| all_digits(g, 4)),
        "bad electricity token {token}"
    );
}

/// Exam pins: 12 digits each (several pins are comma-separated).
pub fn assert_exam_pins(pin: &Value, quantity: usize) {
    let pins = str_of(pin);
    let parts: Vec<&str> = pins.split(',').collect();
    assert_eq!(parts.len(), quantity, "pins {pins}");
    assert!(
        parts.iter().all(|p| all_digits(p, 12)),
        "bad exam pins {pins}"
    );
}

pub async fn status_by_code(server: &TestServer, key: &str, code: &str) -> Value {
    server
        .get(
            key,
            &format!("/v1/transaction/status?reference_code={code}"),
        )
        .await
        .assert_ok()
        .clone()
}

pub async fn status_by_reference(server: &TestServer, key: &str, reference: &str) -> Value {
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
pub fn assert_accepted(
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
pub fn assert_status_record(s: &Value, accepted: &Value, kind: Kind, status: &str) {
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
pub async fn assert_status_both(
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
pub async fn cli_until(server: &TestServer, args: &[&str], done: impl Fn(&Value) -> bool) -> Value {
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
pub async fn settled_events(server: &TestServer, account: &str, count: usize) -> Vec<Value> {
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

pub fn transactions(server: &TestServer, account: &str, status: Option<&str>) -> Vec<Value> {
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
pub fn ledger_of(statement: &Value, code: &str) -> Vec<(String, i64)> {
    statement["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["transaction_code"] == code)
        .map(|e| (str_of(&e["kind"]), kobo(&e["amount"])))
        .collect()
}

/// How many of a statement's entries are of `kind` (`debit`, `refund`, …).
pub fn entries_of_kind(statement: &Value, kind: &str) -> usize {
    let entries = statement["entries"].as_array().unwrap();
    entries.iter().filter(|e| e["kind"] == kind).count()
}

pub async fn balance_kobo(server: &TestServer, key: &str) -> i64 {
    (server.balance(key).await * 100.0).round() as i64
}

/// Sends all requests at once; replies in the order given.
pub async fn post_all(
    server: &TestServer,
    key: &str,
    requests: Vec<(String, Value)>,
) -> Vec<Reply> {
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

/// Asserts the same 422 slug live and in test mode (and, for validation
/// errors, that the message names the field).
pub async fn refused(
    server: &TestServer,
    key: &str,
    kind: Kind,
    body: Value,
    slug: &str,
    field: &str,
) {
    for path in [kind.live(), kind.test()] {
        let r = server.post(key, &path, body.clone()).await;
        r.assert_refusal(slug, field, &format!("{body} to {path}"));
    }
}
