//! Answers lost on the way back (an HTML 502 page, a dropped connection, an
//! answer slower than the timeout): the order is looked for at the same
//! site, never bought again there or elsewhere; a charge with no order at
//! all goes to the operator's review, neither refunded nor delivered.

use super::*;

/// Each lost answer ends as the order the site made, found in its listing;
/// the second site of the route never sees the purchase.
async fn lost_answers_are_found_and_never_bought_twice(
    server: &TestServer,
    site: &FakeSmedata,
    other: &FakeSmedata,
) {
    let who = server.customer("5000");
    let price = sme_1gb_price(server);
    site.other_orders(20); // a listing of two pages
    let mut codes = Vec::new();
    for number in ["08000000502", "08000000000", "08000000300"] {
        codes.push((number, buy(server, &who, "data", data(number)).await));
    }
    for (number, code) in &codes {
        let status = server.wait_final(&who.api_key, code).await;
        assert_eq!(status["status"], "successful", "{number}: {status}");
        assert_eq!(site.posts_for(number).len(), 1, "{number}: sent once");
        assert_eq!(site.orders_for(number), 1, "{number}: one order");
        assert!(
            other.posts_for(number).is_empty(),
            "{number}: never elsewhere"
        );
        // Found: the site's id recorded, its real cost too.
        let id = site.order_id(number).unwrap().to_string();
        assert_eq!(served_by(server, code), ("first".into(), id), "{number}");
        assert_eq!(
            shown(server, code)["transaction"]["cost"].as_f64(),
            Some(250.0),
            "{number}"
        );
    }
    assert!(site.listing_reads() >= 1, "looked for in the listing");
    assert_eq!(server.balance(&who.api_key).await, 5000.0 - 3.0 * price);
    server.assert_ledger_consistent(&who.account_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_answers_are_found_in_the_sites_listing() {
    let site = FakeSmedata::start().await;
    let other = FakeSmedata::start().await;
    site.set_slow(Duration::from_millis(2500));
    let server = sites(
        &[("first", &site, ""), ("second", &other, "")],
        "data = [\"first\", \"second\"]",
        &[],
    )
    .await;
    lost_answers_are_found_and_never_bought_twice(&server, &site, &other).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_answers_are_found_in_the_sites_listing_on_postgres() {
    let site = FakeSmedata::start().await;
    let other = FakeSmedata::start().await;
    site.set_slow(Duration::from_millis(2500));
    let test = "smedata::lost::lost_answers_are_found_in_the_sites_listing_on_postgres";
    let Some(server) = sites_on_postgres(
        test,
        &[("first", &site, ""), ("second", &other, "")],
        "data = [\"first\", \"second\"]",
        &[],
    )
    .await
    else {
        return;
    };
    lost_answers_are_found_and_never_bought_twice(&server, &site, &other).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_that_takes_our_ident_is_searched_by_it() {
    let site = FakeSmedata::start_with(200, true, &SCRIPT_NETWORKS).await;
    // Glo and Airtel swapped, as one copy numbers them.
    let server = sites(
        &[(
            "first",
            &site,
            "ident = true\nnetworks = { glo = 3, \"9mobile\" = 2 }",
        )],
        "",
        &[],
    )
    .await;
    let who = server.customer("5000");
    let code = buy(&server, &who, "data", data("08000000000")).await;
    let status = server.wait_final(&who.api_key, &code).await;
    assert_eq!(status["status"], "successful", "{status}");
    let sent = &site.posts_for("08000000000")[0];
    assert_eq!(sent["ident"], code.as_str(), "our reference sent as ident");
    assert_eq!(site.orders_for("08000000000"), 1);
    assert_eq!(
        served_by(&server, &code).1,
        site.order_id("08000000000").unwrap().to_string()
    );
    // The configured numbering is what the site receives.
    let code = buy(
        &server,
        &who,
        "airtime",
        json!({ "provider_id": "glo", "amount": 100, "phone": "08051111111" }),
    )
    .await;
    assert_eq!(
        server.wait_final(&who.api_key, &code).await["status"],
        "successful"
    );
    assert_eq!(site.posts_for("08051111111")[0]["network"], 3);
}

/// Charged at the site, no order in its listing: flagged for review at
/// once (the default needs-review time is half an hour), with the evidence;
/// each operator is told so at once, once (the server checks its alerts
/// every second: [`REVIEW_ALERTS`]).
async fn charged_without_an_order_is_reviewed_at_once(
    server: &TestServer,
    site: &FakeSmedata,
    other: &FakeSmedata,
) {
    crate::console::add_operators(server);
    let who = server.customer("5000");
    let number = "08000000500";
    let wallet = site.balance();
    let code = buy(server, &who, "data", data(number)).await;
    until("looked for twice", || site.listing_reads() >= 2).await;
    let tx = shown(server, &code);
    assert_eq!(tx["transaction"]["status"], "processing", "{tx}");
    assert_eq!(tx["needs_review"], true, "{tx}");
    assert!(
        tx["transaction"]["review_requested_at"].is_string(),
        "flagged: {tx}"
    );
    let note = tx["transaction"]["result"]["last_note"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        note.contains("no order found at first"),
        "the evidence: {note}"
    );
    // Each operator is told at once, with what, the site and the evidence.
    let alert = "operator_review_requested";
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let told = loop {
        let told = server.notices_of(alert).await;
        if told.len() >= 2 || std::time::Instant::now() > deadline {
            break told;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let mut to: Vec<&str> = told.iter().map(|n| n.recipient.as_str()).collect();
    to.sort();
    assert_eq!(
        to,
        [crate::console::OWNER, crate::console::SUPPORT],
        "{told:?}"
    );
    for notice in &told {
        let data = &notice.data;
        assert_eq!(data["code"], code.as_str(), "{data}");
        assert_eq!(data["recipient"], number, "{data}");
        assert_eq!(data["supplier"], "first", "{data}");
        let evidence = data["evidence"].as_str().unwrap_or_default();
        assert!(
            evidence.contains("no order found at first for 08000000500"),
            "{data}"
        );
        assert!(data["placed"].as_str().unwrap().ends_with(" WAT"), "{data}");
    }
    // Several checks (and requeries) later, still once each.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(server.notices_of(alert).await.len(), 2, "told once");
    assert_eq!(site.balance(), wallet - 25_000, "the site charged");
    assert_eq!(site.posts_for(number).len(), 1, "never sent again");
    assert!(other.posts_for(number).is_empty(), "never sent elsewhere");
    assert_eq!(
        server.balance(&who.api_key).await,
        5000.0 - sme_1gb_price(server),
        "not refunded on a guess"
    );
    let listed = server.cli(&["transaction", "list", "--needs-review"]);
    assert!(
        listed["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["code"] == code.as_str()),
        "{listed}"
    );
    // The operator checks the site's wallet history and decides: refunded once.
    server.cli(&["transaction", "resolve", &code, "--failed"]);
    assert_eq!(server.balance(&who.api_key).await, 5000.0);
    let listed = server.cli(&["transaction", "list", "--needs-review"]);
    assert!(
        !listed["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["code"] == code.as_str()),
        "resolved, out of the queue: {listed}"
    );
    assert_eq!(shown(server, &code)["needs_review"], false);
}

/// The operators' alerts checked every second (the default is a minute).
const REVIEW_ALERTS: [(&str, &str); 1] = [("BILLPAY_ALERT_INTERVAL_SECS", "1")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charged_without_an_order_goes_to_review_never_refunded_nor_bought_again() {
    let site = FakeSmedata::start().await;
    let other = FakeSmedata::start().await;
    let server = sites(
        &[("first", &site, ""), ("second", &other, "")],
        "data = [\"first\", \"second\"]",
        &REVIEW_ALERTS,
    )
    .await;
    charged_without_an_order_is_reviewed_at_once(&server, &site, &other).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charged_without_an_order_goes_to_review_on_postgres() {
    let site = FakeSmedata::start().await;
    let other = FakeSmedata::start().await;
    let test = "smedata::lost::charged_without_an_order_goes_to_review_on_postgres";
    let Some(server) = sites_on_postgres(
        test,
        &[("first", &site, ""), ("second", &other, "")],
        "data = [\"first\", \"second\"]",
        &REVIEW_ALERTS,
    )
    .await
    else {
        return;
    };
    charged_without_an_order_is_reviewed_at_once(&server, &site, &other).await;
}
