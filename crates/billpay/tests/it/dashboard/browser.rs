//! The dashboard and the API docs page in a real headless Chromium.

use super::*;
use crate::support::receiver::Receiver;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// chromedriver on a free port, with Debian's Chromium headless.
pub struct Browser {
    driver: Child,
    pub client: Client,
}

impl Browser {
    pub async fn start() -> Browser {
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

    pub async fn css(&self, selector: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css(selector))
            .await
            .unwrap_or_else(|e| panic!("no element {selector}: {e}"))
    }

    pub async fn text(&self, selector: &str) -> String {
        self.css(selector).await.text().await.unwrap()
    }

    pub async fn fill(&self, selector: &str, value: &str) {
        let field = self.css(selector).await;
        field.clear().await.unwrap();
        field.send_keys(value).await.unwrap();
    }

    /// Clicks something that submits a form or follows a link, and waits for
    /// the next page (the old document's root goes stale).
    pub async fn click(&self, selector: &str) {
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

    pub async fn path(&self) -> String {
        self.client.current_url().await.unwrap().path().to_owned()
    }

    /// Saves a screenshot to the test output (and to docs/screenshots when asked).
    pub async fn screenshot(&self, name: &str) {
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

    /// The page fits the window's width: nothing scrolls sideways.
    pub async fn fits_the_width(&self, page: &str) {
        if let Some(why) = self.overflow().await {
            panic!("{page} scrolls sideways: {why}");
        }
    }

    /// What makes the page wider than the window, if anything does
    /// (`document.documentElement.scrollWidth` against the window's width).
    pub async fn overflow(&self) -> Option<String> {
        let widths: Value = self
            .client
            .execute(
                "const d = document.documentElement; \
                 const wide = [...document.querySelectorAll('body *')] \
                   .filter(e => e.getBoundingClientRect().right > d.clientWidth + 0.5) \
                   .map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className).slice(-3); \
                 return [d.scrollWidth, d.clientWidth, wide.join(', ')];",
                vec![],
            )
            .await
            .unwrap();
        let (scroll, client) = (widths[0].as_i64().unwrap(), widths[1].as_i64().unwrap());
        (scroll > client)
            .then(|| format!("{scroll} px wide in a {client} px window ({})", widths[2]))
    }

    pub async fn stop(mut self) {
        let _ = self.client.close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
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
    b.fill("#key-password", PASSWORD).await;
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
    b.fill("#webhook-password", PASSWORD).await;
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
    b.fill("#webhook-password", PASSWORD).await;
    b.click("#save-url").await;
    assert!(
        b.text("#webhook-notice")
            .await
            .contains("Webhook URL saved"),
        "saving the URL is not confirmed"
    );
    assert_eq!(
        b.css("#webhook-url").await.prop("value").await.unwrap(),
        Some(receiver.url("/ok"))
    );
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
    for (i, phone) in ["08031234567", "08131234567", "09061234567"]
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
    let fields = b.text("dl.fields").await;
    assert!(fields.contains("Prepaid"), "{fields}");
    assert!(
        fields.contains(" WAT") && !fields.contains("+00:00"),
        "{fields}"
    );
    b.screenshot("transaction").await;

    b.client.goto(&server.url("/dashboard")).await.unwrap();
    let balance = server.balance(&api_key).await;
    assert_eq!(b.text("#balance").await, naira(balance));
    b.screenshot("overview").await;

    // the statement downloads as CSV in the browser session
    b.client
        .goto(&server.url("/dashboard/wallet"))
        .await
        .unwrap();
    let statement = b.text("#statement").await;
    assert!(
        statement.contains("MTN Nigeria Airtime ₦500.00 to 08031234567")
            && statement.contains("Ikeja Electric prepaid token ₦5,000.00 for meter 45012345678"),
        "the statement does not say what was bought: {statement}"
    );
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
        csv.starts_with(
            "time (Lagos, WAT),kind,description,amount_naira,balance_after_naira,reference\n"
        ),
        "{csv}"
    );
    assert_eq!(
        csv.lines().count(),
        1 + 1 + 4,
        "header, funding, four debits: {csv}"
    );
    assert!(
        csv.contains(&format!(
            ",debit,\"Ikeja Electric prepaid token ₦5,000.00 for meter 45012345678\",-5000.00,245000.00,{code}"
        )),
        "{csv}"
    );

    // on a phone (390 px) no page scrolls sideways: tables are cards, and
    // the chart opens at its newest end
    b.client.set_window_size(390, 844).await.unwrap();
    b.client.goto(&server.url("/dashboard")).await.unwrap();
    b.fits_the_width("the overview").await;
    let chart: Value = b
        .client
        .execute(
            "const w = document.getElementById('spend-chart'); \
             const svg = w.querySelector('svg'); \
             return [w.scrollWidth > w.clientWidth, \
                     Math.abs(svg.getBoundingClientRect().right - w.getBoundingClientRect().right)];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        chart[0], true,
        "the chart is narrower than a phone: {chart}"
    );
    assert!(
        chart[1].as_f64().unwrap() < 2.0,
        "the chart does not open at its newest end: {chart}"
    );
    b.client
        .execute(
            "document.getElementById('spend-chart').scrollIntoView({block: 'center'})",
            vec![],
        )
        .await
        .unwrap();
    b.screenshot("overview-phone").await;
    b.client
        .goto(&server.url("/dashboard/transactions"))
        .await
        .unwrap();
    let row = b.css("#transactions tbody tr").await;
    assert_eq!(
        row.css_value("display").await.unwrap(),
        "block",
        "a table row is not a card on a phone"
    );
    let phone_pages = [
        ("/dashboard/transactions".to_owned(), "transactions-phone"),
        (
            format!("/dashboard/transactions/{code}"),
            "transaction-phone",
        ),
        ("/dashboard/wallet".to_owned(), "wallet-phone"),
        ("/dashboard/keys".to_owned(), "keys-phone"),
        (
            format!("/dashboard/keys/{key_id}/webhooks"),
            "webhooks-phone",
        ),
    ];
    for (path, name) in &phone_pages {
        b.client.goto(&server.url(path)).await.unwrap();
        b.fits_the_width(path).await;
        b.screenshot(name).await;
    }
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

pub fn naira(amount: f64) -> String {
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
