//! The customer page shows whether the shop's purchases are locked by wrong
//! transaction PINs (and until when, Lagos time); an owner may clear the
//! lock (logged as their action), support may not.

use super::money::{admin, page, post_form};
use super::*;
use crate::dashboard::csrf_in;
use crate::dashboard::shop::{PIN, http_shopper, post_airtime};

#[tokio::test]
async fn an_owner_clears_a_pin_lock_and_it_is_logged() {
    let server = &server_with_operators().await;
    let email = format!("locked-{}@example.com", rand_suffix());
    let account = crate::dashboard::account_with_password(server, &email, "1000");
    let shopper = http_shopper(server, &email).await;
    let path = format!("/admin/customers/{account}");
    let owner = admin(server, OWNER).await;
    let (_, _, before) = page(server, &owner, &path).await;
    assert!(
        before.contains("id=\"pin-state\" class=\"\">set<"),
        "PIN set, not locked"
    );
    assert!(!before.contains("id=\"clear-pin-lock\""));

    for n in 0..5 {
        let wrong = post_airtime(server, &shopper, &format!("web-wrong-{n}"), "1111").await;
        assert_eq!(wrong.status(), 422);
    }
    let locked = post_airtime(server, &shopper, "web-right-locked", PIN).await;
    assert!(
        locked
            .text()
            .await
            .unwrap()
            .contains("purchases are locked until")
    );

    // support sees the lock, and may not clear it
    let support = admin(server, SUPPORT).await;
    let (_, _, seen) = page(server, &support, &path).await;
    assert!(seen.contains("locked after wrong PINs, until"), "{seen}");
    assert!(seen.contains("WAT"), "Lagos time");
    assert!(
        !seen.contains("id=\"clear-pin-lock\""),
        "no button for support"
    );
    let clear = format!("{path}/pin-lock");
    let (status, _) = post_form(server, &support, &clear, &[("csrf", &csrf_in(&seen))]).await;
    assert_eq!(status, 403);

    // the owner clears it: logged, and the customer buys again
    let (_, _, html) = page(server, &owner, &path).await;
    assert!(html.contains("id=\"clear-pin-lock\""));
    let (status, _) = post_form(server, &owner, &clear, &[("csrf", &csrf_in(&html))]).await;
    assert_eq!(status, 303);
    let (_, _, after) = page(server, &owner, &format!("{path}?done=pin-lock-cleared")).await;
    assert!(after.contains("PIN lock cleared"));
    assert!(
        after.contains("id=\"pin-state\" class=\"\">set<"),
        "{after}"
    );
    let log = server.cli(&["operator", "log", "--subject", &account]);
    let line = &log["entries"][0];
    assert_eq!(line["action"], "account.pin_lock_cleared", "{log}");
    assert_eq!(line["operator_email"], OWNER);
    assert_eq!(cleared(&log), 1, "{log}");
    let bought = post_airtime(server, &shopper, "web-after-clear", PIN).await;
    assert_eq!(bought.status(), 303);

    // nothing to clear: nothing changes, nothing logged
    let (status, _) = post_form(server, &owner, &clear, &[("csrf", &csrf_in(&after))]).await;
    assert_eq!(status, 303);
    let log = server.cli(&["operator", "log", "--subject", &account]);
    assert_eq!(cleared(&log), 1, "{log}");
}

/// The log's lines that cleared a PIN lock.
fn cleared(log: &serde_json::Value) -> usize {
    let entries = log["entries"].as_array().unwrap();
    entries
        .iter()
        .filter(|e| e["action"] == "account.pin_lock_cleared")
        .count()
}
