//! The owner's money pages in a real headless Chromium: assign an unmatched
//! payment (from the fake Monnify) with a reason, see it credited on the
//! Funding page and in the operator log, read the sales report and the
//! suppliers, and the overview's figures and chart. Screenshots of each
//! page (docs/screenshots with BILLPAY_UPDATE_SCREENSHOTS=1).

use super::journey::{accept_confirms, sign_in};
use super::*;
use crate::dashboard::browser::Browser;
use crate::funding::gateways::Setup;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_assigns_a_payment_and_reads_the_money_pages_in_a_browser() {
    let setup = Setup::start(&[("BILLPAY_FUNDING_FEE_PERCENT", "1.5")]).await;
    let server = &setup.server;
    add_operators(server);
    let customer = server.customer("5000");
    for amount in [1000, 2500] {
        let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": amount, "reference": reference()});
        let code = server
            .place(&customer.api_key, "/v1/airtime/purchase", body)
            .await;
        server.wait_final(&customer.api_key, &code).await;
    }
    let fake = &setup.fakes[0];
    let transfer = fake.transfer(None, None, 20_000.0);
    let (status, _) = setup.post_webhook(fake, fake.webhook(&transfer)).await;
    assert_eq!(status, 200);
    // another, left unmatched: the screenshot shows its assign form
    let other = fake.transfer(None, None, 7_500.0);
    let (status, _) = setup.post_webhook(fake, fake.webhook(&other)).await;
    assert_eq!(status, 200);
    let browser = Browser::start().await;
    let b = &browser;
    sign_in(b, server, OWNER).await;

    // the unmatched payment, assigned with a reason
    b.client
        .goto(&server.url("/admin/funding?status=unmatched"))
        .await
        .unwrap();
    let row = format!("#funding tr[data-reference='{transfer}']");
    let form = format!("#funding form[data-for='{transfer}']");
    assert!(b.text(&row).await.contains("unmatched"));
    accept_confirms(b).await;
    b.fill(&format!("{form} input[name=account]"), &customer.account_id)
        .await;
    b.fill(
        &format!("{form} input[name=reason]"),
        "Payer Ada Obi, her bank's receipt",
    )
    .await;
    b.click(&format!("{form} button")).await;
    let done = b.text("#done").await;
    assert!(done.contains("payment credited"), "{done}");
    assert_eq!(
        server.balance(&customer.api_key).await,
        5_000.0 - 3_500.0 + 19_700.0
    );
    b.client
        .goto(&server.url("/admin/funding?status=credited"))
        .await
        .unwrap();
    let credited = b.text(&row).await;
    assert!(
        credited.contains("credited") && credited.contains("₦300.00"),
        "{credited}"
    );
    b.client.goto(&server.url("/admin/funding")).await.unwrap();
    let still = format!("#funding tr[data-reference='{other}']");
    assert!(b.text(&still).await.contains("unmatched"));
    b.css(&format!("#funding form[data-for='{other}']")).await;
    let assigned_form = b.client.find(fantoccini::Locator::Css(&form)).await;
    assert!(
        assigned_form.is_err(),
        "no assign form on a credited payment"
    );
    b.screenshot("console-funding").await;
    b.client.goto(&server.url("/admin/log")).await.unwrap();
    let log = b.text("#log").await;
    assert!(
        log.contains("funding.assign") && log.contains("Payer Ada Obi, her bank's receipt"),
        "{log}"
    );

    // the sales report by product, and the suppliers
    b.client.goto(&server.url("/admin/reports")).await.unwrap();
    b.client
        .find(fantoccini::Locator::Css("#r-by"))
        .await
        .unwrap()
        .select_by_value("product")
        .await
        .unwrap();
    b.click("#run-report").await;
    assert!(b.text("#report").await.contains("airtime"));
    assert_eq!(b.text("#report-total td:nth-child(4)").await, "₦3,500.00");
    assert_eq!(b.text("#funding-fees").await, "₦300.00");
    b.screenshot("console-reports").await;
    b.client
        .goto(&server.url("/admin/suppliers"))
        .await
        .unwrap();
    assert!(b.text("#floats").await.contains("keeps no float"));
    assert!(b.text("#routes").await.contains("sandbox"));
    let successful = b
        .text("#outcomes tr[data-supplier='sandbox'] td:nth-child(2)")
        .await;
    assert_eq!(successful, "2");
    b.screenshot("console-suppliers").await;

    // the overview: today's sales and funding, the chart
    b.client.goto(&server.url("/admin")).await.unwrap();
    assert_eq!(b.text("#period-1 .sales-count").await, "2");
    assert_eq!(b.text("#period-1 .sales-value").await, "₦3,500.00");
    assert_eq!(b.text("#period-1 .funding").await, "₦20,000.00");
    b.css("#sales-chart").await;
    b.screenshot("console-overview").await;
    browser.stop().await;
}
