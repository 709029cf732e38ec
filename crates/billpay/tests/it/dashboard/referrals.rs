//! "Refer" in a real Chromium at 390 px (issue 49): the referrer sees their
//! code, link and WhatsApp share; after a referee who signed up through the
//! link buys, the commission is on the page, and the referrer moves it to
//! the wallet with the form (once). Runs on the test backend
//! (`BILLPAY_TEST_BACKEND`).

use super::browser::Browser;
use super::shop::{shopper, sign_in_browser};
use super::sign_up::OPEN;
use super::*;
use crate::referrals::{email, signed_up};
use serde_json::json;

#[tokio::test]
async fn a_referrer_shares_the_link_and_moves_the_commission_from_the_phone() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    server.cli(&[
        "referrals",
        "set",
        "--product",
        "airtime",
        "--percent",
        "2.5",
    ]);
    let (_, api_key, mail) = shopper(&server, "1");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in_browser(b, &server, &mail).await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.client
        .goto(&server.url("/dashboard/referrals"))
        .await
        .unwrap();
    assert!(b.text("#nav-referrals").await.contains("Refer"));
    let code = b.text("#referral-code").await;
    assert_eq!(code.len(), 7, "{code}");
    let link = b
        .css("#referral-link")
        .await
        .attr("value")
        .await
        .unwrap()
        .unwrap();
    assert!(
        link.ends_with(&format!("/dashboard/signup?ref={code}")),
        "{link}"
    );
    let share = b
        .css("#share-whatsapp")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    assert!(
        share.starts_with("https://wa.me/?text=") && share.contains(&code),
        "{share}"
    );
    assert!(b.text("#no-referees").await.contains("No one"));
    assert!(
        b.text("#rates")
            .await
            .contains("2.50% of what they pay for airtime")
    );

    // a referee signs up through the link and buys ₦1,000 of airtime
    let path = format!("/dashboard/signup?ref={code}");
    let (referee, _) = signed_up(&server, &path, &email(), "08031119999", "2000").await;
    let body = json!({ "provider_id": "mtn", "phone": "08031234567", "amount": 1000,
                       "reference": crate::support::reference() });
    let bought = server
        .place(&referee.api_key, "/v1/airtime/purchase", body)
        .await;
    assert_eq!(
        server.wait_final(&referee.api_key, &bought).await["status"],
        "successful"
    );

    b.client.refresh().await.unwrap();
    assert_eq!(b.text("#bonus-balance").await, "₦25.00");
    assert!(b.text("#referees").await.contains("A** O**"));
    b.fits_the_width("the referrals page").await;
    b.screenshot("referrals-phone").await;

    b.fill("#move-amount", "25").await;
    b.click("#move-bonus").await;
    assert!(
        b.text("#bonus-moved")
            .await
            .contains("Moved ₦25.00 to your wallet")
    );
    assert_eq!(b.text("#bonus-balance").await, "₦0.00");
    assert_eq!(server.balance(&api_key).await, 26.0, "₦1 it had, ₦25 moved");
    b.fits_the_width("the referrals page after a move").await;
    b.screenshot("referrals-moved-phone").await;
    browser.stop().await;
}
