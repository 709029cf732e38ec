//! Cable TV in the shop (issue 31), in a real Chromium against the sandbox
//! supplier: the provider and smartcard, the subscriber's name first, a
//! bouquet at the customer's own price, the PIN, then the receipt — the same
//! purchase the API reads, charged once. A smartcard the supplier does not
//! know is said so, and nothing is charged. The smartcard's bouquet now (as
//! the supplier's verification says it) is shown and chosen, to renew it;
//! "Buy again" chooses the bouquet bought last.

use super::browser::Browser;
use super::shop::{
    PIN, final_receipt, receipt_code, screenshots, set_pin_browser, shopper, sign_in_browser,
};
use super::*;

const SMARTCARD: &str = "7012345678";

async fn check_smartcard(b: &Browser, server: &TestServer, smartcard: &str) {
    b.client
        .goto(&server.url("/dashboard/buy/cable"))
        .await
        .unwrap();
    b.css("#provider option[value='dstv']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#smartcard-number", smartcard).await;
    b.click("#verify").await;
}

#[tokio::test]
async fn a_customer_checks_a_smartcard_and_buys_a_bouquet_in_a_browser() {
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "20000");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;

    // the shop's home offers cable TV
    b.client.goto(&server.url("/dashboard/buy")).await.unwrap();
    b.css("a[href='/dashboard/buy/cable']").await;

    // a smartcard the supplier does not know: said so, nothing to pay
    check_smartcard(b, &server, "7012340000").await;
    let refused = b.text("#buy-error").await;
    assert!(refused.contains("No subscriber"), "{refused}");

    // the subscriber's name first, then the bouquets at the customer's price
    check_smartcard(b, &server, SMARTCARD).await;
    assert!(!b.text("#verified-name").await.is_empty());
    assert_eq!(b.text("#verified-smartcard").await, SMARTCARD);
    // the bouquet the supplier says the smartcard has now, chosen to renew
    assert_eq!(b.text("#current-bouquet").await, "DStv Yanga");
    assert_eq!(b.text("#renewal-amount").await, "₦6,000.00");
    assert!(b.text("#current-note").await.contains("To renew it"));
    let current = b.css("input[value='dstv-yanga']").await;
    assert_eq!(
        current.prop("checked").await.unwrap().as_deref(),
        Some("true"),
        "the current bouquet is chosen"
    );
    let tag = b
        .text("label.plan:has(input[value='dstv-yanga']) #current-tag")
        .await;
    assert_eq!(tag, "your bouquet");
    screenshots(b, "cable-current").await;
    let price = b.text("[data-plan='dstv-padi']").await;
    assert_eq!(price, "₦4,400.00", "the catalogue's list price (no tier)");
    b.css("input[value='dstv-padi']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#pin", PIN).await;
    screenshots(b, "cable").await;
    b.css("input[value='dstv-padi']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#pin", PIN).await;
    b.click("#buy").await;
    let code = receipt_code(b).await;
    assert_eq!(final_receipt(b).await, "successful");
    assert_eq!(b.text("#charged").await, price);
    assert_eq!(b.text("#receipt-recipient").await, SMARTCARD);
    screenshots(b, "cable-receipt").await;

    // the API's own purchase: cable, the bouquet, charged once
    let done = server.wait_final(&api_key, &code).await;
    assert_eq!(done["event"], "cable.purchase", "{done}");
    assert_eq!(done["amount"].as_f64().unwrap(), 4400.0);
    let statement = server.assert_ledger_consistent(&account);
    assert_eq!(statement["balance"].as_f64().unwrap(), 15_600.0);

    // "buy again": the same smartcard and bouquet, checked again (a renewal)
    let again = b
        .css("#buy-again")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    assert!(again.contains("plan_id=dstv-padi"), "{again}");
    b.click("#buy-again").await;
    b.click("#verify").await;
    let chosen = b.css("input[value='dstv-padi']").await;
    assert_eq!(
        chosen.prop("checked").await.unwrap().as_deref(),
        Some("true"),
        "the bouquet bought last time is chosen"
    );
    browser.stop().await;
}

