//! Sign-up and account care (issue 31) against the real server: the policy
//! (closed by default), no enumeration, the throttle under concurrency, and
//! in Chromium the journeys sign up → code from the outbox → signed in, and
//! forgot password → emailed link → new password → every old session gone.
//! The code and the link are read from the notices table (the outbox), as
//! the notification worker would send them: sealed under the master key.

use super::browser::Browser;
use super::*;
use billpay_domain::sealed::SecretBox;
use serde_json::Value;

pub(crate) const OPEN: [(&str, &str); 1] = [("BILLPAY_SIGNUP_MODE", "open")];
const NEW_PASSWORD: &str = "a brand new passphrase";

/// The text columns of the rows `sql` (one `$1` parameter) answers, on
/// either backend.
pub(crate) async fn text_rows(
    server: &TestServer,
    sql: &str,
    param: &str,
) -> Vec<Vec<Option<String>>> {
    if server.is_postgres() {
        let url = &server.database_url;
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let rows = client.query(sql, &[&param]).await.unwrap();
        return rows
            .iter()
            .map(|r| (0..r.len()).map(|i| r.get(i)).collect())
            .collect();
    }
    let path = billpay_store::sqlite::path_from_url(&server.database_url).unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut statement = conn.prepare(&sql.replace("$1", "?1")).unwrap();
    let width = statement.column_count();
    let rows = statement
        .query_map([param], |r| (0..width).map(|i| r.get(i)).collect())
        .unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// The notices queued for `recipient`, oldest first: (kind, data opened).
pub async fn notices_to(server: &TestServer, recipient: &str) -> Vec<(String, Value)> {
    let sql = "SELECT kind, data FROM notices WHERE recipient = $1 ORDER BY created_at, id";
    let secrets = SecretBox::from_hex(MASTER_KEY).unwrap();
    let rows = text_rows(server, sql, recipient).await;
    rows.into_iter()
        .map(|row| {
            let (kind, data) = (row[0].clone().unwrap(), row[1].clone().unwrap());
            let data: Value = serde_json::from_str(&data).unwrap();
            let data = match data["sealed"].as_str() {
                Some(sealed) => {
                    let clear = secrets
                        .open(sealed.strip_prefix("sealed:").unwrap())
                        .unwrap();
                    serde_json::from_str(&clear).unwrap()
                }
                None => data,
            };
            (kind, data)
        })
        .collect()
}

/// (name, signed_up, email_verified_at, phone) of the account with this address.
async fn account_row(server: &TestServer, email: &str) -> Option<Vec<Option<String>>> {
    let sql = "SELECT name, signed_up, email_verified_at, phone FROM accounts
               WHERE lower(email) = lower($1)";
    text_rows(server, sql, email).await.into_iter().next()
}

/// The last notice of `kind` to `recipient`.
pub async fn last_notice(server: &TestServer, recipient: &str, kind: &str) -> Value {
    let notices = notices_to(server, recipient).await;
    let found = notices.into_iter().rev().find(|(k, _)| k == kind);
    found
        .unwrap_or_else(|| panic!("no {kind} notice to {recipient}"))
        .1
}

/// The page is measured once it has loaded with its stylesheet.
async fn fits(b: &Browser, page: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let state = b
            .client
            .execute("return document.readyState", vec![])
            .await
            .unwrap();
        if state == "complete" || std::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    b.fits_the_width(page).await;
}

/// Posts the sign-up form over HTTP (the open forms' CSRF cookie first, from
/// the sign-in page: it has one even when sign-up is closed); status and page.
pub(crate) async fn sign_up_http(server: &TestServer, fields: &[(&str, &str)]) -> (u16, String) {
    let response = post_open_form(server, "/dashboard/login", "/dashboard/signup", fields).await;
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

pub(crate) fn applicant<'a>(name: &'a str, email: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("name", name),
        ("email", email),
        ("phone", "0803 123 4567"),
        ("password", PASSWORD),
        ("password_again", PASSWORD),
    ]
}

/// The page's text without what differs by request (CSRF proof, the address typed).
fn comparable(html: &str, email: &str) -> String {
    let mut rest = html.replace(email, "EMAIL");
    let mut out = String::new();
    while let Some(at) = rest.find("name=\"csrf\" value=\"") {
        let end = (at + 19 + 64).min(rest.len());
        out.push_str(&rest[..at + 19]);
        rest = rest[end..].to_owned();
    }
    out + &rest
}

