//! The dashboard in a real headless Chromium (driven over WebDriver), plus
//! its security rules checked over plain HTTP: CSRF, sign-out, isolation
//! between accounts, lockout, suspended accounts, and the sign-in's bounds
//! under abuse (memory, body sizes, concurrent attempts).

mod api_docs;
pub mod browser;
mod lagos;
mod my_data;
mod security;
mod shop;
mod sign_in_limits;
pub mod sign_up;

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
    let http = no_redirects();
    let page = http.get(server.url(login)).send().await.unwrap();
    let login_cookie = page.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let html = page.text().await.unwrap();
    let csrf = csrf_in(&html);
    let mut form = fields.to_vec();
    form.push(("csrf", &csrf));
    let response = http
        .post(server.url(login))
        .header("Cookie", login_cookie)
        .form(&form)
        .send()
        .await
        .unwrap();
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

pub fn csrf_in(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("page has a CSRF field")
        + 19;
    html[at..at + 64].to_owned()
}
