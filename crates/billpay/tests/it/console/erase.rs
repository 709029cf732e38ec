//! Closing an account and erasing its personal data from the customer page
//! (issue 32, NDPA): an owner's buttons, each after a confirmation; support
//! may do neither; an account with money in it is not closed; an erased
//! customer's name and email are gone from the page.

use super::money::{admin, page, post_form};
use super::*;
use crate::dashboard::csrf_in;

#[tokio::test]
async fn an_owner_closes_an_account_then_erases_its_personal_data() {
    let server = &server_with_operators().await;
    let email = format!("leaving-{}@example.com", rand_suffix());
    let account = crate::dashboard::account_with_password(server, &email, "10");
    let path = format!("/admin/customers/{account}");
    let owner = admin(server, OWNER).await;

    let (status, _, html) = page(server, &owner, &path).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("id=\"close\""),
        "an open account offers closing"
    );
    assert!(
        !html.contains("id=\"erase\""),
        "an open account offers no erase"
    );
    assert!(html.contains("data-confirm=\"Close this account for good?"));
    let csrf = csrf_in(&html);

    let support = admin(server, SUPPORT).await;
    let (_, _, support_html) = page(server, &support, &path).await;
    let support_csrf = csrf_in(&support_html);
    for action in ["close", "erase"] {
        let fields = [("reason", "asked"), ("csrf", support_csrf.as_str())];
        let (status, _) = post_form(server, &support, &format!("{path}/{action}"), &fields).await;
        assert_eq!(status, 403, "support may not {action}");
    }

    // ₦10 in the wallet: refused on the page, nothing changed.
    let close = format!("{path}/close");
    let fields = [("reason", "customer asked"), ("csrf", csrf.as_str())];
    let (status, refused) = post_form(server, &owner, &close, &fields).await;
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused.contains("still has 10.00 in its wallet"),
        "{refused}"
    );
    // Erasing an open account is refused the same way.
    let (status, refused) = post_form(server, &owner, &format!("{path}/erase"), &fields).await;
    assert_eq!(status, 409, "{refused}");
    assert!(refused.contains("is open: close it first"), "{refused}");

    server.cli(&[
        "wallet",
        "debit",
        "--account",
        &account,
        "--amount",
        "10",
        "--reference",
        "payout",
        "--reason",
        "paid back",
    ]);
    let (status, _) = post_form(server, &owner, &close, &fields).await;
    assert_eq!(status, 303);
    let (_, _, html) = page(server, &owner, &format!("{path}?done=account-closed")).await;
    assert!(html.contains("account closed"));
    assert!(html.contains("id=\"closed-at\""));
    assert!(
        html.contains("id=\"erase\""),
        "a closed account offers erasing"
    );
    assert!(
        !html.contains("id=\"status\""),
        "a closed account is not reactivated here"
    );
    assert!(
        html.contains("data-confirm=\"Erase this customer&#x27;s personal data?")
            || html.contains("data-confirm=\"Erase this customer's personal data?"),
        "a confirmation"
    );

    let erase = format!("{path}/erase");
    let (status, _) = post_form(server, &owner, &erase, &fields).await;
    assert_eq!(status, 303);
    let (_, _, html) = page(server, &owner, &format!("{path}?done=account-erased")).await;
    assert!(html.contains("personal data is erased"));
    assert!(html.contains("id=\"erased-at\""));
    assert!(!html.contains(&email), "the erased email is still shown");
    assert!(
        !html.contains("Lagos Top-ups Ltd"),
        "the erased name is still shown"
    );
    assert!(html.contains(&format!("erased-{account}")));
    assert!(!html.contains("id=\"erase\""), "nothing left to erase");

    let log = server.cli(&["operator", "log", "--subject", &account]);
    let line = &log["entries"][0];
    assert_eq!(line["action"], "account.erase", "{log}");
    assert_eq!(line["operator_email"], OWNER);
    assert_eq!(line["reason"], "customer asked");
    assert!(
        !log.to_string().contains(&email),
        "the email is still in the log: {log}"
    );
}