#[tokio::test]
async fn sign_up_is_closed_unless_the_operator_opens_it() {
    let server = TestServer::spawn().await;
    let page = reqwest::get(server.url("/dashboard/signup")).await.unwrap();
    assert_eq!(page.status(), 403);
    assert!(page.text().await.unwrap().contains("Sign-up is closed"));
    let email = format!("closed-{}@example.com", rand_suffix());
    let (status, html) = sign_up_http(&server, &applicant("Ada", &email)).await;
    assert_eq!(status, 403);
    assert!(html.contains("Sign-up is closed"));
    assert!(notices_to(&server, &email).await.is_empty());
    assert!(
        account_row(&server, &email).await.is_none(),
        "no account was opened"
    );
    let login = reqwest::get(server.url("/dashboard/login")).await.unwrap();
    let login = login.text().await.unwrap();
    assert!(
        !login.contains("Create an account"),
        "no link to a closed page"
    );
}

#[tokio::test]
async fn a_sign_up_answers_the_same_whether_or_not_the_address_is_taken() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    let taken = format!("taken-{}@example.com", rand_suffix());
    account_with_password(&server, &taken, "100");
    let fresh = format!("fresh-{}@example.com", rand_suffix());

    let (new_status, new_page) = sign_up_http(&server, &applicant("Ada", &fresh)).await;
    let (taken_status, taken_page) = sign_up_http(&server, &applicant("Mallory", &taken)).await;
    assert_eq!((new_status, taken_status), (200, 200));
    assert_eq!(
        comparable(&new_page, &fresh),
        comparable(&taken_page, &taken)
    );

    let code = last_notice(&server, &fresh, "email_verification").await;
    assert_eq!(code["name"], "Ada");
    assert_eq!(code["code"].as_str().unwrap().len(), 6);
    let told = last_notice(&server, &taken, "account_exists").await;
    assert_eq!(
        told["name"], "Lagos Top-ups Ltd",
        "the owner is told, by their own name"
    );
    let kinds: Vec<String> = notices_to(&server, &taken)
        .await
        .into_iter()
        .map(|n| n.0)
        .collect();
    assert_eq!(kinds, ["account_exists"], "no code for the taken address");
    let owner = account_row(&server, &taken).await.unwrap();
    assert_eq!(owner[0].as_deref(), Some("Lagos Top-ups Ltd"), "untouched");
    assert_eq!(owner[1].as_deref(), Some("operator"));
}

/// One wrong code answers alike for an unverified sign-up, a verified
/// account and an address nobody signed up with (issue 45, finding 6: the
/// unverified sign-up used to get "Check the email and try again").
#[tokio::test]
async fn a_wrong_code_answers_alike_whether_or_not_the_address_has_a_sign_up() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    let pending = format!("pending-{}@example.com", rand_suffix());
    let (status, _) = sign_up_http(&server, &applicant("Ada", &pending)).await;
    assert_eq!(status, 200);
    let code = last_notice(&server, &pending, "email_verification").await;
    let right = code["code"].as_str().unwrap();
    let wrong = if right == "000000" {
        "111111"
    } else {
        "000000"
    };
    let verified = format!("verified-{}@example.com", rand_suffix());
    account_with_password(&server, &verified, "100");
    let nobody = format!("nobody-{}@example.com", rand_suffix());
    let mut pages = Vec::new();
    for email in [&pending, &verified, &nobody] {
        // "send a new code" first, as the prober did: only the unverified
        // sign-up gets one, and the answer to a wrong code must not tell
        let asked = [("email", email.as_str())];
        let resend = "/dashboard/verify/resend";
        let resent = post_open_form(&server, "/dashboard/verify", resend, &asked).await;
        assert!(resent.status().is_success(), "{}", resent.status());
        let fields = [("email", email.as_str()), ("code", wrong)];
        let answer = post_open_form(&server, "/dashboard/verify", "/dashboard/verify", &fields);
        let answer = answer.await;
        let status = answer.status().as_u16();
        let page = comparable(&answer.text().await.unwrap(), email);
        pages.push((status, page));
    }
    assert!(
        pages[0].1.contains("not right or has expired"),
        "{}",
        pages[0].1
    );
    assert_eq!(
        pages[0], pages[1],
        "an unverified sign-up and a verified account"
    );
    assert_eq!(pages[0], pages[2], "an unverified sign-up and no account");
}

