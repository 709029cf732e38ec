//! The throttles, counted in the database (the hardening issue's "throttles
//! are per process"): on two nodes of one PostgreSQL, five wrong passwords
//! spread over both lock the email on both, and the forgot-password bound
//! is one bound; on the test backend, each throttle still locks, and lets
//! in again once its window has ended (the test ends every window at once
//! in the `throttles` table: no 15-minute wait).

use crate::console::{OWNER, server_with_operators};
use crate::dashboard::{PASSWORD, account_with_password, form_sign_in, post_open_form, sign_in};
use crate::support::*;

/// Ends every throttle window now, as if its 15 minutes (or its day) had passed.
async fn end_every_window(server: &TestServer) {
    let sql = "UPDATE throttles SET until_ms = 0";
    server.raw_sql(sql, sql).await;
}

/// Two nodes on one fresh PostgreSQL database; `None` without one.
async fn two_nodes(test: &str) -> Option<(TestServer, TestServer)> {
    let a = TestServer::spawn_postgres(test, Options::default(), &[]).await?;
    let b = a.another_node(Options::default(), &[]).await;
    Some((a, b))
}

/// "Forgot your password?" for `email`: the status.
async fn forgot(server: &TestServer, email: &str) -> u16 {
    let fields = [("email", email)];
    let answer = post_open_form(server, "/dashboard/forgot", "/dashboard/forgot", &fields).await;
    answer.status().as_u16()
}

/// A new sign-up code for `email`: the status.
async fn resend_code(server: &TestServer, email: &str) -> u16 {
    let fields = [("email", email)];
    let page = "/dashboard/verify";
    let answer = post_open_form(server, page, "/dashboard/verify/resend", &fields).await;
    answer.status().as_u16()
}

/// A sign-up code tried for `email`: the status and the page.
async fn try_code(server: &TestServer, email: &str, code: &str) -> (u16, String) {
    let fields = [("email", email), ("code", code)];
    let answer = post_open_form(server, "/dashboard/verify", "/dashboard/verify", &fields).await;
    let status = answer.status().as_u16();
    (status, answer.text().await.unwrap())
}

#[tokio::test]
async fn five_wrong_passwords_across_two_nodes_lock_the_email_on_both() {
    let Some((a, b)) = two_nodes("five_wrong_passwords_across_two_nodes").await else {
        return;
    };
    let email = "ada@example.com";
    account_with_password(&a, email, "100");
    for node in [&a, &b, &a, &b, &a] {
        assert_eq!(sign_in(node, email, "not the password").await, Err(401));
    }
    assert_eq!(sign_in(&b, email, PASSWORD).await, Err(429), "node B");
    assert_eq!(sign_in(&a, email, PASSWORD).await, Err(429), "node A");
}

#[tokio::test]
async fn the_forgot_password_bound_holds_across_two_nodes() {
    let Some((a, b)) = two_nodes("the_forgot_password_bound_across_two_nodes").await else {
        return;
    };
    let email = "ada@example.com";
    account_with_password(&a, email, "100");
    for node in [&a, &b, &a, &b, &a] {
        assert_eq!(forgot(node, email).await, 200);
    }
    assert_eq!(forgot(&b, email).await, 429, "node B");
    assert_eq!(forgot(&a, email).await, 429, "node A");
    // no enumeration: an address nobody has is counted and answered alike
    for node in [&b, &a, &b, &a, &b] {
        assert_eq!(forgot(node, "nobody@example.com").await, 429, "per client");
    }
}

#[tokio::test]
async fn a_dashboard_sign_in_lockout_ends_with_its_window() {
    let server = TestServer::spawn().await;
    let email = "ada@example.com";
    account_with_password(&server, email, "100");
    for _ in 0..5 {
        assert_eq!(sign_in(&server, email, "not the password").await, Err(401));
    }
    assert_eq!(sign_in(&server, email, PASSWORD).await, Err(429), "locked");
    end_every_window(&server).await;
    assert!(
        sign_in(&server, email, PASSWORD).await.is_ok(),
        "let in again"
    );
}

#[tokio::test]
async fn a_console_sign_in_lockout_ends_with_its_window() {
    let server = server_with_operators().await;
    let sign_in = |password: &'static str| {
        let fields = [("email", OWNER), ("password", password), ("totp", "")];
        let server = &server;
        async move { form_sign_in(server, "/admin/login", "billpay_admin", &fields).await }
    };
    for _ in 0..5 {
        assert_eq!(sign_in("not the password").await, Err(401));
    }
    assert_eq!(sign_in(PASSWORD).await, Err(429), "locked");
    end_every_window(&server).await;
    assert!(sign_in(PASSWORD).await.is_ok(), "let in again");
}

#[tokio::test]
async fn the_open_forms_bound_ends_with_its_window() {
    let server = TestServer::spawn().await;
    let email = "ada@example.com";
    account_with_password(&server, email, "100");
    // forgot password and a new code count in one bound per address
    for _ in 0..3 {
        assert_eq!(forgot(&server, email).await, 200);
    }
    for _ in 0..2 {
        assert_eq!(resend_code(&server, email).await, 200);
    }
    assert_eq!(forgot(&server, email).await, 429, "locked");
    assert_eq!(
        resend_code(&server, "other@example.com").await,
        429,
        "per client"
    );
    end_every_window(&server).await;
    assert_eq!(forgot(&server, email).await, 200, "let in again");
}

#[tokio::test]
async fn sign_up_code_tries_lock_and_end_with_their_window() {
    let server = TestServer::spawn().await;
    // nobody has the address: the same answer as a wrong code
    let email = "nobody@example.com";
    for _ in 0..5 {
        let (status, page) = try_code(&server, email, "123456").await;
        assert_eq!(status, 422);
        assert!(page.contains("That code is not right"), "{page}");
    }
    let (status, page) = try_code(&server, email, "123456").await;
    assert_eq!(status, 429, "locked");
    assert!(page.contains("Try again in 15 minutes."), "{page}");
    end_every_window(&server).await;
    assert_eq!(
        try_code(&server, email, "123456").await.0,
        422,
        "let in again"
    );
}
