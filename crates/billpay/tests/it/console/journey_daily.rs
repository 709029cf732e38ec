//! The rest of the owner's day in a real headless Chromium, no CLI: run the
//! money audit from the overview, turn TOTP on from My account, reserve a
//! customer's virtual accounts and reconcile a payment whose webhook was
//! lost. Screenshots (docs/screenshots with BILLPAY_UPDATE_SCREENSHOTS=1).

use super::journey::sign_in;
use super::*;
use crate::dashboard::browser::Browser;
use crate::funding::gateways::Setup;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_audits_turns_totp_on_reserves_and_reconciles_in_a_browser() {
    let setup = Setup::start(&[]).await;
    let server = &setup.server;
    add_operators(server);
    let customer = server.customer("0");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in(b, server, OWNER).await;

    b.click("#run-audit").await;
    let checks = billpay_store::audit::check_names().count();
    let passed = format!("Passed: {checks} checks");
    assert!(b.text("#audit-result").await.contains(&passed));
    b.screenshot("console-audit").await;

    b.click("#my-account").await;
    b.click("#offer-totp button").await;
    let uri = b.text("#totp-uri").await;
    let totp = totp_rs::Totp::from_url(&uri).expect("the otpauth URI parses");
    b.fill(
        "#confirm-totp input[name=code]",
        &totp.generate_current().to_string(),
    )
    .await;
    b.click("#confirm-totp button").await;
    assert!(b.text("#done").await.contains("TOTP is on"));
    assert!(b.text("#totp-state").await.contains("on"));
    b.screenshot("console-account").await;

    b.client
        .goto(&server.url(&format!("/admin/customers/{}", customer.account_id)))
        .await
        .unwrap();
    b.fill("#reserve-accounts input[name=bvn]", "22212345678")
        .await;
    b.click("#reserve-accounts button").await;
    assert!(b.text("#done").await.contains("held at the gateway"));
    let number = b.text("#funding-accounts code").await;
    let lost = setup.fakes[0].transfer(Some(&customer.account_id), Some(&number), 2_500.0);

    b.client.goto(&server.url("/admin/funding")).await.unwrap();
    b.click("#reconcile button").await;
    let monnify = ".reconciled[data-gateway='monnify']";
    assert_eq!(b.text(&format!("{monnify} .credited-count")).await, "1");
    let row = b
        .text(&format!("{monnify} tr[data-reference='{lost}']"))
        .await;
    assert!(
        row.contains("credited") && row.contains("₦2,500.00"),
        "{row}"
    );
    assert_eq!(server.balance(&customer.api_key).await, 2_500.0);
    b.screenshot("console-reconciled").await;
    browser.stop().await;
}