#[tokio::test]
async fn sign_ups_from_one_address_are_bounded_even_at_once() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    let suffix = rand_suffix();
    let emails: Vec<String> = (0..12)
        .map(|i| format!("burst{i}-{suffix}@example.com"))
        .collect();
    let attempts = emails.iter().map(|email| {
        let server = &server;
        async move { sign_up_http(server, &applicant("Burst", email)).await.0 }
    });
    let statuses = futures_util::future::join_all(attempts).await;
    let accepted = statuses.iter().filter(|s| **s == 200).count();
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(accepted, 5, "five per address in 15 minutes: {statuses:?}");
    assert_eq!(refused, 7, "{statuses:?}");
    let mut opened = 0;
    for email in &emails {
        opened += usize::from(!notices_to(&server, email).await.is_empty());
    }
    assert_eq!(opened, 5, "a refused sign-up writes nothing");
}

#[tokio::test]
async fn a_person_signs_up_verifies_by_code_and_resets_a_forgotten_password() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    let email = format!("amaka-{}@example.com", rand_suffix());
    let browser = Browser::start().await;
    let b = &browser;
    b.client.set_window_size(390, 844).await.unwrap();

    // The sign-in page leads to the sign-up form.
    b.client
        .goto(&server.url("/dashboard/login"))
        .await
        .unwrap();
    b.click("#create-account").await;
    assert_eq!(b.path().await, "/dashboard/signup");
    fits(b, "sign-up").await;
    b.screenshot("signup-phone").await;
    b.fill("#name", "Amaka Obi").await;
    b.fill("#email", &email).await;
    b.fill("#phone", "0803 123 4567").await;
    b.fill("#password", PASSWORD).await;
    b.fill("#password-again", PASSWORD).await;
    b.click("#sign-up").await;
    assert!(b.text("main").await.contains("Check your email"));
    fits(b, "code").await;
    b.screenshot("verify-phone").await;

    // A wrong code is refused; the emailed one signs the person in.
    let code = last_notice(&server, &email, "email_verification").await["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let wrong = if code == "123456" { "654321" } else { "123456" };
    b.fill("#code", wrong).await;
    b.click("#verify").await;
    assert!(b.text("[role=alert]").await.contains("not right"));
    b.fill("#email", &email).await;
    b.fill("#code", &code).await;
    b.click("#verify").await;
    assert_eq!(b.path().await, "/dashboard");
    assert!(
        b.client
            .find(fantoccini::Locator::Css("#verify-banner"))
            .await
            .is_err(),
        "verified: no banner"
    );
    let shown = account_row(&server, &email).await.unwrap();
    assert_eq!(shown[1].as_deref(), Some("self"));
    assert!(shown[2].is_some(), "verified: {shown:?}");
    assert_eq!(shown[3].as_deref(), Some("08031234567"));

    b.client
        .goto(&server.url("/dashboard/account"))
        .await
        .unwrap();
    assert_eq!(b.text("#email-state").await, "verified");
    fits(b, "account").await;
    b.screenshot("account-phone").await;
    b.client.set_window_size(1280, 900).await.unwrap();
    b.screenshot("account").await;

    // Another device's session, to see it end with the reset.
    let elsewhere = sign_in(&server, &email, PASSWORD).await.unwrap();
    b.click("#sign-out").await;

    // Forgot password: the emailed link sets a new one, once.
    b.client
        .goto(&server.url("/dashboard/login"))
        .await
        .unwrap();
    b.click("#forgot").await;
    b.fill("#email", &email).await;
    b.click("#send-link").await;
    assert!(b.text("#sent").await.contains("emailed it a link"));
    b.screenshot("forgot").await;
    let link = last_notice(&server, &email, "password_reset").await["link"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        link.starts_with(&format!("http://{}/dashboard/reset/", server.base)),
        "{link}"
    );
    b.client.goto(&link).await.unwrap();
    b.client.set_window_size(390, 844).await.unwrap();
    fits(b, "reset").await;
    b.screenshot("reset-phone").await;
    b.fill("#password", NEW_PASSWORD).await;
    b.fill("#password-again", NEW_PASSWORD).await;
    b.click("#set-password").await;
    assert_eq!(b.path().await, "/dashboard/login");
    assert!(
        b.text("#notice")
            .await
            .contains("Sign in with the new password")
    );

    let http = no_redirects();
    let old = http
        .get(server.url("/dashboard"))
        .header("Cookie", &elsewhere)
        .send()
        .await
        .unwrap();
    assert_eq!(old.status(), 303, "the other device is signed out");
    assert_eq!(
        sign_in(&server, &email, PASSWORD).await,
        Err(401),
        "old password dead"
    );
    assert!(sign_in(&server, &email, NEW_PASSWORD).await.is_ok());
    b.client.goto(&link).await.unwrap();
    assert!(
        b.text("#link-gone").await.contains("no longer works"),
        "used once"
    );
    browser.stop().await;
}

