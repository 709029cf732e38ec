//! The dashboard in a real headless Chromium (driven over WebDriver), plus
//! its security rules checked over plain HTTP: CSRF, sign-out, isolation
//! between accounts, lockout, suspended accounts, and the sign-in's bounds
//! under abuse (memory, body sizes, concurrent attempts).

mod api_docs;
pub mod browser;
mod bulk;
mod buyer_home;
mod emails;
pub mod identity;
mod lagos;
mod mail_journeys;
mod my_data;
mod pin_change;
pub(crate) mod pin_reset;
mod referrals;
mod schedules;
mod security;
pub(crate) mod shop;
mod shop_cable;
mod shop_fixes;
mod shop_key;
mod sign_in_limits;
pub mod sign_up;
mod storefront;
mod upgrade;
mod widths;

use crate::support::*;

pub const PASSWORD: &str = "correct horse battery";

pub fn account_with_password(server: &TestServer, email: &str, naira: &str) -> String {
    let account = server.cli(&[
        "account",
        "create",
        "--name",
        "Lagos Top-ups Ltd",
        "--email",
        email,
        "--password",
        PASSWORD,
    ]);
    let id = account["account_id"].as_str().unwrap().to_owned();
    server.cli(&[
        "wallet",
        "credit",
        "--account",
        &id,
        "--amount",
        naira,
        "--reference",
        &format!("fund-{}", rand_suffix()),
    ]);
    id
}

/// Saves the customer's phone on the dashboard's Account page.
pub async fn save_phone(server: &TestServer, email: &str, name: &str, phone: &str) {
    let cookie = sign_in(server, email, PASSWORD).await.unwrap();
    let http = no_redirects();
    let page = http
        .get(server.url("/dashboard/account"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    let csrf = csrf_in(&page.text().await.unwrap());
    let saved = http
        .post(server.url("/dashboard/account/profile"))
        .header("Cookie", &cookie)
        .form(&[("name", name), ("phone", phone), ("csrf", &csrf)])
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 303, "the profile was saved");
}

/// A signed-in page's HTML (`cookie`: the session), over plain HTTP.
pub async fn html_of(server: &TestServer, cookie: &str, path: &str) -> String {
    let page = no_redirects()
        .get(server.url(path))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    page.text().await.unwrap()
}

/// The code of the receipt a shop's `303` sends to.
pub fn receipt_of(answer: &reqwest::Response) -> String {
    let to = answer.headers()["location"].to_str().unwrap();
    to.rsplit('/').next().unwrap().to_owned()
}

pub fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Signs in over HTTP; returns the session cookie.
pub async fn sign_in(server: &TestServer, email: &str, password: &str) -> Result<String, u16> {
    let fields = [("email", email), ("password", password)];
    form_sign_in(server, "/dashboard/login", "billpay_session", &fields).await
}

/// Posts a sign-in form (with its CSRF token and sign-in cookie) at
/// `login`; the `session_cookie` set on success, else the status.
pub async fn form_sign_in(
    server: &TestServer,
    login: &str,
    session_cookie: &str,
    fields: &[(&str, &str)],
) -> Result<String, u16> {
    let response = post_open_form(server, login, login, fields).await;
    if response.status() != 303 {
        return Err(response.status().as_u16());
    }
    let cookie = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .find(|c| c.starts_with(&format!("{session_cookie}=")))
        .unwrap();
    Ok(cookie)
}

/// Posts a form anyone may send (sign-in, sign-up, a reset link's) to
/// `action`: the page at `page` first, for its sign-in cookie and CSRF
/// proof (double submit); the answer, redirects not followed.
pub async fn post_open_form(
    server: &TestServer,
    page: &str,
    action: &str,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let http = no_redirects();
    let shown = http.get(server.url(page)).send().await.unwrap();
    let cookie = shown.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let csrf = csrf_in(&shown.text().await.unwrap());
    let mut form = fields.to_vec();
    form.push(("csrf", &csrf));
    http.post(server.url(action))
        .header("Cookie", cookie)
        .form(&form)
        .send()
        .await
        .unwrap()
}

pub fn csrf_in(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("page has a CSRF field")
        + 19;
    html[at..at + 64].to_owned()
}
