//! The console for an owner on a phone (issue 46), in headless Chromium: a
//! customer who calls is found by their number in any spelling (and by a
//! purchase's reference); at 390 px the menu folds behind "Menu" and the
//! tables become cards, nothing scrolling sideways; at 1280 px the menu is
//! open and the tables are tables.

use super::journey::sign_in;
use super::*;
use crate::dashboard::browser::Browser;
use crate::dashboard::{account_with_password, save_phone};
use serde_json::json;

#[tokio::test]
async fn an_owner_finds_a_caller_by_phone_on_a_phone() {
    let server = server_with_operators().await;
    let email = format!("caller-{}@example.com", rand_suffix());
    let account = account_with_password(&server, &email, "5000");
    save_phone(&server, &email, "Chidi Caller", "08034567890").await;
    let key = server.cli(&["key", "create", "--account", &account])["api_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let reference = reference();
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 1000, "reference": reference});
    server.place(&key, "/v1/airtime/purchase", body).await;
    let other = server.customer("100");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in(b, &server, OWNER).await;

    for (width, height, suffix) in [(390, 844, "phone"), (1280, 900, "desktop")] {
        b.client.set_window_size(width, height).await.unwrap();
        b.client.goto(&server.url("/admin")).await.unwrap();
        let menu = b.css("#menu-button").await;
        let nav = b.css("header.top nav").await;
        if width == 390 {
            // folded: one tap opens it, and it reaches the customers page
            assert!(menu.is_displayed().await.unwrap());
            assert!(!nav.is_displayed().await.unwrap(), "the menu is folded");
            b.screenshot("console-menu-folded-390").await;
            menu.click().await.unwrap(); // opens in place: no new page
            assert!(nav.is_displayed().await.unwrap(), "the menu opened");
            b.screenshot("console-menu-open-390").await;
        } else {
            assert!(!menu.is_displayed().await.unwrap());
            assert!(nav.is_displayed().await.unwrap());
        }
        b.fits_the_width(&format!("the overview at {width} px"))
            .await;
        b.click("header.top nav a[href='/admin/customers']").await;
        assert_eq!(b.path().await, "/admin/customers");

        for spelling in [
            "08034567890",
            "0803 456 7890",
            "+234 803 456 7890",
            "2348034567890",
            reference.as_str(),
        ] {
            b.fill("#q", spelling).await;
            b.click("#search").await;
            let rows = b
                .client
                .find_all(fantoccini::Locator::Css("#customers tbody tr"))
                .await
                .unwrap();
            assert_eq!(rows.len(), 1, "{spelling} finds one customer");
            let row = rows[0].text().await.unwrap();
            assert!(row.contains("Chidi Caller"), "{spelling}: {row}");
            let link = b.css("#customers tbody tr a").await;
            let href = link.attr("href").await.unwrap().unwrap();
            assert!(href.ends_with(&account), "{spelling}: {href}");
            assert!(!href.ends_with(&other.account_id));
        }
        b.screenshot(&format!("console-customer-search-{suffix}"))
            .await;
        b.fits_the_width(&format!("the search at {width} px")).await;

        // the customer's page: its tables are cards on a phone, labelled
        b.click("#customers tbody tr a").await;
        let cell = b.css("#transactions tbody td").await;
        let label = cell.attr("data-label").await.unwrap();
        assert_eq!(label.as_deref(), Some("Time"), "labelled from the header");
        let thead = b.css("#transactions thead").await;
        assert_eq!(thead.is_displayed().await.unwrap(), width != 390);
        b.fits_the_width(&format!("the customer's page at {width} px"))
            .await;
        b.screenshot(&format!("console-customer-{suffix}")).await;
        b.client
            .goto(&server.url("/admin/transactions"))
            .await
            .unwrap();
        b.fits_the_width(&format!("the transactions at {width} px"))
            .await;
        b.screenshot(&format!("console-transactions-{suffix}"))
            .await;
    }
    browser.stop().await;
}