/// The same over plain HTTP: a bouquet of another provider, or none, is
/// refused with a sentence and charges nothing.
#[tokio::test]
async fn a_bouquet_of_another_provider_is_refused_and_charges_nothing() {
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "20000");
    let (cookie, csrf) = super::shop::http_shopper(&server, &email).await;
    let post = |plan: &'static str, reference: &'static str| {
        let (cookie, csrf, url) = (
            cookie.clone(),
            csrf.clone(),
            server.url("/dashboard/buy/cable"),
        );
        async move {
            no_redirects()
                .post(url)
                .header("Cookie", cookie)
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("reference", reference),
                    ("provider_id", "dstv"),
                    ("smartcard_number", SMARTCARD),
                    ("plan_id", plan),
                    ("pin", PIN),
                ])
                .send()
                .await
                .unwrap()
        }
    };
    for (plan, reference) in [("gotv-smallie", "web-cable-other"), ("", "web-cable-none")] {
        let answer = post(plan, reference).await;
        assert_eq!(answer.status(), 422, "{plan:?}");
        let page = answer.text().await.unwrap();
        assert!(page.contains("id=\"buy-error\""), "{plan:?}: {page}");
    }
    assert_eq!(server.balance(&api_key).await, 20000.0, "nothing charged");
    let bought = post("dstv-padi", "web-cable-right").await;
    assert_eq!(bought.status(), 303);
    server.wait_final(&api_key, &receipt_of(&bought)).await;
    assert_eq!(server.balance(&api_key).await, 15_600.0);
    server.assert_ledger_consistent(&account);
}

/// Through VTpass (its fake, written from the docs): the shop shows the
/// bouquet its merchant-verify names, in either form (DStv: codes and the
/// renewal a number; GOtv: no code, the renewal text), and chooses the
/// catalogue's bouquet it is; the API's verify answer is as before (the
/// contract has no such field).
#[tokio::test]
async fn the_bouquet_vtpass_names_is_shown_and_chosen() {
    use crate::support::vtpass::FakeVtpass;
    let fake = FakeVtpass::start().await;
    let server = crate::vtpass::server_with(&fake, &[]).await;
    let (_, api_key, email) = shopper(&server, "1000");
    let cookie = sign_in(&server, &email, PASSWORD).await.unwrap();
    let csrf = csrf_in(&html_of(&server, &cookie, "/dashboard/buy/cable").await);
    let check = |provider: &'static str| {
        let (cookie, csrf, url) = (
            cookie.clone(),
            csrf.clone(),
            server.url("/dashboard/buy/cable/verify"),
        );
        async move {
            let answer = no_redirects()
                .post(url)
                .header("Cookie", cookie)
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("reference", ""),
                    ("provider_id", provider),
                    ("smartcard_number", "1212121212"),
                    ("plan_id", ""),
                ])
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 200);
            answer.text().await.unwrap()
        }
    };
    let dstv = check("dstv").await;
    assert!(
        dstv.contains(
            "<dd id=\"current-bouquet\">DStv Compact N19000 + ExtraView Access N5000</dd>"
        ),
        "{dstv}"
    );
    assert!(
        dstv.contains("<dd id=\"renewal-amount\">₦24,000.00</dd>"),
        "{dstv}"
    );
    assert!(
        dstv.contains("value=\"dstv-compact\" checked"),
        "by its code"
    );
    let gotv = check("gotv").await;
    assert!(
        gotv.contains("<dd id=\"current-bouquet\">GOtv Jolli</dd>"),
        "{gotv}"
    );
    assert!(
        gotv.contains("<dd id=\"renewal-amount\">₦5,800.00</dd>"),
        "{gotv}"
    );
    assert!(gotv.contains("value=\"gotv-jolli\" checked"), "by its name");
    let api = server
        .post(
            &api_key,
            "/v1/cable/verify",
            serde_json::json!({ "provider_id": "dstv", "smartcard_number": "1212121212" }),
        )
        .await;
    let data = api.assert_ok();
    assert_eq!(data["customer_name"], "TEST METER");
    assert!(data.get("current_bouquet").is_none(), "{data}");
}
