//! "Upgrade" in a real Chromium at 390 px (issue 49): the buyer sees the
//! owner's offer and what it would have saved them, buys it with the PIN
//! (a wrong PIN charges nothing), and is told in Lagos time. Runs on the test backend
//! (`BILLPAY_TEST_BACKEND`).

use super::browser::Browser;
use super::shop::{PIN, set_pin_browser, shopper, sign_in_browser};
use super::*;

#[tokio::test]
async fn a_buyer_upgrades_from_the_phone_with_the_pin() {
    let server = TestServer::spawn().await;
    server.cli(&["tier", "create", "reseller"]);
    let rule = ["--product", "airtime", "--discount-percent", "10"];
    server.cli(&[&["tier", "rule", "reseller"][..], &rule].concat());
    server.cli(&["tier", "offer", "reseller", "--fee", "5000"]);
    let (_, api_key, email) = shopper(&server, "10000");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;
    b.client.set_window_size(390, 844).await.unwrap();

    b.client
        .goto(&server.url("/dashboard/upgrade"))
        .await
        .unwrap();
    assert!(b.text("#nav-upgrade").await.contains("Upgrade"));
    assert!(b.text("#offer-reseller").await.contains("₦5,000.00"));
    assert!(b.text("#savings-reseller").await.contains("no purchases"));
    b.fits_the_width("the upgrade page").await;
    b.screenshot("shop-upgrade-phone").await;

    // a wrong PIN: said, nothing charged
    b.fill("#pin-reseller", "0000").await;
    b.click("#buy-reseller").await;
    assert!(b.text("#upgrade-error").await.contains("Wrong PIN"));
    assert_eq!(server.balance(&api_key).await, 10000.0);

    b.fill("#pin-reseller", PIN).await;
    b.click("#buy-reseller").await;
    let said = b.text("#upgrade-bought").await;
    assert!(
        said.contains("You upgraded to reseller") && said.contains("WAT"),
        "{said}"
    );
    assert!(
        b.text("#current-reseller")
            .await
            .contains("your prices now")
    );
    assert_eq!(server.balance(&api_key).await, 5000.0);
    b.fits_the_width("the upgrade page after buying").await;
    b.screenshot("shop-upgrade-bought-phone").await;

    // the API prices with it at once
    let priced = server.get(&api_key, "/v1/pricing").await;
    assert_eq!(priced.assert_ok()["tier"], "reseller");
    assert_eq!(server.balance(&api_key).await, 5000.0);
    browser.stop().await;
}
