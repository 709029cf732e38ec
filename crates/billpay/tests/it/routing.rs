//! Routing by cost and health (issue 47) through a spawned `billpay serve`
//! with two real suppliers, the test kit's fake VTpass and fake ClubKonnect,
//! and `[routing] data = "cheapest"`: the cheaper one (by the catalogue's
//! expected cost) gets the purchase, a definite refusal fails over to the
//! next, an unknown outcome never does; a supplier refusing three in a row
//! is skipped while it backs off, then one purchase probes it and it is
//! healthy again, as `billpay supplier health --json` shows; the operators
//! are told of both transitions once (the outbox).

use crate::clubkonnect::served_by;
use crate::support::clubkonnect::FakeClubkonnect;
use crate::support::vtpass::FakeVtpass;
use crate::support::{Options, TestServer};
use crate::vtpass::buy;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PLAN: &str = "mtn-sme-1gb";

/// The default catalogue with the 1 GB plan's expected cost at each supplier
/// (as `catalogue sync --apply` or an operator writes it).
fn catalogue_with_costs(dir: &Path, vtpass: &str, clubkonnect: &str) -> PathBuf {
    let default = concat!(env!("CARGO_MANIFEST_DIR"), "/../../catalogue/default.toml");
    let text = std::fs::read_to_string(default).unwrap();
    let plan = text.find(&format!("plan_id = \"{PLAN}\"")).unwrap();
    let codes = plan + text[plan..].find("codes = ").unwrap();
    let end = codes + text[codes..].find('\n').unwrap();
    let ours = format!(
        "codes = {{ clubkonnect = {{ plan = \"1000.0\", cost = \"{clubkonnect}\" }}, vtpass = {{ cost = \"{vtpass}\" }} }}"
    );
    let path = dir.join("catalogue.toml");
    std::fs::write(&path, format!("{}{ours}{}", &text[..codes], &text[end..])).unwrap();
    path
}

