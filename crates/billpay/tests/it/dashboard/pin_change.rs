//! Changing the transaction PIN while signed in (issue 31), in a real
//! Chromium: the current PIN and the new one twice. A wrong current PIN is
//! a try of the same five that lock purchases (the checkout's wrong PINs and
//! the change form's add up), a locked account cannot change it this way,
//! and the password's form still ends the lock. Runs on the test backend
//! (`BILLPAY_TEST_BACKEND`).

use super::browser::Browser;
use super::shop::{PIN, http_shopper, post_airtime, set_pin_browser, shopper, sign_in_browser};
use super::*;

const NEW_PIN: &str = "1357";

async fn change_pin(b: &Browser, server: &TestServer, current: &str, new: &str, again: &str) {
    b.client.goto(&server.url("/dashboard/pin")).await.unwrap();
    b.fill("#current-pin", current).await;
    b.fill("#change-new-pin", new).await;
    b.fill("#change-confirm-pin", again).await;
    b.click("#change-pin").await;
}

/// A signed-in HTTP client (session cookie, CSRF proof), its PIN left as it is.
async fn signed_in_http(server: &TestServer, email: &str) -> (String, String) {
    let cookie = sign_in(server, email, PASSWORD).await.unwrap();
    let page = html_of(server, &cookie, "/dashboard/pin").await;
    (cookie, csrf_in(&page))
}

#[tokio::test]
async fn a_customer_changes_the_pin_with_the_current_one() {
    let server = TestServer::spawn().await;
    let (_, api_key, email) = shopper(&server, "5000");
    let browser = Browser::start().await;
    let b = &browser;
    sign_in_browser(b, &server, &email).await;

    // no PIN yet: only the password's form
    b.client.goto(&server.url("/dashboard/pin")).await.unwrap();
    assert!(
        b.client
            .find(fantoccini::Locator::Css("#current-pin"))
            .await
            .is_err()
    );
    set_pin_browser(b, &server).await;

    // new PINs that differ: said, and no try spent
    change_pin(b, &server, "0000", NEW_PIN, "1358").await;
    assert!(b.text("#pin-error").await.contains("differ"));

    // a wrong current PIN: one of the five
    change_pin(b, &server, "0000", NEW_PIN, NEW_PIN).await;
    let said = b.text("#pin-error").await;
    assert!(said.contains("Wrong PIN. 4 tries left"), "{said}");
    b.client.set_window_size(390, 844).await.unwrap();
    b.fits_the_width("the PIN page with an error").await;
    b.screenshot("shop-pin-change-phone").await;
    b.client.set_window_size(1280, 900).await.unwrap();

    // the right one changes it: the old PIN no longer buys, the new one does
    change_pin(b, &server, PIN, NEW_PIN, NEW_PIN).await;
    assert!(b.text("#pin-saved").await.contains("PIN is set"));
    let session = signed_in_http(&server, &email).await;
    let old = post_airtime(&server, &session, "web-old-pin", PIN).await;
    assert_eq!(old.status(), 422);
    assert!(
        old.text()
            .await
            .unwrap()
            .contains("Wrong PIN. 4 tries left")
    );
    let bought = post_airtime(&server, &session, "web-new-pin", NEW_PIN).await;
    assert_eq!(bought.status(), 303, "the new PIN buys");
    server.wait_final(&api_key, &receipt_of(&bought)).await;
    assert_eq!(server.balance(&api_key).await, 4500.0);

    // checkout and change form share the five: 3 wrong at checkout, 2 here
    for n in 0..3 {
        let wrong = post_airtime(&server, &session, &format!("web-wrong-{n}"), "0000").await;
        assert!(wrong.text().await.unwrap().contains("Wrong PIN"));
    }
    change_pin(b, &server, "0000", "2222", "2222").await;
    assert!(b.text("#pin-error").await.contains("One more wrong PIN"));
    change_pin(b, &server, "0000", "2222", "2222").await;
    let said = b.text("#pin-error").await;
    assert!(said.contains("locked for 30 minutes"), "{said}");
    // locked: the right current PIN changes nothing, and buys nothing
    change_pin(b, &server, NEW_PIN, "2222", "2222").await;
    let said = b.text("#pin-error").await;
    assert!(said.contains("locked until"), "{said}");
    let locked = post_airtime(&server, &session, "web-locked", NEW_PIN).await;
    assert!(locked.text().await.unwrap().contains("locked until"));
    assert_eq!(server.balance(&api_key).await, 4500.0, "nothing bought");

    // the password's form ends the lock (http_shopper sets PIN with it)
    let session = http_shopper(&server, &email).await;
    let bought = post_airtime(&server, &session, "web-after", PIN).await;
    assert_eq!(bought.status(), 303);
    browser.stop().await;
}

/// Tries sent at once at the change form: at most five current PINs are
/// checked, then the account is locked, as at checkout.
#[tokio::test]
async fn wrong_current_pins_sent_at_once_lock_after_five() {
    let server = TestServer::spawn().await;
    let (_, api_key, email) = shopper(&server, "2000");
    let (cookie, csrf) = http_shopper(&server, &email).await;
    let mut tries = tokio::task::JoinSet::new();
    for _ in 0..12 {
        let (url, cookie, csrf) = (
            server.url("/dashboard/pin/change"),
            cookie.clone(),
            csrf.clone(),
        );
        tries.spawn(async move {
            let answer = no_redirects()
                .post(url)
                .header("Cookie", cookie)
                .form(&[
                    ("csrf", csrf.as_str()),
                    ("current", "1111"),
                    ("pin", "2222"),
                    ("confirm", "2222"),
                ])
                .send()
                .await
                .unwrap();
            answer.text().await.unwrap()
        });
    }
    let answers: Vec<String> = tries.join_all().await;
    let wrong = answers.iter().filter(|a| a.contains("Wrong PIN")).count();
    assert!(wrong <= 5, "{wrong} current PINs checked");
    assert!(answers.iter().all(|a| !a.contains("id=\"pin-saved\"")));
    // whatever got a turn, the count is the checkout's: the PIN still is PIN,
    // and after at most five wrong ones in all, purchases are locked
    let session = (cookie, csrf);
    let mut n = 0;
    loop {
        let text = post_airtime(&server, &session, &format!("web-extra-{n}"), "1111")
            .await
            .text()
            .await
            .unwrap();
        if text.contains("locked until") {
            break;
        }
        n += 1;
        assert!(wrong + n <= 5, "more than five wrong PINs checked: {text}");
    }
    assert_eq!(wrong + n, 5, "five wrong PINs checked in all, then locked");
    assert_eq!(server.balance(&api_key).await, 2000.0);
}
