//! The floor (issue 27, finding 4): nothing is charged less than ₦0.01. A
//! rule or catalogue price that would go under it is refused where it is
//! set, naming what; an item already under it (a rule from before the
//! floor) is not listed, and buying it is a 422 in the envelope, never the
//! database's 500.

use super::*;
use crate::cli::run_text;

/// Imports the default catalogue with `from` replaced by `to` (once).
fn import_edited(server: &TestServer, from: &str, to: &str) -> (bool, Value) {
    let (ok, toml, _) = run_text(server, &["catalogue", "export"]);
    assert!(ok);
    let edited = toml.replacen(from, to, 1);
    assert_ne!(edited, toml, "{from:?} not in the export");
    let file = server.path().join("edited.toml");
    std::fs::write(&file, &edited).unwrap();
    server.cli_result(&["catalogue", "import", file.to_str().unwrap()])
}

const MTN_500MB: &str = "name = \"MTN 500MB\"\nprice = 400.0";

#[tokio::test]
async fn a_price_under_one_kobo_is_refused_where_it_is_set_naming_the_plan() {
    let server = TestServer::spawn().await;
    // ₦0.40 at list price is a price (40 kobo).
    let (ok, out) = import_edited(&server, MTN_500MB, "name = \"MTN 500MB\"\nprice = 0.4");
    assert!(ok, "{out}");
    server.cli(&["tier", "create", "careless"]);
    let data_off = |percent: &str| {
        server.cli_result(&[
            "tier",
            "rule",
            "careless",
            "--product",
            "data",
            "--discount-percent",
            percent,
        ])
    };
    let (ok, out) = data_off("99.99");
    assert!(!ok, "a rule charging 0.00 was accepted: {out}");
    let error = out["error"].as_str().unwrap();
    for named in ["--discount-percent", "mtn-sme-500mb", "MTN 500MB", "0.01"] {
        assert!(error.contains(named), "{named} not in: {error}");
    }
    let shown = server.cli(&["tier", "show", "careless"]);
    assert_eq!(shown["rules"].as_array().map(Vec::len), Some(0), "{shown}");
    // 97.5% off 40 kobo is exactly 1 kobo: allowed.
    let (ok, out) = data_off("97.5");
    assert!(ok, "{out}");
    // A catalogue whose price that rule would take under a kobo is refused,
    // naming the tier and the plan, and changes nothing.
    let version = server.cli(&["catalogue", "export"])["version"].clone();
    let (ok, out) = import_edited(
        &server,
        "name = \"MTN 500MB\"\nprice = 0.4",
        "name = \"MTN 500MB\"\nprice = 0.1",
    );
    assert!(!ok, "{out}");
    let error = out["error"].as_str().unwrap();
    for named in ["careless", "mtn-sme-500mb", "0.01"] {
        assert!(error.contains(named), "{named} not in: {error}");
    }
    assert_eq!(server.cli(&["catalogue", "export"])["version"], version);
}

#[tokio::test]
async fn a_price_already_under_one_kobo_is_not_listed_and_buying_it_is_a_clear_422() {
    let server = TestServer::spawn().await;
    let who = server.customer("5000");
    let (ok, out) = import_edited(&server, MTN_500MB, "name = \"MTN 500MB\"\nprice = 0.4");
    assert!(ok, "{out}");
    tier(
        &server,
        "careless",
        &[&["--product", "data", "--discount-percent", "97.5"]],
    );
    // The rule as one written before the floor: 99.99% off.
    let careless = "UPDATE price_rules SET value = 9999 WHERE tier = 'careless';
        UPDATE pricing_version SET version = version + 1;";
    server.raw_sql(careless, careless).await;
    set_tier(&server, &who, "careless").await;

    let listed = server
        .get(&who.api_key, "/v1/data-plans?provider=mtn")
        .await;
    let plans = listed.assert_ok().as_array().unwrap().clone();
    assert!(
        plans.iter().all(|p| p["plan_id"] != "mtn-sme-500mb"),
        "a plan that cannot be bought is listed: {plans:?}"
    );
    let gig = plans
        .iter()
        .find(|p| p["plan_id"] == "mtn-sme-1gb")
        .unwrap();
    assert_eq!(gig["price"], 0.06, "99.99% off 600.00 is 6 kobo: {gig}");

    for path in ["/v1/test/data/purchase", "/v1/data/purchase"] {
        let mut body = data("mtn", "mtn-sme-500mb");
        body["reference"] = json!(reference());
        let r = server.post(&who.api_key, path, body).await;
        r.assert_error(422, "minimum_amount");
        let message = r.body["message"].as_str().unwrap();
        for named in ["MTN 500MB", "0.00", "0.01"] {
            assert!(message.contains(named), "{path}: {named} not in {message}");
        }
    }
    assert_eq!(server.balance(&who.api_key).await, 5000.0);
    let none = server.cli(&["transaction", "list", "--account", &who.account_id]);
    assert_eq!(
        none["transactions"].as_array().map(Vec::len),
        Some(0),
        "{none}"
    );
}