/// Both suppliers, data routed VTpass then ClubKonnect but by cost, with a
/// 6 s first back-off; ClubKonnect's expected cost the lower.
async fn both(
    vtpass: &FakeVtpass,
    clubkonnect: &FakeClubkonnect,
) -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("billpay.toml");
    let routing = "[routes]\ndata = [\"vtpass\", \"clubkonnect\"]\n\n[routing]\ndata = \"cheapest\"\nfailures = 3\nbackoff_secs = 6\nbackoff_max_secs = 60\n";
    std::fs::write(&config, routing).unwrap();
    let mut env = vtpass.env();
    env.extend(clubkonnect.env());
    env.push(("BILLPAY_CONFIG", config.to_str().unwrap().to_owned()));
    env.push(("BILLPAY_VTPASS_TIMEOUT_MS", "1000".into()));
    env.push(("BILLPAY_CLUBKONNECT_TIMEOUT_MS", "1000".into()));
    env.push(("BILLPAY_ALERT_INTERVAL_SECS", "1".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    let catalogue = catalogue_with_costs(dir.path(), "300", "250");
    let imported = server.cli(&["catalogue", "import", catalogue.to_str().unwrap()]);
    assert_eq!(imported["imported"], true, "{imported}");
    // The worker's catalogue is re-read within a second.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    (dir, server)
}

fn data(phone: &str) -> Value {
    json!({ "provider_id": "mtn", "plan_id": PLAN, "phone": phone })
}

/// One supplier of `supplier health --json`.
fn health_of(server: &TestServer, supplier: &str) -> Value {
    let shown = server.cli(&["supplier", "health"]);
    let all = shown["suppliers"].as_array().unwrap();
    let found = all.iter().find(|s| s["supplier"] == supplier);
    found
        .unwrap_or_else(|| panic!("{supplier} in {shown}"))
        .clone()
}

/// How many notices of `kind` the outbox holds (through the store: either backend).
async fn notices_of(server: &TestServer, kind: &str) -> usize {
    server.notices_of(kind).await.len()
}

async fn wait_for(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cheapest_gets_the_purchase_a_refusal_fails_over_and_an_unknown_never() {
    let vtpass = FakeVtpass::start().await;
    let clubkonnect = FakeClubkonnect::start().await;
    let (_dir, server) = both(&vtpass, &clubkonnect).await;
    let who = server.customer("10000");

    // ClubKonnect's ₦250 beats VTpass's ₦300, though VTpass is listed first.
    let phone = "08031000001";
    let code = buy(&server, &who, "data", data(phone)).await;
    let done = server.wait_final(&who.api_key, &code).await;
    assert_eq!(done["status"], "successful", "{done}");
    assert_eq!(served_by(&server, &code).0, "clubkonnect");
    assert_eq!(clubkonnect.purchases_for(phone).len(), 1);
    assert!(vtpass.pay_calls_for(phone).is_empty());

    // ClubKonnect refuses (417: nothing bought): the next cheapest, VTpass.
    let refused = "08000000417";
    let code = buy(&server, &who, "data", data(refused)).await;
    let done = server.wait_final(&who.api_key, &code).await;
    assert_eq!(done["status"], "successful", "{done}");
    assert_eq!(served_by(&server, &code).0, "vtpass");
    assert_eq!(clubkonnect.purchases_for(refused).len(), 1);
    assert_eq!(vtpass.pay_calls_for(refused).len(), 1);

    // An HTML 503 page is an unknown outcome: requeried there, never sent to VTpass.
    let unknown = "08000000503";
    let code = buy(&server, &who, "data", data(unknown)).await;
    wait_for("the purchase sent", Duration::from_secs(10), || {
        !clubkonnect.purchases_for(unknown).is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(served_by(&server, &code).0, "clubkonnect");
    assert!(vtpass.pay_calls_for(unknown).is_empty());
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supplier_refusing_three_in_a_row_is_skipped_then_probed_and_comes_back() {
    let vtpass = FakeVtpass::start().await;
    let clubkonnect = FakeClubkonnect::start().await;
    let (_dir, server) = both(&vtpass, &clubkonnect).await;
    crate::console::add_operators(&server);
    let who = server.customer("20000");
    let fresh = health_of(&server, "clubkonnect");
    assert_eq!(fresh["state"], "healthy", "{fresh}");

    // Three refusals in a row at ClubKonnect, each bought at VTpass instead.
    let refused = "08000000417";
    for _ in 0..3 {
        let code = buy(&server, &who, "data", data(refused)).await;
        let done = server.wait_final(&who.api_key, &code).await;
        assert_eq!(done["status"], "successful", "{done}");
        assert_eq!(served_by(&server, &code).0, "vtpass");
    }
    assert_eq!(clubkonnect.purchases_for(refused).len(), 3);
    let down = health_of(&server, "clubkonnect");
    assert_eq!(down["state"], "backing off", "{down}");
    assert_eq!(down["failures_in_a_row"], 3, "{down}");
    assert_eq!(down["times_unhealthy"], 1, "{down}");
    assert!(down["until"].is_string(), "{down}");
    let errors = down["last_errors"].as_array().unwrap();
    assert_eq!(errors.len(), 3, "{down}");
    assert!(
        errors
            .iter()
            .all(|e| !e["message"].as_str().unwrap().is_empty()),
        "{down}"
    );
    assert_eq!(health_of(&server, "vtpass")["state"], "healthy");

    // While it backs off the cheaper ClubKonnect is skipped.
    let skipped = "08031000002";
    let code = buy(&server, &who, "data", data(skipped)).await;
    server.wait_final(&who.api_key, &code).await;
    assert_eq!(served_by(&server, &code).0, "vtpass");
    assert!(clubkonnect.purchases_for(skipped).is_empty());

    // The back-off over, the next purchase is the probe: delivered, healthy again.
    wait_for("the back-off to end", Duration::from_secs(15), || {
        health_of(&server, "clubkonnect")["state"] == "probing"
    })
    .await;
    let probe = "08031000003";
    let code = buy(&server, &who, "data", data(probe)).await;
    let done = server.wait_final(&who.api_key, &code).await;
    assert_eq!(done["status"], "successful", "{done}");
    assert_eq!(served_by(&server, &code).0, "clubkonnect");
    let back = health_of(&server, "clubkonnect");
    assert_eq!(back["state"], "healthy", "{back}");
    assert_eq!(back["failures_in_a_row"], 0, "{back}");
    assert_eq!(back["times_unhealthy"], 1, "{back}");

    // Each operator told once that it went down and once that it came back.
    let deadline = Instant::now() + Duration::from_secs(15);
    while notices_of(&server, "operator_supplier_down").await < 2
        || notices_of(&server, "operator_supplier_back").await < 2
    {
        assert!(Instant::now() < deadline, "never: both alerts");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await; // several checks later
    assert_eq!(notices_of(&server, "operator_supplier_down").await, 2);
    assert_eq!(notices_of(&server, "operator_supplier_back").await, 2);

    // The console's Suppliers page: its health, last errors and last known costs.
    let owner = crate::console::admin(&server, crate::console::OWNER).await;
    let (status, _, html) = crate::console::page(&server, &owner, "/admin/suppliers").await;
    assert_eq!(status, 200);
    let health = &html[html.find("id=\"health\"").unwrap()..html.find("id=\"outcomes\"").unwrap()];
    let row_of = |supplier: &str| {
        let row = &health[health
            .find(&format!("data-supplier=\"{supplier}\""))
            .unwrap()..];
        row[..row.find("</tr>").unwrap()].to_owned()
    };
    let row = row_of("clubkonnect");
    assert!(row.contains(">healthy</span>"), "{row}");
    assert!(
        row.contains("<td class=\"num\">0</td><td class=\"num\">1</td>"),
        "0 in a row, once unhealthy: {row}"
    );
    assert!(row.contains("refused the order"), "its last errors: {row}");
    // VTpass says what it charged: its last real cost of the plan.
    let row = row_of("vtpass");
    assert!(
        row.contains("data mtn mtn-sme-1gb: ₦"),
        "its last known cost: {row}"
    );
    assert!(html.contains("cheapest first: data"), "the routing is said");
    server.assert_ledger_consistent(&who.account_id);
}
