//! Two SME-data sites at once (issue 47): with `[routing] data =
//! "cheapest"` every data purchase goes to the site whose expected cost is
//! lower, whatever the listed order; when that site refuses us (its token
//! rotated), purchases fail over to the other, it is skipped while it backs
//! off, and its first purchase after the back-off brings it back. Each
//! purchase is one order at one site.

use super::*;

/// Sets `codes.<site>.cost` (the expected cost routing reads) of the 1 GB
/// SME plan, by importing the exported catalogue with it.
fn expect_cost(server: &TestServer, site: &str, naira: &str) {
    let (ok, toml, _) = crate::cli::run_text(server, &["catalogue", "export"]);
    assert!(ok);
    let block = format!("[data_plans.codes.{site}]\nplan = \"6\"");
    assert!(
        toml.contains(&block),
        "{site}'s code of the plan is exported"
    );
    let edited = toml.replacen(&block, &format!("{block}\ncost = \"{naira}\""), 1);
    let file = server.path().join(format!("catalogue-cost-{site}.toml"));
    std::fs::write(&file, edited).unwrap();
    server.cli(&["catalogue", "import", file.to_str().unwrap()]);
}

fn state_of(server: &TestServer, site: &str) -> String {
    let shown = server.cli(&["supplier", "health"]);
    let all = shown["suppliers"].as_array().unwrap();
    let found = all.iter().find(|s| s["supplier"] == site);
    found.map_or(String::new(), |s| s["state"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cheaper_site_gets_the_data_and_a_site_that_refuses_us_is_skipped_until_it_is_back() {
    let dear = FakeSmedata::start_with(200, false, &SCRIPT_NETWORKS).await;
    let cheap = FakeSmedata::start_with(201, false, &SCRIPT_NETWORKS).await;
    cheap.set_plans(vec![(6, 1, "SME", "1.0GB", "280", "230")]);
    let routes = "data = [\"dear\", \"cheap\"]\n[routing]\ndata = \"cheapest\"\nfailures = 2\nbackoff_secs = 2";
    let server = sites(&[("dear", &dear, ""), ("cheap", &cheap, "")], routes, &[]).await;
    expect_cost(&server, "dear", "250");
    expect_cost(&server, "cheap", "230");
    let who = server.customer("10000");

    // Listed second, but cheaper: it gets the purchase, at its real cost.
    let first = "08031200001";
    let code = buy(&server, &who, "data", data(first)).await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(served_by(&server, &code).0, "cheap");
    assert_eq!((cheap.orders_for(first), dear.orders_for(first)), (1, 0));
    assert!(dear.posts_for(first).is_empty());
    assert_eq!(
        shown(&server, &code)["transaction"]["cost"].as_f64(),
        Some(230.0)
    );

    // The cheap site refuses our token: each purchase fails over to the
    // other (a 401 is a refusal before anything was taken), and after two
    // in a row the cheap site is skipped while it backs off.
    cheap.rotate_token();
    for phone in ["08031200002", "08031200003"] {
        let code = buy(&server, &who, "data", data(phone)).await;
        assert_eq!(
            server.wait_final(&who.api_key, &code).await["status"],
            "successful"
        );
        assert_eq!(served_by(&server, &code).0, "dear");
        assert_eq!((cheap.orders_for(phone), dear.orders_for(phone)), (0, 1));
    }
    assert_eq!(state_of(&server, "cheap"), "backing off");
    let skipped = "08031200004";
    let code = buy(&server, &who, "data", data(skipped)).await;
    server.wait_final(&who.api_key, &code).await;
    assert_eq!(served_by(&server, &code).0, "dear");
    assert!(
        cheap.posts_for(skipped).is_empty(),
        "skipped while it backs off"
    );

    // Given our token back and the back-off over, the next purchase is the
    // probe: the cheap site delivers it and gets the volume again.
    cheap.restore_token();
    until("the back-off to end", || {
        state_of(&server, "cheap") == "probing"
    })
    .await;
    for phone in ["08031200005", "08031200006"] {
        let code = buy(&server, &who, "data", data(phone)).await;
        assert_eq!(
            server.wait_final(&who.api_key, &code).await["status"],
            "successful"
        );
        assert_eq!(served_by(&server, &code).0, "cheap", "{phone}");
        assert_eq!(dear.orders_for(phone), 0);
    }
    assert_eq!(state_of(&server, "cheap"), "healthy");
    server.assert_ledger_consistent(&who.account_id);
}
