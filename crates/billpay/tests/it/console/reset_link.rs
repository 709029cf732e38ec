//! Support emails a customer a password-reset link from the customer page
//! (issue 31): logged as their action, sent to the account's own address,
//! the link never shown in the console; the page shows how the account was
//! opened and whether its address is verified; the overview counts sign-ups.

use super::money::{admin, page, post_form};
use super::*;
use crate::dashboard::csrf_in;
use crate::dashboard::sign_up::{last_notice, notices_to};

#[tokio::test]
async fn support_emails_a_reset_link_and_it_is_logged() {
    let server = &server_with_operators().await;
    let email = format!("forgetful-{}@example.com", rand_suffix());
    let account = crate::dashboard::account_with_password(server, &email, "10");
    let path = format!("/admin/customers/{account}");

    let support = admin(server, SUPPORT).await;
    let (status, _, html) = page(server, &support, &path).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("by an operator"),
        "how the account was opened"
    );
    assert!(html.contains("not verified (opened by the operator)"));
    let csrf = csrf_in(&html);
    let reset = format!("{path}/reset-link");
    let (status, _) = post_form(server, &support, &reset, &[("csrf", &csrf)]).await;
    assert_eq!(status, 303);

    let link = last_notice(server, &email, "password_reset").await["link"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(link.contains("/dashboard/reset/"), "{link}");
    let (_, _, after) = page(
        server,
        &support,
        &format!("{path}?done=password-reset-sent"),
    )
    .await;
    assert!(after.contains("password-reset link emailed"));
    assert!(!after.contains(&link), "the console never shows the link");
    let log = server.cli(&["operator", "log", "--subject", &account]);
    let line = &log["entries"][0];
    assert_eq!(line["action"], "account.password_reset_sent", "{log}");
    assert_eq!(line["operator_email"], SUPPORT);
    assert!(!log.to_string().contains(&link), "no link in the log");
    assert_eq!(notices_to(server, &email).await.len(), 1);

    let (_, _, overview) = page(server, &support, "/admin").await;
    assert!(
        overview.contains("id=\"sign-ups-today\">0<"),
        "no self sign-ups yet"
    );
}
