//! Two real suppliers at once: routes that fail over from VTpass to
//! ClubKonnect only on a definite failure, products only ClubKonnect sells,
//! both floats, and the catalogue sync with ClubKonnect's plan list.

use super::*;

/// VTpass and ClubKonnect configured, VTpass the default, with `routes`.
async fn both(
    vtpass: &FakeVtpass,
    clubkonnect: &FakeClubkonnect,
    routes: &str,
) -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("billpay.toml");
    std::fs::write(&config, format!("[routes]\n{routes}")).unwrap();
    let mut env = vtpass.env();
    env.extend(clubkonnect.env());
    env.push(("BILLPAY_CONFIG", config.to_str().unwrap().to_owned()));
    env.push(("BILLPAY_VTPASS_TIMEOUT_MS", "1000".into()));
    env.push(("BILLPAY_CLUBKONNECT_TIMEOUT_MS", "1000".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // The directory first: it must outlive the server, whose last audit reads the file.
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    (dir, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vtpass_definite_failures_fail_over_to_clubkonnect_and_unknowns_never_do() {
    let vtpass = FakeVtpass::start().await;
    let clubkonnect = FakeClubkonnect::start().await;
    let routes = "airtime = [\"vtpass\", \"clubkonnect\"]\nelectricity = [\"vtpass\", \"clubkonnect\"]\nbetting = [\"clubkonnect\"]\nepin = [\"clubkonnect\"]\n";
    let (_dir, server) = both(&vtpass, &clubkonnect, routes).await;
    let who = server.customer("20000");

    // VTpass did not charge (091): ClubKonnect delivers; the transaction says so.
    let not_charged = "08000000091";
    let code = buy(&server, &who, "airtime", airtime(not_charged)).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(
        served_by(&server, &code),
        ("clubkonnect".into(), code.clone())
    );
    assert_eq!(
        (
            vtpass.pay_calls_for(not_charged).len(),
            vtpass.sales_for(not_charged)
        ),
        (1, 0)
    );
    assert_eq!(clubkonnect.purchases_for(not_charged).len(), 1);

    // VTpass failed it (016): ClubKonnect is asked; it refuses too (417): refunded once.
    let code = buy(&server, &who, "airtime", airtime("08000000016")).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(served_by(&server, &code).0, "clubkonnect");

    // An HTML page from VTpass is an unknown outcome: never sent elsewhere.
    let meter = "500000000000";
    let body = json!({ "provider_id": "ikeja-electric", "amount": 1000, "meter_number": meter, "meter_type": 1 });
    let code = buy(&server, &who, "electricity", body).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(served_by(&server, &code).0, "vtpass");
    assert!(clubkonnect.purchases_for(meter).is_empty());

    // What only ClubKonnect sells goes there.
    let bet = json!({ "provider_id": "sportybet", "customer_id": "777", "amount": 1000 });
    let code = buy(&server, &who, "bet", bet).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(served_by(&server, &code).0, "clubkonnect");
    assert_eq!(
        clubkonnect.purchases_for("777")[0]["BettingCompany"],
        "sportybet"
    );

    assert_eq!(
        server.balance(&who.api_key).await,
        20000.0 - 2.0 * 500.0 - 1000.0 - 1000.0
    );
    server.assert_ledger_consistent(&who.account_id);

    // Both floats, each with its warning.
    // Both floats, each with its warning (ClubKonnect sold us ₦500 + ₦500 + ₦1,000;
    // VTpass its electricity and the 016 it failed, less its commission).
    let floats = server.cli(&["supplier", "balance", "--supplier-low-balance", "248200"]);
    let listed = floats["suppliers"].as_array().unwrap();
    let names: Vec<&str> = listed
        .iter()
        .map(|s| s["supplier"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["vtpass", "clubkonnect"], "{floats}");
    let vtpass_float = listed[0]["balance"].as_f64().unwrap();
    assert!((248_200.0..250_000.0).contains(&vtpass_float), "{floats}");
    assert_eq!(listed[0]["low"], false, "{floats}");
    assert_eq!(listed[1]["balance"].as_f64(), Some(248_000.0), "{floats}");
    assert_eq!(listed[1]["low"], true, "{floats}");
}

#[tokio::test]
async fn data_fails_over_by_plan_code_and_both_refusing_refunds_once() {
    let vtpass = FakeVtpass::start().await;
    let clubkonnect = FakeClubkonnect::start().await;
    let (_dir, server) = both(
        &vtpass,
        &clubkonnect,
        "data = [\"vtpass\", \"clubkonnect\"]\n",
    )
    .await;
    let who = server.customer("5000");
    // VTpass: 091 not charged; ClubKonnect has the plan's code …
    let body = json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": "08000000091" });
    let code = buy(&server, &who, "data", body).await;
    let status = server.wait_final(&who.api_key, &code).await;
    // … which ClubKonnect delivers.
    assert_eq!(status["status"], "successful", "{status}");
    assert_eq!(
        clubkonnect.purchases_for("08000000091")[0]["DataPlan"],
        "1000.0"
    );
    // A plan ClubKonnect has no code for is not bought there: both
    // refused it, so it failed and was refunded once.
    let body =
        json!({ "provider_id": "mtn", "plan_id": "mtn-gifting-1gb", "phone": "08000000091" });
    let code = buy(&server, &who, "data", body).await;
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "failed", "{status}");
    assert_eq!(clubkonnect.purchases_for("08000000091").len(), 1);
    let price = server.cli(&["catalogue", "export"])["catalogue"]["data_plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_id"] == "mtn-sme-1gb")
        .unwrap()["price"]
        .as_f64()
        .unwrap();
    assert_eq!(server.balance(&who.api_key).await, 5000.0 - price);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test]
async fn sync_clubkonnect_compares_its_plan_list_before_applying() {
    let fake = FakeClubkonnect::start().await;
    fake.set_data_plans(
        "01",
        "MTN",
        &[
            ("500.0", "500 MB - 7 days (SME)", "400.00"),
            ("1000.0", "1 GB - 30 days (SME)", "777.00"),
            ("2000.0", "2 GB (SME)", "1500.00"),
            ("25000.0", "25 GB (SME)", "9000.00"),
        ],
    );
    let server = server_with(&fake, &[]).await;
    let shown = server.cli(&["catalogue", "sync-clubkonnect"]);
    let differences = shown["differences"].as_array().unwrap();
    let has = |kind: &str, field: &str, value: &str| {
        differences
            .iter()
            .any(|d| d["kind"] == kind && d[field] == value)
    };
    assert!(has("price", "plan_id", "mtn-sme-1gb"), "{shown}");
    assert!(has("new", "variation_code", "25000.0"), "{shown}");
    assert!(has("missing", "plan_id", "mtn-sme-3gb"), "{shown}");
    assert_eq!(shown["applied"], false);
    let applied = server.cli(&["catalogue", "sync-clubkonnect", "--apply"]);
    assert_eq!(applied["applied"], true, "{applied}");
    let plans = server.cli(&["catalogue", "export"])["catalogue"]["data_plans"].clone();
    let plan = |id: &str| {
        plans
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["plan_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(plan("mtn-sme-1gb")["price"].as_f64(), Some(777.0));
    assert_eq!(plan("mtn-sme-3gb")["active"], false);
}
