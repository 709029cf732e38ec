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

    // The plan list: plan 6 is mapped (listed 300 here: its price differs), 7 and 8 are new.
    let shown = server.cli(&["catalogue", "sync", "--supplier", "husmodata"]);
    let differences = shown["differences"].as_array().unwrap();
    assert!(
        differences
            .iter()
            .any(|d| d["kind"] == "new" && d["variation_code"] == "7"),
        "{shown}"
    );
    assert!(
        differences.iter().any(|d| d["kind"] == "price"
            && d["plan_id"] == "mtn-sme-1gb"
            && d["husmodata"] == 300.0),
        "{shown}"
    );
}
