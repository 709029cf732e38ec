//! What a buyer met in the shop, fixed (issue 46), in a real Chromium
//! against the sandbox supplier: a saved Eko postpaid meter is bought again
//! as Eko postpaid; a wallet too short for a bouquet sends the buyer to fund
//! it and back to the same form, still filled; the WAEC form shows its price
//! before paying and its receipt names whom it is for; e-pins come with how
//! to load them and their PINs never break inside a group.

use super::browser::Browser;
use super::shop::{
    PIN, final_receipt, receipt_code, screenshots, set_pin_browser, shopper, sign_in_browser,
};
use super::*;

const METER: &str = "45012345678";
const SMARTCARD: &str = "7012345678";

/// The value of a form control (what the browser would send).
async fn value_of(b: &Browser, selector: &str) -> String {
    let element = b.css(selector).await;
    element.prop("value").await.unwrap().unwrap_or_default()
}

#[tokio::test]
async fn a_saved_eko_postpaid_meter_is_bought_again_as_eko_postpaid() {
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "20000");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;

    // first purchase: Eko, postpaid, ₦6,000, saved as "Shop"
    b.client
        .goto(&server.url("/dashboard/buy/electricity"))
        .await
        .unwrap();
    b.css("#provider option[value='eko-electric']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#meter-number", METER).await;
    b.css("#meter-type option[value='2']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#amount", "6000").await;
    b.click("#verify").await;
    assert!(b.text("#verified").await.contains("Sandbox Close"));
    b.fill("#save-as", "Shop").await;
    b.fill("#pin", PIN).await;
    b.click("#buy").await;
    let first = receipt_code(b).await;
    assert_eq!(final_receipt(b).await, "successful");
    // the verified name and address are kept with the purchase
    let receipt = b.text("#receipt").await;
    assert!(receipt.contains("Name on the meter"), "{receipt}");
    assert!(receipt.contains("Sandbox Close, Ikeja"), "{receipt}");
    assert_eq!(
        b.text(".receipt-fact[data-fact='Meter type']").await,
        "Postpaid"
    );
    let again = b
        .css("#buy-again")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    assert!(
        again.contains("provider_id=eko-electric") && again.contains("meter_type=2"),
        "{again}"
    );
    screenshots(b, "receipt-electricity").await;

    // the saved chip fills in every field: Eko, postpaid, the amount
    b.client
        .goto(&server.url("/dashboard/buy/electricity"))
        .await
        .unwrap();
    let chips = b.text("#recipients").await;
    assert!(
        chips.contains("Shop") && chips.contains("postpaid"),
        "{chips}"
    );
    screenshots(b, "electricity-recipients").await;
    b.click("#recipients a.chip.saved").await;
    assert_eq!(value_of(b, "#provider").await, "eko-electric");
    assert_eq!(value_of(b, "#meter-type").await, "2");
    assert_eq!(value_of(b, "#meter-number").await, METER);
    assert_eq!(value_of(b, "#amount").await, "6000.00");
    b.click("#verify").await;
    assert!(b.text("#verified + dl").await.contains("postpaid"));
    b.fill("#pin", PIN).await;
    b.click("#buy").await;
    let second = receipt_code(b).await;
    assert_ne!(first, second);
    assert_eq!(final_receipt(b).await, "successful");
    let bought = server.wait_final(&api_key, &second).await;
    assert_eq!(bought["status"], "successful");
    assert!(
        b.text("#receipt").await.contains("Eko Electricity"),
        "bought again at Eko"
    );
    assert_eq!(
        b.text(".receipt-fact[data-fact='Meter type']").await,
        "Postpaid"
    );
    server.assert_ledger_consistent(&account);
    browser.stop().await;
}

