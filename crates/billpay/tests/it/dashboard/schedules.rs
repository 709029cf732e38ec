//! "Repeat this" and the schedules page (issue 50) in a real Chromium at a
//! phone's width (390 px): a receipt's purchase made a daily schedule with
//! the PIN, its first run bought (the same purchase again, through the API's
//! purchase operation), listed with its next run in Lagos time and its
//! history, paused and resumed; the page never scrolls sideways. Its
//! screenshot is `schedules-phone.png` (docs/screenshots).

use super::browser::Browser;
use super::shop::{PIN, set_pin_browser, shopper, sign_in_browser};
use super::*;
use billpay_store::clock::{now_ms, rfc3339};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_receipt_repeated_runs_on_a_schedule_listed_in_lagos_time_at_390_px() {
    let server = TestServer::spawn().await;
    let (_account, api_key, email) = shopper(&server, "5000");
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": reference()});
    let code = server.place(&api_key, "/v1/airtime/purchase", body).await;
    server.wait_final(&api_key, &code).await;

    let browser = Browser::start().await;
    let b = &browser;
    b.client.set_window_size(390, 844).await.unwrap();
    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;
    b.client
        .goto(&server.url(&format!("/dashboard/receipts/{code}")))
        .await
        .unwrap();
    b.fits_the_width("the receipt with Repeat this").await;
    b.css("#repeat-every option[value='day']")
        .await
        .click()
        .await
        .unwrap();
    // the first run now (Lagos time, to the minute)
    let now = billpay_webkit::format::lagos_input(&rfc3339(now_ms()));
    b.client
        .execute(
            "document.getElementById('repeat-first').value = arguments[0]",
            vec![json!(now)],
        )
        .await
        .unwrap();
    b.fill("#repeat-pin", PIN).await;
    b.click("#repeat-submit").await;
    assert_eq!(b.path().await, "/dashboard/schedules");
    assert!(b.text("#schedule-made").await.contains("made"));
    assert!(b.text(".schedule").await.contains("Every day"));

    // its first run is bought: the page shows it once reloaded
    let deadline = Instant::now() + Duration::from_secs(20);
    while b
        .client
        .find(fantoccini::Locator::Css(".runs li[data-outcome='placed']"))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "the first run was never listed");
        tokio::time::sleep(Duration::from_millis(300)).await;
        b.client.refresh().await.unwrap();
    }
    let next = b.text(".next-run").await;
    assert!(next.ends_with("WAT"), "next run in Lagos time: {next}");
    assert!(b.text(".runs").await.contains("Bought"));
    b.fits_the_width("/dashboard/schedules").await;
    b.screenshot("schedules-phone").await;

    // the API sees the same schedule, its run an ordinary purchase
    let listed = server.get(&api_key, "/v1/schedules").await;
    let listed = listed.assert_ok()["schedules"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["every"], "day");
    assert_eq!(listed[0]["runs"], 1);
    assert_eq!(
        server.balance(&api_key).await,
        4000.0,
        "two purchases of ₦500"
    );

    for (button, status) in [("pause", "paused"), ("resume", "active")] {
        b.click(&format!(".schedule button.{button}")).await;
        let now = b.css(".schedule").await.attr("data-status").await.unwrap();
        assert_eq!(now.as_deref(), Some(status), "after {button}");
    }
    browser.stop().await;
}