#[tokio::test]
async fn signed_up_pages_screenshots_at_desktop_width() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    let browser = Browser::start().await;
    let b = &browser;
    b.client.set_window_size(1280, 900).await.unwrap();
    b.client
        .goto(&server.url("/dashboard/signup"))
        .await
        .unwrap();
    b.css("#sign-up").await;
    b.screenshot("signup").await;
    b.client
        .goto(&server.url("/dashboard/verify"))
        .await
        .unwrap();
    b.css("#verify").await;
    b.screenshot("verify").await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.client
        .goto(&server.url("/dashboard/forgot"))
        .await
        .unwrap();
    b.css("#send-link").await;
    fits(b, "forgot").await;
    b.screenshot("forgot-phone").await;
    browser.stop().await;
}

/// The account page over HTTP as the customer with `cookie`: its CSRF proof.
async fn account_csrf(server: &TestServer, cookie: &str) -> String {
    let page = no_redirects()
        .get(server.url("/dashboard/account"))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    csrf_in(&page.text().await.unwrap())
}

async fn post_account(
    server: &TestServer,
    cookie: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> u16 {
    let csrf = account_csrf(server, cookie).await;
    let mut form = fields.to_vec();
    form.push(("csrf", &csrf));
    let response = no_redirects()
        .post(server.url(path))
        .header("Cookie", cookie)
        .form(&form)
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

#[tokio::test]
async fn a_customer_changes_password_and_email_on_their_account_page() {
    let server = TestServer::spawn().await;
    let email = format!("tunde-{}@example.com", rand_suffix());
    account_with_password(&server, &email, "10");
    let here = sign_in(&server, &email, PASSWORD).await.unwrap();
    let there = sign_in(&server, &email, PASSWORD).await.unwrap();

    let wrong = [
        ("current", "not my password"),
        ("password", NEW_PASSWORD),
        ("password_again", NEW_PASSWORD),
    ];
    assert_eq!(
        post_account(&server, &here, "/dashboard/account/password", &wrong).await,
        422
    );
    let right = [
        ("current", PASSWORD),
        ("password", NEW_PASSWORD),
        ("password_again", NEW_PASSWORD),
    ];
    assert_eq!(
        post_account(&server, &here, "/dashboard/account/password", &right).await,
        303
    );
    let status = |cookie: String| {
        let server = &server;
        async move {
            let response = no_redirects()
                .get(server.url("/dashboard/account"))
                .header("Cookie", cookie)
                .send()
                .await
                .unwrap();
            response.status().as_u16()
        }
    };
    assert_eq!(status(here.clone()).await, 200, "this session stays");
    assert_eq!(status(there).await, 303, "the other session ended");

    let new_email = format!("tunde-new-{}@example.com", rand_suffix());
    let change = [("email", new_email.as_str()), ("current", NEW_PASSWORD)];
    assert_eq!(
        post_account(&server, &here, "/dashboard/account/email", &change).await,
        303
    );
    let unchanged = account_row(&server, &email).await;
    assert!(
        unchanged.is_some(),
        "the address changes only with the code"
    );
    let code = last_notice(&server, &new_email, "email_verification").await["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let entered = [("code", code.as_str())];
    assert_eq!(
        post_account(&server, &here, "/dashboard/account/code", &entered).await,
        303
    );
    let moved = account_row(&server, &new_email).await.expect("moved");
    assert!(moved[2].is_some(), "the new address is verified");
    assert!(account_row(&server, &email).await.is_none());
}
