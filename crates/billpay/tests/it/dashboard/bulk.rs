//! Bulk buying in the shop (issue 50): a CSV checked row by row with the
//! total before paying, paid with the PIN as one batch, its progress, and
//! its results as a CSV. In Chromium at 390 px, and over plain HTTP the
//! refusal a browser would not send: a list with a wrong-network row cannot
//! be paid. Each on the test backend.

use super::browser::Browser;
use super::shop::{PIN, set_pin_browser, shopper, sign_in_browser};
use super::*;
use crate::purchases::checks::{balance_kobo, transactions};
use std::time::{Duration, Instant};

/// A wrong network (a Glo number said to be MTN), then the list fixed: three
/// rows (one fails at the supplier), ₦450 in all, paid with the PIN; the
/// batch's page follows it to the end; the results file has every row.
#[tokio::test]
async fn a_business_uploads_a_list_sees_each_row_checked_pays_once_and_downloads_the_results() {
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "10000");
    let browser = Browser::start().await;
    let b = &browser;
    b.client.set_window_size(390, 844).await.unwrap();
    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;
    b.client.goto(&server.url("/dashboard/buy")).await.unwrap();
    b.click("#buy-bulk").await;
    assert_eq!(b.path().await, "/dashboard/bulk");

    let wrong = "phone,amount,network\n08031231001,100\n08051231002,150,mtn\n";
    b.fill("#bulk-csv", wrong).await;
    b.click("#bulk-check-button").await;
    assert_eq!(b.text("#bulk-problems").await, "1 to fix");
    let problem = b.text("tr[data-line='2'] .row-problem").await;
    assert_eq!(problem, "Wrong network: this is a Glo number, not MTN");
    assert!(
        b.client
            .find(fantoccini::Locator::Css("#bulk-pay"))
            .await
            .is_err(),
        "a list with a row to fix cannot be paid"
    );
    b.fits_the_width("the checked list").await;
    b.screenshot("buyer-bulk-check-phone").await;
    assert_eq!(balance_kobo(&server, &api_key).await, 1_000_000);

    let fixed = "phone,amount\n08031231001,100\n08051231002,150\n08031230000,200\n";
    b.fill("#bulk-csv", fixed).await;
    b.click("#bulk-check-button").await;
    assert_eq!(b.text("#bulk-total").await, "₦450.00");
    assert_eq!(
        b.text("tr[data-line='2'] td[data-label='Network']").await,
        "Glo"
    );
    b.fill("#bulk-pin", PIN).await;
    b.click("#bulk-pay-button").await;
    let path = b.path().await;
    assert!(path.starts_with("/dashboard/bulk/bulk-"), "{path}");

    let deadline = Instant::now() + Duration::from_secs(30);
    while b.text("#bulk-status").await != "completed" {
        assert!(Instant::now() < deadline, "the list did not complete");
        tokio::time::sleep(Duration::from_millis(500)).await;
        b.client.refresh().await.unwrap();
    }
    let summary = b.text("#bulk-summary").await;
    assert!(
        summary.starts_with("3 rows: 2 successful, 1 failed and refunded, 0 refused"),
        "{summary}"
    );
    assert_eq!(b.text("#bulk-charged").await, "₦250.00");
    b.fits_the_width("the list's progress").await;
    b.screenshot("buyer-bulk-phone").await;

    let results: String = serde_json::from_value(
        b.client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 fetch(arguments[0]).then(r => r.text()).then(done);",
                vec![serde_json::json!(format!("{path}/results.csv"))],
            )
            .await
            .unwrap(),
    )
    .unwrap();
    let lines: Vec<&str> = results.lines().collect();
    assert_eq!(
        lines[0],
        "row,phone,network,amount_or_plan,status,charged,reference,message"
    );
    assert!(
        lines[2].starts_with("2,08051231002,Glo,₦150.00,successful,₦150.00,BP"),
        "{results}"
    );
    assert!(
        lines[3].starts_with("3,08031230000,MTN,₦200.00,failed,refunded,BP"),
        "{results}"
    );
    assert_eq!(transactions(&server, &account, None).len(), 3);
    assert_eq!(balance_kobo(&server, &api_key).await, 1_000_000 - 25_000);
}

/// Paying a list with a wrong-network row, sent by hand, is refused before
/// anything is bought.
#[tokio::test]
async fn a_list_with_a_wrong_network_row_is_refused_before_paying() {
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "10000");
    let browser = Browser::start().await;
    sign_in_browser(&browser, &server, &email).await;
    set_pin_browser(&browser, &server).await;
    drop(browser);
    let cookie = sign_in(&server, &email, PASSWORD).await.unwrap();
    let csrf = csrf_in(&html_of(&server, &cookie, "/dashboard/bulk").await);
    let form = [
        ("csrf", csrf.as_str()),
        ("product", "airtime"),
        ("csv", "08031231001,100\n08051231002,150,mtn\n"),
        ("reference", "bulk-by-hand-0001"),
        ("pin", PIN),
    ];
    let answer = no_redirects()
        .post(server.url("/dashboard/bulk/pay"))
        .header("Cookie", &cookie)
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 422);
    let page = answer.text().await.unwrap();
    assert!(
        page.contains("Wrong network: this is a Glo number, not MTN"),
        "{page}"
    );
    assert_eq!(balance_kobo(&server, &api_key).await, 1_000_000);
    assert!(transactions(&server, &account, None).is_empty());
    let none = server.get(&api_key, "/v1/batches/bulk-by-hand-0001").await;
    none.assert_error(404, "not_found");
}
