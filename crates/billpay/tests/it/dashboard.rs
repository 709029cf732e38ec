//! The dashboard in a real headless Chromium (driven over WebDriver), plus
//! its security rules checked over plain HTTP: CSRF, sign-out, isolation
//! between accounts, lockout, suspended accounts.


use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use crate::support::receiver::Receiver;
use crate::support::*;

const PASSWORD: &str = "correct horse battery";

/// chromedriver on a free port, with Debian's Chromium headless.
struct Browser {
    driver: Child,
    client: Client,
}

impl Browser {
    async fn start() -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(
            std::env::var("BILLPAY_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into()),
        )
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect(
            "chromedriver not found: run scripts/test (installs Debian's chromium and chromium-driver)",
        );
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": std::env::var("BILLPAY_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                         "--no-first-run", "--disable-background-networking", "--disable-component-update",
                         "--disable-sync", "--window-size=1280,1000"],
            }),
        );
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        let client = loop {
            match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("cannot start Chromium through chromedriver: {e}"),
            }
        };
        Browser { driver, client }
    }

    async fn css(&self, selector: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css(selector))
            .await
            .unwrap_or_else(|e| panic!("no element {selector}: {e}"))
    }

    async fn text(&self, selector: &str) -> String {
        self.css(selector).await.text().await.unwrap()
    }

    async fn fill(&self, selector: &str, value: &str) {
        let field = self.css(selector).await;
        field.clear().await.unwrap();
        field.send_keys(value).await.unwrap();
    }

    /// Clicks something that submits a form or follows a link, and waits for
    /// the next page (the old document's root goes stale).
    async fn click(&self, selector: &str) {
        let old_root = self.client.find(Locator::Css("html")).await.unwrap();
        self.css(selector).await.click().await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while old_root.tag_name().await.is_ok() {
            assert!(
                Instant::now() < deadline,
                "clicking {selector} loaded no new page"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    async fn path(&self) -> String {
        self.client.current_url().await.unwrap().path().to_owned()
    }

    /// Saves a screenshot to the test output (and to docs/screenshots when asked).
    async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), &png).unwrap();
        if std::env::var_os("BILLPAY_UPDATE_SCREENSHOTS").is_some() {
            let docs =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::write(docs.join(format!("{name}.png")), &png).unwrap();
        }
    }

    async fn stop(mut self) {
        let _ = self.client.close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn account_with_password(server: &TestServer, email: &str, naira: &str) -> String {
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

#[tokio::test]
async fn a_customer_uses_the_dashboard_in_a_browser() {
    let server = TestServer::spawn().await;
    let receiver = Receiver::start().await;
    account_with_password(&server, "owner@example.com", "250000");
    let browser = Browser::start().await;
    let b = &browser;

    // signed out: sent to the sign-in page; a wrong password is refused
    b.client.goto(&server.url("/dashboard")).await.unwrap();
    assert_eq!(b.path().await, "/dashboard/login");
    b.fill("#email", "owner@example.com").await;
    b.fill("#password", "wrong password").await;
    b.click("#sign-in").await;
    assert!(b.text(".error").await.contains("Wrong email or password"));
    b.fill("#email", "owner@example.com").await;
    b.fill("#password", PASSWORD).await;
    b.click("#sign-in").await;
    assert_eq!(b.path().await, "/dashboard");
    assert_eq!(b.text("#balance").await, "₦250,000.00");

    // create a key; it is shown once and works against the API
    b.client.goto(&server.url("/dashboard/keys")).await.unwrap();
    b.fill("#key-name", "production").await;
    b.click("#create-key").await;
    let api_key = b.text("#new-key").await;
    assert!(api_key.starts_with("bp_live_"), "{api_key}");
    assert_eq!(server.balance(&api_key).await, 250000.0);
    b.screenshot("keys").await;
    let key_id: String = b
        .css("#keys tbody tr")
        .await
        .attr("data-key")
        .await
        .unwrap()
        .unwrap();

    // webhooks: a bad URL is refused, a good one saved; verification on shows the secret once
    b.client
        .goto(&server.url(&format!("/dashboard/keys/{key_id}/webhooks")))
        .await
        .unwrap();
    b.fill("#webhook-url", "ftp://example.com/hook").await;
    b.client
        .execute(
            "document.getElementById('webhook-url').type = 'text'",
            vec![],
        )
        .await
        .unwrap();
    b.click("#save-url").await;
    assert!(
        b.text("#webhook-error").await.contains("http"),
        "bad URL not refused"
    );
    b.fill("#webhook-url", &receiver.url("/ok")).await;
    b.click("#save-url").await;
    b.click("#enable-signing").await;
    let secret = b.text("#webhook-secret").await;
    assert!(secret.starts_with("whsec_"));
    assert_eq!(b.text("#signing-state").await, "on");
    // the secret is not shown again on reload
    b.client
        .goto(&server.url(&format!("/dashboard/keys/{key_id}/webhooks")))
        .await
        .unwrap();
    assert!(
        b.client
            .find(Locator::Css("#webhook-secret"))
            .await
            .is_err()
    );

    // send a test event: signed with that secret, the receiver's answer shown
    b.click("#send-test").await;
    assert!(
        b.text("#test-result").await.starts_with("HTTP 200"),
        "{}",
        b.text("#test-result").await
    );
    let test_event = receiver
        .received()
        .into_iter()
        .find(|r| r.json()["event"] == "test.webhook")
        .expect("test event received");
    let (ts, sig) = (
        test_event.header("x-service-timestamp").unwrap(),
        test_event.header("x-service-signature").unwrap(),
    );
    billpay_webhook_verify::verify_now(&secret, &ts, &sig, &test_event.body)
        .expect("test event verifies with the shown secret");

    // a purchase made with the key appears with its status, token and webhook
    let reference = reference();
    let accepted = server
        .post(
            &api_key,
            "/v1/electricity/purchase",
            electricity(&reference, "45012345678", 5000.0),
        )
        .await;
    let code = accepted.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = server.wait_final(&api_key, &code).await;
    assert_eq!(done["status"], "successful");
    let hooks = receiver.wait_for(&code, 1).await;
    let hook = &hooks[0];
    billpay_webhook_verify::verify_now(
        &secret,
        &hook.header("x-service-timestamp").unwrap(),
        &hook.header("x-service-signature").unwrap(),
        &hook.body,
    )
    .expect("purchase webhook verifies");
    // more history for the overview chart
    for (i, phone) in ["08031234567", "08051234567", "09061234567"]
        .iter()
        .enumerate()
    {
        let body = json!({"provider_id": "mtn", "phone": phone, "amount": 500 * (i + 1), "reference": reference_for(i)});
        server
            .post(&api_key, "/v1/airtime/purchase", body)
            .await
            .assert_ok();
    }

    b.client
        .goto(&server.url(&format!("/dashboard/keys/{key_id}/webhooks")))
        .await
        .unwrap();
    let log = b.text("#deliveries").await;
    assert!(log.contains(&code) && log.contains("HTTP 200"), "{log}");
    b.screenshot("webhooks").await;

    b.client
        .goto(&server.url(&format!("/dashboard/transactions?q={reference}")))
        .await
        .unwrap();
    let row = b
        .text(&format!("#transactions tr[data-code='{code}']"))
        .await;
    assert!(
        row.contains("successful") && row.contains("₦5,000.00"),
        "{row}"
    );
    b.client
        .goto(&server.url("/dashboard/transactions?product=airtime"))
        .await
        .unwrap();
    assert_eq!(
        b.client
            .find_all(Locator::Css("#transactions tbody tr"))
            .await
            .unwrap()
            .len(),
        3
    );
    b.screenshot("transactions").await;
    b.client
        .goto(&server.url(&format!("/dashboard/transactions/{code}")))
        .await
        .unwrap();
    assert_eq!(b.text("#token").await, done["pin"].as_str().unwrap());
    assert!(b.text("#ledger").await.contains("debit"));
    assert!(b.text("#attempts").await.contains("HTTP 200"));

    b.client.goto(&server.url("/dashboard")).await.unwrap();
    let balance = server.balance(&api_key).await;
    assert_eq!(b.text("#balance").await, naira(balance));
    b.screenshot("overview").await;

    // the statement downloads as CSV in the browser session
    b.client
        .goto(&server.url("/dashboard/wallet"))
        .await
        .unwrap();
    b.screenshot("wallet").await;
    let csv: Value = b
        .client
        .execute_async(
            "fetch('/dashboard/wallet.csv').then(r => r.text()).then(arguments[0])",
            vec![],
        )
        .await
        .unwrap();
    let csv = csv.as_str().unwrap();
    assert!(
        csv.starts_with("date,kind,amount_naira,balance_after_naira,reference\n"),
        "{csv}"
    );
    assert_eq!(
        csv.lines().count(),
        1 + 1 + 4,
        "header, funding, four debits: {csv}"
    );
    assert!(
        csv.contains(&format!(",debit,-5000.00,245000.00,{code}")),
        "{csv}"
    );

    // a phone-sized screen still shows the page
    b.client.set_window_size(390, 844).await.unwrap();
    b.client.goto(&server.url("/dashboard")).await.unwrap();
    b.screenshot("overview-phone").await;
    b.client.set_window_size(1280, 1000).await.unwrap();

    // sign out: the old session cookie no longer works
    let cookie = b
        .client
        .get_named_cookie("billpay_session")
        .await
        .unwrap()
        .value()
        .to_owned();
    b.click("#sign-out").await;
    assert_eq!(b.path().await, "/dashboard/login");
    let status = no_redirects()
        .get(server.url("/dashboard"))
        .header("Cookie", format!("billpay_session={cookie}"))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 303, "a signed-out session still works");
    browser.stop().await;
}

fn reference_for(i: usize) -> String {
    format!("airtime-{i}-{}", rand_suffix())
}

fn naira(amount: f64) -> String {
    let kobo = (amount * 100.0).round() as i64;
    let whole = (kobo / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("₦{grouped}.{:02}", kobo % 100)
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Signs in over HTTP; returns the session cookie.
/// `/docs`: Swagger UI, served from the binary, renders every operation of
/// `/openapi.json` and loads nothing from anywhere else (it works offline).
#[tokio::test]
async fn the_api_docs_page_renders_every_operation() {
    let server = TestServer::spawn().await;
    let document: Value = reqwest::get(server.url("/openapi.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let operations: usize = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert!(operations > 20, "{operations} operations documented");

    let browser = Browser::start().await;
    let b = &browser;
    b.client.goto(&server.url("/docs")).await.unwrap();
    assert_eq!(b.path().await, "/docs/");
    assert!(b.text(".info .title").await.starts_with("billpay"));
    b.css("#operations-wallet-balance").await;
    let rendered = b.client.find_all(Locator::Css(".opblock")).await.unwrap();
    assert_eq!(rendered.len(), operations);
    b.screenshot("api-docs").await;

    let origin = server.url("");
    let loaded = b
        .client
        .execute(
            "return performance.getEntriesByType('resource').map(r => r.name)",
            vec![],
        )
        .await
        .unwrap();
    let loaded: Vec<String> = serde_json::from_value(loaded).unwrap();
    assert!(loaded.iter().any(|url| url.ends_with("/openapi.json")));
    assert!(
        loaded.iter().all(|url| url.starts_with(&origin)),
        "{loaded:?}"
    );
    browser.stop().await;
}

async fn sign_in(server: &TestServer, email: &str, password: &str) -> Result<String, u16> {
    let http = no_redirects();
    let page = http
        .get(server.url("/dashboard/login"))
        .send()
        .await
        .unwrap();
    let login_cookie = page.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let html = page.text().await.unwrap();
    let csrf = csrf_in(&html);
    let response = http
        .post(server.url("/dashboard/login"))
        .header("Cookie", login_cookie)
        .form(&[("email", email), ("password", password), ("csrf", &csrf)])
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
        .find(|c| c.starts_with("billpay_session="))
        .unwrap();
    Ok(cookie)
}

fn csrf_in(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("page has a CSRF field")
        + 19;
    html[at..at + 64].to_owned()
}

#[tokio::test]
async fn dashboard_security_rules() {
    let server = TestServer::spawn().await;
    let a = account_with_password(&server, "a@example.com", "10000");
    let b = account_with_password(&server, "b@example.com", "10000");
    let http = no_redirects();

    // the session cookie's attributes
    let page = http
        .get(server.url("/dashboard/login"))
        .header("X-Forwarded-Proto", "https")
        .send()
        .await
        .unwrap();
    let set_cookie = page.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        set_cookie.contains("HttpOnly")
            && set_cookie.contains("SameSite=Lax")
            && set_cookie.contains("Secure"),
        "{set_cookie}"
    );

    let cookie_a = sign_in(&server, "a@example.com", PASSWORD).await.unwrap();
    let cookie_b = sign_in(&server, "b@example.com", PASSWORD).await.unwrap();

    // a form without (or with a wrong) CSRF proof is refused and changes nothing
    let keys_before = server.cli(&["transaction", "list", "--account", &a]);
    for form in [vec![("name", "x")], vec![("name", "x"), ("csrf", "0000")]] {
        let r = http
            .post(server.url("/dashboard/keys"))
            .header("Cookie", &cookie_a)
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
    }
    let keys_page = http
        .get(server.url("/dashboard/keys"))
        .header("Cookie", &cookie_a)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        keys_page.contains("No keys yet"),
        "a key was created without CSRF proof"
    );
    // B's CSRF token does not work with A's session
    let csrf_b = csrf_in(
        &http
            .get(server.url("/dashboard/keys"))
            .header("Cookie", &cookie_b)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    let r = http
        .post(server.url("/dashboard/keys"))
        .header("Cookie", &cookie_a)
        .form(&[("name", "x"), ("csrf", &csrf_b)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let _ = keys_before;

    // one account never sees another's keys, webhooks or transactions
    let key_a = server.cli(&["key", "create", "--account", &a]);
    let api_key_a = key_a["api_key"].as_str().unwrap();
    let code = server.post(api_key_a, "/v1/airtime/purchase", json!({"provider_id":"mtn","phone":"08031234567","amount":100,"reference": reference()})).await.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    let get_b = |path: String| {
        http.get(server.url(&path))
            .header("Cookie", &cookie_b)
            .send()
    };
    assert_eq!(
        get_b(format!("/dashboard/transactions/{code}"))
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        get_b(format!(
            "/dashboard/keys/{}/webhooks",
            key_a["key_id"].as_str().unwrap()
        ))
        .await
        .unwrap()
        .status(),
        404
    );
    let list_b = get_b("/dashboard/transactions".into())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!list_b.contains(&code));
    let csv_b = get_b("/dashboard/wallet.csv".into())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!csv_b.contains(&code));
    let csrf_b = csrf_in(
        &get_b("/dashboard/keys".into())
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    let r = http
        .post(server.url(&format!(
            "/dashboard/keys/{}/status",
            key_a["key_id"].as_str().unwrap()
        )))
        .header("Cookie", &cookie_b)
        .form(&[("action", "revoke"), ("csrf", &csrf_b)])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    server
        .get(api_key_a, "/v1/wallet/balance")
        .await
        .assert_ok();
    // A sees its own
    let mine = http
        .get(server.url(&format!("/dashboard/transactions/{code}")))
        .header("Cookie", &cookie_a)
        .send()
        .await
        .unwrap();
    assert_eq!(mine.status(), 200);

    // a suspended account cannot sign in, and its open session stops working
    server.cli(&["account", "suspend", &b]);
    assert_eq!(sign_in(&server, "b@example.com", PASSWORD).await, Err(403));
    assert_eq!(get_b("/dashboard".into()).await.unwrap().status(), 303);

    // five wrong passwords lock the email, even for the right one
    for _ in 0..5 {
        assert_eq!(
            sign_in(&server, "a@example.com", "not the password").await,
            Err(401)
        );
    }
    assert_eq!(sign_in(&server, "a@example.com", PASSWORD).await, Err(429));
    // an unknown email is refused like a wrong password
    assert_eq!(
        sign_in(&server, "nobody@example.com", PASSWORD).await,
        Err(401)
    );

    // a login form without its double-submit cookie is refused
    let html = http
        .get(server.url("/dashboard/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let r = http
        .post(server.url("/dashboard/login"))
        .form(&[
            ("email", "a@example.com"),
            ("password", PASSWORD),
            ("csrf", &csrf_in(&html)),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
}

#[tokio::test]
async fn dashboard_pages_cannot_be_framed_or_cached() {
    let server = TestServer::spawn().await;
    account_with_password(&server, "frame@example.com", "10000");
    let cookie = sign_in(&server, "frame@example.com", PASSWORD)
        .await
        .unwrap();
    let http = no_redirects();
    for path in [
        "/dashboard",
        "/dashboard/keys",
        "/dashboard/wallet",
        "/dashboard/login",
    ] {
        let page = http
            .get(server.url(path))
            .header("Cookie", &cookie)
            .send()
            .await
            .unwrap();
        let header = |name: &str| {
            page.headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default()
        };
        assert_eq!(header("x-frame-options"), "DENY", "{path}");
        let csp = header("content-security-policy");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert_eq!(header("cache-control"), "no-store", "{path}");
    }
}

#[tokio::test]
async fn a_password_change_or_a_suspension_ends_every_session() {
    let server = TestServer::spawn().await;
    let id = account_with_password(&server, "ended@example.com", "10000");
    let http = no_redirects();
    let signed_in = |cookie: String| {
        let request = http
            .get(server.url("/dashboard/keys"))
            .header("Cookie", cookie);
        async move { request.send().await.unwrap().status() == 200 }
    };

    let cookie = sign_in(&server, "ended@example.com", PASSWORD)
        .await
        .unwrap();
    assert!(signed_in(cookie.clone()).await);
    server.cli(&["account", "set-password", &id, "--password", PASSWORD]);
    assert!(!signed_in(cookie).await, "set-password ends the session");

    let cookie = sign_in(&server, "ended@example.com", PASSWORD)
        .await
        .unwrap();
    assert!(signed_in(cookie.clone()).await);
    server.cli(&["account", "suspend", &id]);
    server.cli(&["account", "reactivate", &id]);
    assert!(!signed_in(cookie).await, "a suspension ends the session");
    let cookie = sign_in(&server, "ended@example.com", PASSWORD)
        .await
        .unwrap();
    assert!(signed_in(cookie).await, "signing in again works");
}
