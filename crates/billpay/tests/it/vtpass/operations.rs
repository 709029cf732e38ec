//! Operating VTpass: the float, routes that fail over, catalogue codes and
//! their sync, and keys that never reach the logs.

use super::*;

#[tokio::test]
async fn the_sandbox_has_no_float_nor_plan_list_and_unknown_suppliers_are_named() {
    let server = TestServer::spawn().await;
    let (ok, answer) = server.cli_result(&["supplier", "balance"]);
    assert!(
        !ok && answer
            .to_string()
            .contains("BILLPAY_SUPPLIER=vtpass|clubkonnect"),
        "{answer}"
    );
    let (ok, answer) = server.cli_result(&["catalogue", "sync"]);
    assert!(
        !ok && answer
            .to_string()
            .contains("sandbox supplier publishes no plan list"),
        "{answer}"
    );
    let (ok, answer) = server.cli_result(&["supplier", "balance", "--supplier", "acme"]);
    assert!(
        !ok && answer
            .to_string()
            .contains("the suppliers are sandbox, vtpass, clubkonnect"),
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

/// Two providers with a few plans (one mapped to its VTpass code each way); also the console's sync test.
pub const SMALL_CATALOGUE: &str = r#"
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
codes = { vtpass = { variation_code = "dstv-padi-vt" } }
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
    fake.set_variations("dstv", &[("dstv-padi-vt", "DStv Padi", "4400.00")]);

    // A plan's VTpass code is what VTpass receives, in the old flat form
    // (`vtpass_variation_code`, mtn-1gb) as in the `codes` form (dstv-padi).
    let who = server.customer("5000");
    let phone = "08044444444";
    let data = json!({ "provider_id": "mtn", "plan_id": "mtn-1gb", "phone": phone });
    let code = buy(&server, &who, "data", data).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(fake.pay_calls_for(phone)[0]["variation_code"], "mtn-1gb-vt");
    let card = json!({ "provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": "1212121212", "phone": "08055555555" });
    let code = buy(&server, &who, "cable", card).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(
        fake.pay_calls_for("1212121212")[0]["variation_code"],
        "dstv-padi-vt"
    );

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
    let again = server.cli(&["catalogue", "sync", "--supplier", "vtpass"]);
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
