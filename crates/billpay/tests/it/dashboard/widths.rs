//! Every customer page at a phone's width (390 px) and a laptop's (1280 px)
//! in a real Chromium: nothing scrolls sideways
//! (`document.documentElement.scrollWidth` within the window), and a
//! screenshot of each at both widths, `page-NAME-phone.png` and
//! `page-NAME-desktop.png` (the test output's `screenshots/`;
//! `BILLPAY_UPDATE_SCREENSHOTS=1` writes both to docs/screenshots, which the
//! README links). The receipts are one of each product, bought through the
//! API with the sandbox supplier.

use super::browser::Browser;
use super::shop::{PIN, set_pin_browser, shopper, sign_in_browser};
use super::*;
use billpay_api_testkit::kind;

/// Looks at `path` at both widths: a screenshot of each, and what scrolls
/// sideways added to `wide`.
async fn both_widths(
    b: &Browser,
    server: &TestServer,
    path: &str,
    name: &str,
    wide: &mut Vec<String>,
) {
    for (width, height, suffix) in [(390, 844, "phone"), (1280, 900, "desktop")] {
        b.client.set_window_size(width, height).await.unwrap();
        b.client.goto(&server.url(path)).await.unwrap();
        // both are the README's (docs/screenshots when asked)
        b.screenshot(&format!("page-{name}-{suffix}")).await;
        if let Some(why) = b.overflow().await {
            wide.push(format!("{path} at {width} px: {why}"));
        }
    }
}

#[tokio::test]
async fn every_customer_page_fits_a_phone_and_a_laptop() {
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "50000");
    let browser = Browser::start().await;
    let b = &browser;
    let mut wide = Vec::new();

    // the pages anyone may open
    for (path, name) in [
        ("/dashboard/login", "login"),
        ("/dashboard/signup", "signup"),
        ("/dashboard/verify", "verify"),
        ("/dashboard/forgot", "forgot"),
        ("/dashboard/reset/not-a-real-token", "reset"),
    ] {
        both_widths(b, &server, path, name, &mut wide).await;
    }

    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;
    // one purchase of each product, through the API, for the receipts
    let mut receipts = Vec::new();
    for (i, k) in kind::ALL.into_iter().enumerate() {
        let body = k.body(&reference(), &format!("{:04}", 2000 + i));
        let code = server.place(&api_key, &k.live(), body).await;
        server.wait_final(&api_key, &code).await;
        receipts.push((k.path(), code));
    }
    let key = server.cli(&["key", "create", "--account", &account]);
    let key_id = key["key_id"].as_str().unwrap().to_owned();

    let mut pages: Vec<(String, String)> = [
        ("/dashboard", "overview"),
        ("/dashboard/account", "account"),
        ("/dashboard/buy", "buy"),
        ("/dashboard/buy/data?phone=08031234567", "buy-data"),
        ("/dashboard/buy/airtime", "buy-airtime"),
        ("/dashboard/buy/electricity", "buy-electricity"),
        ("/dashboard/buy/cable", "buy-cable"),
        ("/dashboard/buy/epin", "buy-epin"),
        ("/dashboard/buy/exam", "buy-exam"),
        ("/dashboard/buy/betting", "buy-betting"),
        ("/dashboard/pin", "pin"),
        ("/dashboard/wallet", "wallet"),
        ("/dashboard/identity", "identity"),
        ("/dashboard/transactions", "transactions"),
        ("/dashboard/keys", "keys"),
        ("/dashboard/webhooks", "webhooks-index"),
        ("/dashboard/beneficiaries", "beneficiaries"),
        ("/dashboard/schedules", "schedules"),
        ("/dashboard/notifications", "notifications"),
    ]
    .into_iter()
    .map(|(p, n)| (p.to_owned(), n.to_owned()))
    .collect();
    pages.push((
        format!("/dashboard/keys/{key_id}/webhooks"),
        "webhooks".into(),
    ));
    let (_, first) = &receipts[0];
    pages.push((
        format!("/dashboard/transactions/{first}"),
        "transaction".into(),
    ));
    for (product, code) in &receipts {
        pages.push((
            format!("/dashboard/receipts/{code}"),
            format!("receipt-{product}"),
        ));
    }
    for (path, name) in &pages {
        both_widths(b, &server, path, name, &mut wide).await;
    }

    // the verify-first forms after their check: the name and what to pay
    b.client.set_window_size(390, 844).await.unwrap();
    b.client
        .goto(&server.url("/dashboard/buy/cable"))
        .await
        .unwrap();
    b.fill("#smartcard-number", "7012345678").await;
    b.click("#verify").await;
    b.fill("#pin", PIN).await;
    wide.extend(b.overflow().await.map(|w| format!("cable, checked: {w}")));
    b.client
        .goto(&server.url("/dashboard/buy/electricity"))
        .await
        .unwrap();
    b.fill("#meter-number", "45012345678").await;
    b.fill("#amount", "5000").await;
    b.click("#verify").await;
    wide.extend(
        b.overflow()
            .await
            .map(|w| format!("electricity, checked: {w}")),
    );
    assert!(
        wide.is_empty(),
        "pages that scroll sideways:\n{}",
        wide.join("\n")
    );

    // the nav reaches every page of the shop and the account at 390 px (a
    // developer's: the operator opened the account); the PIN and the
    // notification choices are the Account page's
    b.client.goto(&server.url("/dashboard")).await.unwrap();
    for href in [
        "/dashboard/buy",
        "/dashboard/wallet",
        "/dashboard/transactions",
        "/dashboard/beneficiaries",
        "/dashboard/schedules",
        "/dashboard/account",
        "/dashboard/keys",
        "/dashboard/webhooks",
    ] {
        let link = b.css(&format!("header nav a[href='{href}']")).await;
        assert!(link.is_displayed().await.unwrap(), "{href} in the nav");
    }
    b.client
        .goto(&server.url("/dashboard/account"))
        .await
        .unwrap();
    for href in ["/dashboard/pin", "/dashboard/notifications"] {
        let link = b.css(&format!("#account-links a[href='{href}']")).await;
        assert!(link.is_displayed().await.unwrap(), "{href} on Account");
    }
    browser.stop().await;
}
