//! The shop's key (issue 31): the account's browser purchases are placed
//! under it. The keys page lists it for its webhooks but offers no suspend
//! or revoke, and refuses one sent anyway; a key the operator suspended or
//! revoked stops the shop with a sentence and charges nothing; a new PIN set
//! with the password (not a change with the current PIN alone) gives the
//! shop a new key after a revocation.

use super::shop::{PIN, http_shopper, minted_reference, post_airtime, shopper};
use super::*;

/// The keys page's HTML and the shop key's id on it.
async fn keys_page(server: &TestServer, cookie: &str) -> (String, String) {
    let html = html_of(server, cookie, "/dashboard/keys").await;
    let marked = html.find("shop-key").expect("the shop's key is marked");
    let row = html[..marked].rfind("data-key=\"").unwrap() + 10;
    let id = html[row..row + html[row..].find('"').unwrap()].to_owned();
    (html, id)
}

async fn buy(server: &TestServer, session: &(String, String)) -> reqwest::Response {
    let reference = minted_reference(server, &session.0).await;
    post_airtime(server, session, &reference, PIN).await
}

#[tokio::test]
async fn the_shop_key_cannot_be_revoked_by_the_customer_and_an_operators_revocation_stops_the_shop()
{
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "2000");
    let session = http_shopper(&server, &email).await;
    let (html, shop_key) = keys_page(&server, &session.0).await;
    let row_start = html.find(&format!("data-key=\"{shop_key}\"")).unwrap();
    let row = &html[row_start..row_start + html[row_start..].find("</tr>").unwrap()];
    assert!(!row.contains("value=\"revoke\""), "no revoke button: {row}");
    assert!(
        !row.contains("value=\"suspend\""),
        "no suspend button: {row}"
    );
    assert!(row.contains("/webhooks"), "its webhooks can be set: {row}");

    // a revoke sent anyway is refused, and the key stays on
    let revoke = no_redirects()
        .post(server.url(&format!("/dashboard/keys/{shop_key}/status")))
        .header("Cookie", &session.0)
        .form(&[("csrf", session.1.as_str()), ("action", "revoke")])
        .send()
        .await
        .unwrap();
    assert_eq!(revoke.status(), 400);
    assert!(revoke.text().await.unwrap().contains("the shop"));
    assert_eq!(buy(&server, &session).await.status(), 303, "still buys");

    // the operator suspends it: the shop says so, nothing is charged
    let before = server.balance(&api_key).await;
    server.cli(&["key", "suspend", &shop_key]);
    let paused = buy(&server, &session).await;
    assert_eq!(paused.status(), 422);
    assert!(
        paused
            .text()
            .await
            .unwrap()
            .contains("paused for this account")
    );
    assert_eq!(server.balance(&api_key).await, before, "nothing charged");

    // revoked: switched off until a new PIN gives the shop a new key
    server.cli(&["key", "revoke", &shop_key]);
    let off = buy(&server, &session).await;
    assert_eq!(off.status(), 422);
    assert!(
        off.text()
            .await
            .unwrap()
            .contains("set your transaction PIN again")
    );
    assert_eq!(server.balance(&api_key).await, before, "nothing charged");
    // a change of PIN with the current PIN alone (a borrowed session knows
    // no password) does not bring the shop back (issue 45)
    let changed = no_redirects()
        .post(server.url("/dashboard/pin/change"))
        .header("Cookie", &session.0)
        .form(&[
            ("csrf", session.1.as_str()),
            ("current", PIN),
            ("pin", "4826"),
            ("confirm", "4826"),
        ])
        .send()
        .await
        .unwrap();
    assert!(changed.text().await.unwrap().contains("id=\"pin-saved\""));
    let (_, after_change) = keys_page(&server, &session.0).await;
    assert_eq!(
        after_change, shop_key,
        "the revoked key is still the shop's"
    );
    let still_off = post_airtime(
        &server,
        &session,
        &minted_reference(&server, &session.0).await,
        "4826",
    )
    .await;
    assert_eq!(still_off.status(), 422);
    assert!(
        still_off
            .text()
            .await
            .unwrap()
            .contains("set your transaction PIN again")
    );
    assert_eq!(server.balance(&api_key).await, before, "nothing charged");
    // with the password, a new PIN gives the shop a new key
    let session = http_shopper(&server, &email).await;
    let (_, new_key) = keys_page(&server, &session.0).await;
    assert_ne!(new_key, shop_key, "a new shop key");
    let bought = buy(&server, &session).await;
    assert_eq!(bought.status(), 303);
    let done = server.wait_final(&api_key, &receipt_of(&bought)).await;
    assert_eq!(done["status"], "successful");
    server.assert_ledger_consistent(&account);
}

/// The shop's purchases spend the shop key's rate budget through the API's
/// own limiter (the operator's `key set-rate-limit` applies to it as to any
/// key): past its burst the shop refuses with a sentence and charges
/// nothing, and the budget comes back with time.
#[tokio::test]
async fn shop_purchases_spend_the_keys_rate_budget_like_api_purchases() {
    let server = TestServer::spawn().await;
    let (account, api_key, email) = shopper(&server, "5000");
    let session = http_shopper(&server, &email).await;
    let (_, shop_key) = keys_page(&server, &session.0).await;
    server.cli(&[
        "key",
        "set-rate-limit",
        &shop_key,
        "--per-second",
        "1",
        "--burst",
        "2",
    ]);
    let mut references = Vec::new();
    for _ in 0..4 {
        references.push(minted_reference(&server, &session.0).await);
    }
    // four at once: the burst is two, and at most one more token comes back
    // while they are checked (one a second)
    let answers = futures_util::future::join_all(
        references
            .iter()
            .map(|reference| post_airtime(&server, &session, reference, PIN)),
    )
    .await;
    let mut bought = 0;
    let mut refusals = Vec::new();
    for answer in answers {
        match answer.status().as_u16() {
            303 => bought += 1,
            422 => refusals.push(answer.text().await.unwrap()),
            other => panic!("unexpected {other}"),
        }
    }
    assert!((2..=3).contains(&bought), "{bought} bought of four");
    let page = refusals
        .first()
        .expect("the shop is refused past the budget");
    assert!(
        page.contains("Too many purchases in a short time"),
        "said in a sentence"
    );
    assert!(!page.contains("RateLimited"), "no Debug text");
    let charged = 500.0 * f64::from(bought);
    assert_eq!(
        server.balance(&api_key).await,
        5000.0 - charged,
        "nothing charged for a refusal"
    );
    // the budget comes back with time
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let again = buy(&server, &session).await;
    assert_eq!(again.status(), 303);
    server.wait_final(&api_key, &receipt_of(&again)).await;
    server.assert_ledger_consistent(&account);
}
