//! A site's settings: `[suppliers.NAME]` sections, any number of them;
//! what stops `serve` (one sentence each); the start-up check and the
//! floats of every site; the old and new forms of VTpass's section alike.

use super::*;
use crate::support::{BIN, MASTER_KEY};
use std::process::Command;

/// `serve` with `config` as its file, expected to refuse to start; what it said.
fn refused(config: &str, env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("billpay.toml");
    std::fs::write(&file, config).unwrap();
    let output = Command::new(BIN)
        .env_clear()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config",
            file.to_str().unwrap(),
        ])
        .arg("--database-url")
        .arg(format!("sqlite://{}/s.db", dir.path().display()))
        .env("BILLPAY_MASTER_KEY", MASTER_KEY)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "serve started: {said}");
    said
}

#[test]
fn an_unknown_kind_a_missing_token_or_a_base_url_without_scheme_stops_serve() {
    let said = refused(
        "[suppliers.husmodata]\nkind = \"smedta\"\nbase_url = \"https://www.husmodata.com/api/\"\ntoken = \"t\"\n",
        &[],
    );
    assert!(said.contains("[suppliers.husmodata] has kind \"smedta\", not a kind of supplier (smedata, vtpass, clubkonnect)"), "{said}");
    let said = refused(
        "[suppliers.husmodata]\nkind = \"smedata\"\nbase_url = \"https://www.husmodata.com/api/\"\n",
        &[],
    );
    assert!(said.contains("[suppliers.husmodata] needs its API token: `token` in that section or BILLPAY_HUSMODATA_TOKEN"), "{said}");
    let said = refused(
        "[suppliers.husmodata]\nkind = \"smedata\"\nbase_url = \"www.husmodata.com/api/\"\ntoken = \"t\"\n",
        &[],
    );
    assert!(
        said.contains("[suppliers.husmodata] base_url \"www.husmodata.com/api/\" has no scheme"),
        "{said}"
    );
    // A route naming a site that is not configured names the ones that are.
    let said = refused(
        "[routes]\ndata = [\"datastation\"]\n[suppliers.husmodata]\nkind = \"smedata\"\nbase_url = \"https://h.example/api/\"\ntoken = \"t\"\n",
        &[],
    );
    assert!(said.contains("routes: data names \"datastation\", not a supplier (sandbox, vtpass, clubkonnect, husmodata)"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_may_come_from_the_environment_and_a_refused_one_stops_the_start() {
    let fake = FakeSmedata::start().await;
    let section = format!(
        "[suppliers.kvdata]\nkind = \"smedata\"\nbase_url = \"{}\"\n",
        fake.api_url()
    );
    fake.rotate_token();
    let said = refused(
        &section,
        &[("BILLPAY_KVDATA_TOKEN", crate::support::smedata::TOKEN)],
    );
    assert!(
        said.contains("kvdata refused the credentials (Invalid token.)"),
        "{said}"
    );
    assert!(!said.contains("pbkdf2"), "the user answer is never shown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_site_is_a_supplier_with_its_float_and_its_plan_list() {
    let first = FakeSmedata::start().await;
    let second = FakeSmedata::start_with(200, false, &SCRIPT_NETWORKS).await;
    second.set_plans(vec![
        (44, 1, "SME", "1.0GB", "280", "240"),
        (45, 1, "SME", "10.0GB", "2500", "2400"),
    ]);
    let server = sites(
        &[("husmodata", &first, ""), ("datastation", &second, "")],
        "",
        &[],
    )
    .await;
    let floats = server.cli(&["supplier", "balance"]);
    let listed = floats["suppliers"].as_array().unwrap();
    let float = |name: &str| {
        listed
            .iter()
            .find(|s| s["supplier"] == name)
            .map(|s| s["balance"].clone())
    };
    assert_eq!(float("husmodata"), Some(json!(50000.0)), "{floats}");
    assert_eq!(float("datastation"), Some(json!(50000.0)), "{floats}");

    // The plan list (listed prices are what plans cost us): plan 6 is mapped
    // already (its expected cost recorded now); 7 and 8 match our gifting and
    // corporate plans by type, size and validity; our other plans are unmatched.
    let shown = server.cli(&["catalogue", "sync", "--supplier", "husmodata"]);
    let differences = shown["differences"].as_array().unwrap();
    let found = |kind: &str, plan_id: &str| {
        differences
            .iter()
            .find(|d| d["kind"] == kind && d["plan_id"] == plan_id)
            .cloned()
            .unwrap_or_else(|| panic!("no {kind} {plan_id}: {shown}"))
    };
    assert_eq!(found("cost", "mtn-sme-1gb")["husmodata"], 300.0);
    let gifting = found("matched", "mtn-gifting-2gb");
    assert_eq!(
        (&gifting["code"], &gifting["cost"]),
        (&json!("7"), &json!(600.0))
    );
    assert_eq!(found("matched", "mtn-corporate-gifting-1gb")["code"], "8");
    found("unmatched", "mtn-sme-5gb");
    assert!(
        !differences
            .iter()
            .any(|d| d["kind"] == "new" || d["kind"] == "missing"),
        "{shown}"
    );
    let prices = server.cli(&["catalogue", "export"])["catalogue"].clone();

    let applied = server.cli(&["catalogue", "sync", "--supplier", "husmodata", "--apply"]);
    assert_eq!(applied["applied"], true, "{applied}");
    let catalogue = server.cli(&["catalogue", "export"])["catalogue"].clone();
    let plan = |c: &Value, id: &str| {
        c["data_plans"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["plan_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(
        plan(&catalogue, "mtn-gifting-2gb")["codes"]["husmodata"],
        json!({ "plan": "7", "cost": "600.00" })
    );
    assert_eq!(
        plan(&catalogue, "mtn-sme-1gb")["codes"]["husmodata"]["cost"],
        "300.00"
    );
    for id in ["mtn-gifting-2gb", "mtn-sme-1gb", "mtn-sme-5gb"] {
        let (before, after) = (plan(&prices, id), plan(&catalogue, id));
        assert_eq!(
            (&before["price"], &before["active"]),
            (&after["price"], &after["active"]),
            "{id}: our price and sale untouched"
        );
    }
    let again = server.cli(&["catalogue", "sync", "--supplier", "husmodata"]);
    assert!(
        !again["differences"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["kind"] == "matched" || d["kind"] == "cost"),
        "{again}"
    );

    // A matched plan is bought there with the site's plan id.
    let who = server.customer("5000");
    let body =
        json!({ "provider_id": "mtn", "plan_id": "mtn-gifting-2gb", "phone": "08011111150" });
    let code = buy(&server, &who, "data", body).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(first.posts_for("08011111150")[0]["plan"], 7);
    assert_eq!(
        shown_cost(&server, &code),
        Some(560.0),
        "the real cost, not the listed 600"
    );
}

fn shown_cost(server: &TestServer, code: &str) -> Option<f64> {
    shown(server, code)["transaction"]["cost"].as_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clubkonnect_in_the_suppliers_form_is_its_own_section() {
    let fake = FakeClubkonnect::start().await;
    let site = FakeSmedata::start().await;
    let config = format!(
        "[routes]\nairtime = [\"husmodata\", \"clubkonnect\"]\n[suppliers.clubkonnect]\nkind = \"clubkonnect\"\nbase_url = \"{}\"\nuser_id = \"{}\"\napi_key = \"{}\"\ntimeout_ms = 1000\n{}",
        fake.base,
        crate::support::clubkonnect::USER_ID,
        crate::support::clubkonnect::API_KEY,
        site.section("husmodata", "")
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("billpay.toml");
    std::fs::write(&file, config).unwrap();
    let env = [("BILLPAY_CONFIG", file.to_str().unwrap())];
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    let floats = server.cli(&["supplier", "balance"]);
    let names: Vec<&str> = floats["suppliers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["supplier"].as_str())
        .collect();
    assert_eq!(names, ["clubkonnect", "husmodata"], "{floats}");
    // Refused at the site (400): ClubKonnect, configured in that form, delivers.
    let who = server.customer("5000");
    let body = json!({ "provider_id": "mtn", "amount": 100, "phone": "08000000400" });
    let code = buy(&server, &who, "airtime", body).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(fake.purchases_for("08000000400").len(), 1);
    assert_eq!(site.posts_for("08000000400").len(), 1);

    // Another name with kind "clubkonnect" is refused: ClubKonnect is one supplier.
    let said = refused(
        "[suppliers.ck2]\nkind = \"clubkonnect\"\nuser_id = \"CK1\"\napi_key = \"k\"\n",
        &[],
    );
    assert!(
        said.contains("[suppliers.ck2] has kind \"clubkonnect\": clubkonnect is one supplier"),
        "{said}"
    );
}
