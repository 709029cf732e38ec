//! The catalogue from the CLI: import, export, plans.

use super::*;
use crate::support::*;

#[tokio::test]
async fn catalogue_import_export_and_plans() {
    let server = TestServer::spawn().await;
    let c = server.customer("100000");
    let (ok, toml, _) = run_text(&server, &["catalogue", "export"]);
    assert!(ok && toml.contains("[[providers]]"));
    // raise a plan's price in an edited copy and import it
    let edited = toml.replacen("price = 19000.0", "price = 19500.0", 1);
    assert_ne!(edited, toml, "DStv Compact price not found in the export");
    let file = server.path().join("edited.toml");
    std::fs::write(&file, &edited).unwrap();
    let imported = server.cli(&["catalogue", "import", file.to_str().unwrap()]);
    assert_eq!(imported["providers"], 32);
    let exported = server.cli(&["catalogue", "export"]);
    let plans = exported["catalogue"]["cable_plans"].as_array().unwrap();
    assert!(plans.iter().any(|p| p["price"] == 19500.0));

    // a broken file is refused and changes nothing
    std::fs::write(
        &file,
        edited.replacen("provider = \"dstv\"", "provider = \"nobody\"", 1),
    )
    .unwrap();
    let (ok, err) = server.cli_result(&["catalogue", "import", file.to_str().unwrap()]);
    assert!(!ok, "{err}");
    assert_eq!(
        server.cli(&["catalogue", "export"])["version"],
        exported["version"]
    );

    // plans can be switched off and on
    let plan = plans.iter().find(|p| p["provider"] == "gotv").unwrap()["plan_id"]
        .as_str()
        .unwrap()
        .to_owned();
    server.cli(&["plan", "disable", &plan]);
    let (ok, _) = server.cli_result(&["plan", "disable", "mtn"]);
    assert!(!ok, "a provider is not a plan");
    let (ok, _) = server.cli_result(&["provider", "disable", "no-such-provider"]);
    assert!(!ok);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let listed = server
        .get(&c.api_key, "/v1/cable-plans?provider=gotv")
        .await
        .assert_ok()
        .clone();
    assert!(
        !listed
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["plan_id"] == plan.as_str())
    );
    server.cli(&["plan", "enable", &plan]);
}