#[tokio::test]
async fn a_wallet_too_short_sends_the_buyer_to_fund_it_and_back_to_the_filled_form() {
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "1000");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;

    b.client
        .goto(&server.url("/dashboard/buy/cable"))
        .await
        .unwrap();
    b.css("#provider option[value='dstv']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#smartcard-number", SMARTCARD).await;
    b.click("#verify").await;
    b.css("input[value='dstv-padi']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#pin", PIN).await;
    b.click("#buy").await;
    let refused = b.text("#buy-error").await;
    assert!(
        refused.contains("₦1,000.00") && refused.contains("₦4,400.00"),
        "amounts as Naira are written: {refused}"
    );
    assert!(refused.contains("₦3,400.00"), "what is missing: {refused}");
    screenshots(b, "short-of-money").await;

    // to the wallet, which offers the way back
    b.click("#fund-wallet").await;
    assert_eq!(b.path().await, "/dashboard/wallet");
    b.css("#back-to-purchase").await;
    screenshots(b, "wallet-back-to-purchase").await;
    server.cli(&[
        "wallet",
        "credit",
        "--account",
        &account,
        "--amount",
        "5000",
        "--reference",
        &format!("topup-{}", rand_suffix()),
    ]);

    // back: the smartcard named again, the bouquet still chosen
    b.click("#back-to-buy").await;
    assert!(!b.text("#verified-name").await.is_empty());
    assert_eq!(b.text("#verified-smartcard").await, SMARTCARD);
    let padi = b.css("input[value='dstv-padi']").await;
    assert_eq!(
        padi.prop("checked").await.unwrap().as_deref(),
        Some("true"),
        "the bouquet chosen before is still chosen"
    );
    b.fill("#pin", PIN).await;
    b.click("#buy").await;
    let code = receipt_code(b).await;
    assert_eq!(final_receipt(b).await, "successful");
    assert_eq!(
        server.wait_final(&api_key, &code).await["status"],
        "successful"
    );
    // the subscriber's verified name is on the receipt
    assert!(
        !b.text(".receipt-fact[data-fact='Subscriber']")
            .await
            .is_empty()
    );
    server.assert_ledger_consistent(&account);
    browser.stop().await;
}

#[tokio::test]
async fn the_waec_price_is_shown_before_paying_and_its_receipt_is_filled() {
    let server = TestServer::spawn().await;
    let (account, _api_key, email) = shopper(&server, "20000");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;

    // the tile names only the exam bodies on sale
    b.client.goto(&server.url("/dashboard/buy")).await.unwrap();
    let tile = b.text("#buy-exam").await;
    assert!(tile.contains("WAEC and JAMB"), "{tile}");
    assert!(!tile.contains("NECO") && !tile.contains("NABTEB"), "{tile}");

    b.client
        .goto(&server.url("/dashboard/buy/exam"))
        .await
        .unwrap();
    let waec = b.text("#provider option[value='waec']").await;
    assert!(waec.contains("₦3,900.00"), "{waec}");
    assert!(b.text("#exam-prices").await.contains("₦3,900.00"));
    assert!(
        b.client
            .find(fantoccini::Locator::Css("#provider option[value='neco']"))
            .await
            .is_err()
    );
    screenshots(b, "exam").await;
    b.css("#provider option[value='waec']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#quantity", "2").await;
    b.fill("#pin", PIN).await;
    b.click("#buy").await;
    assert_eq!(final_receipt(b).await, "successful");
    assert_eq!(b.text("#charged").await, "₦7,800.00");
    let recipient = b.text("#receipt-recipient").await;
    assert_eq!(recipient, "You: the 2 pins are below");
    let share = b.css("#share").await.prop("value").await.unwrap().unwrap();
    assert!(share.starts_with("2 × WAEC PIN\n"), "{share}");
    screenshots(b, "receipt-exam").await;
    server.assert_ledger_consistent(&account);
    browser.stop().await;
}

#[tokio::test]
async fn e_pins_say_how_to_load_them_and_a_pin_never_breaks_inside_a_group() {
    let server = TestServer::spawn().await;
    let (account, _api_key, email) = shopper(&server, "20000");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in_browser(b, &server, &email).await;
    set_pin_browser(b, &server).await;
    b.client
        .goto(&server.url("/dashboard/buy/epin"))
        .await
        .unwrap();
    b.css("#denomination option[value='mtn|100.00']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#quantity", "3").await;
    b.fill("#pin", PIN).await;
    b.click("#buy").await;
    assert_eq!(final_receipt(b).await, "successful");
    let load = b.text("#load-instructions").await;
    assert!(
        load.contains("*311*PIN#") && load.contains("*555*PIN#"),
        "{load}"
    );
    let dial = b.text(".pin-card-dial").await;
    assert!(
        dial.starts_with("Dial *311*") && dial.ends_with('#'),
        "{dial}"
    );
    for (width, height) in [(390, 844), (1280, 900)] {
        b.client.set_window_size(width, height).await.unwrap();
        let whole = b
            .client
            .execute(
                // each group on one line (no taller than two font sizes) and
                // inside its card (a narrow card would push it out or break it)
                "return [...document.querySelectorAll('.pin-card-pin span, .pin-card-dial span')]
                    .every(s => {
                        const r = s.getBoundingClientRect();
                        const card = s.closest('.pin-card').getBoundingClientRect();
                        const size = parseFloat(getComputedStyle(s).fontSize);
                        return r.height < 2 * size && r.right <= card.right + 0.5;
                    })",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            whole,
            serde_json::json!(true),
            "at {width} px a group broke"
        );
    }
    screenshots(b, "epins-loading").await;
    server.assert_ledger_consistent(&account);
    browser.stop().await;
}
