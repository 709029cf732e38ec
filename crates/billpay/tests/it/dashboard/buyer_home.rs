//! Buyers and developers apart, the buyer's home and receipts a buyer keeps
//! (issue 46), in Chromium at 390×844 and 1280×900: a stranger signs up,
//! verifies with the emailed code, lands on the buyer's home (no API keys
//! anywhere), is funded, buys data for their own number, reopens the
//! receipt from History and shares it on WhatsApp; the receipt prints on one
//! page. Developer access: on with the password (Keys and Webhooks in the
//! menu, their pages answer), off (hidden, and their pages say how to turn
//! it on); an operator's grant by the CLI and the console, logged.

use super::browser::Browser;
use super::shop::{PIN, final_receipt, receipt_code, set_pin_browser};
use super::sign_up::{OPEN, applicant, last_notice, sign_up_http};
use super::*;
use crate::support::paystack::FakePaystack;
use fantoccini::Locator;

/// Percent-decoding of a URL's query value (UTF-8).
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Chromium's `Emulation.setEmulatedMedia` (through chromedriver's CDP
/// endpoint): the page as printed (`"print"`) or as on screen (`""`).
#[derive(Debug)]
struct EmulateMedia(&'static str);

impl fantoccini::wd::WebDriverCompatibleCommand for EmulateMedia {
    fn endpoint(
        &self,
        base: &reqwest::Url,
        session: Option<&str>,
    ) -> Result<reqwest::Url, <reqwest::Url as std::str::FromStr>::Err> {
        base.join(&format!("session/{}/goog/cdp/execute", session.unwrap()))
    }

    fn method_and_body(&self, _: &reqwest::Url) -> (axum::http::Method, Option<String>) {
        let body = serde_json::json!({
            "cmd": "Emulation.setEmulatedMedia",
            "params": { "media": self.0 },
        });
        (axum::http::Method::POST, Some(body.to_string()))
    }
}

/// Whether each of `selectors` is drawn (it has a box: neither it nor an
/// ancestor is `display: none`).
async fn drawn(b: &Browser, selectors: &[&str]) -> Vec<bool> {
    let script =
        "return arguments[0].map(s => document.querySelector(s).getClientRects().length > 0)";
    let answer = b
        .client
        .execute(script, vec![serde_json::json!(selectors)])
        .await
        .unwrap();
    serde_json::from_value(answer).unwrap()
}

/// Both widths of the page shown now, checked for sideways scrolling at 390 px.
async fn both_widths(b: &Browser, name: &str) {
    b.client.set_window_size(390, 844).await.unwrap();
    b.fits_the_width(name).await;
    b.screenshot(&format!("buyer-{name}-phone")).await;
    b.client.set_window_size(1280, 900).await.unwrap();
    b.screenshot(&format!("buyer-{name}")).await;
    b.client.set_window_size(390, 844).await.unwrap();
}

async fn has(b: &Browser, selector: &str) -> bool {
    b.client.find(Locator::Css(selector)).await.is_ok()
}

#[tokio::test]
async fn a_stranger_signs_up_buys_data_and_shares_the_receipt_from_history() {
    let paystack = FakePaystack::start().await;
    let mut env: Vec<(&str, String)> = paystack.env();
    env.extend(OPEN.map(|(k, v)| (k, v.to_owned())));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    let email = format!("tolu-{}@example.com", rand_suffix());
    let browser = Browser::start().await;
    let b = &browser;
    b.client.set_window_size(390, 844).await.unwrap();

    // sign up, then the emailed code
    b.client
        .goto(&server.url("/dashboard/signup"))
        .await
        .unwrap();
    b.fill("#name", "Tolu Adeyemi").await;
    b.fill("#email", &email).await;
    b.fill("#phone", "0803 123 4567").await;
    b.fill("#password", PASSWORD).await;
    b.fill("#password-again", PASSWORD).await;
    b.click("#sign-up").await;
    let code = last_notice(&server, &email, "email_verification").await["code"]
        .as_str()
        .unwrap()
        .to_owned();
    b.fill("#email", &email).await;
    b.fill("#code", &code).await;
    b.click("#verify").await;

    // the buyer's home: the balance, funding, tiles; nothing of a developer's
    assert_eq!(b.path().await, "/dashboard");
    assert_eq!(b.text("#balance").await, "₦0.00");
    assert_eq!(b.text("h1").await, "Hello, Tolu");
    let main = b.text("main").await;
    assert!(
        !main.contains("API key") && !main.contains("ask your provider"),
        "a buyer's home speaks of no keys and no provider: {main}"
    );
    let menu = b.text("header nav").await;
    for item in ["Buy", "Wallet", "History", "Beneficiaries", "Account"] {
        assert!(menu.contains(item), "{item} in the menu: {menu}");
    }
    assert!(
        !menu.contains("API keys") && !menu.contains("Webhooks"),
        "{menu}"
    );
    b.css("#tile-data").await;
    assert!(b.text("#no-purchases").await.contains("No purchases yet"));
    both_widths(b, "home-new").await;

    // funded by a transfer to the account number reserved on that first visit
    let number = b
        .text("#home-funding-accounts .account-number")
        .await
        .trim()
        .to_owned();
    assert_eq!(
        paystack.calls(),
        (1, 1),
        "reserved once, on the first visit"
    );
    let reference = paystack.transfer(Some(&number), 5_000.0);
    let (body, signature) = paystack.webhook(&reference);
    let answer = server
        .http
        .post(server.url("/callbacks/paystack"))
        .header("content-type", "application/json")
        .header("x-paystack-signature", signature)
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    b.client.goto(&server.url("/dashboard")).await.unwrap();
    assert_eq!(b.text("#balance").await, "₦5,000.00");
    assert_eq!(paystack.calls(), (1, 1), "nothing reserved again");
    set_pin_browser(b, &server).await;

    // airtime: "my number" and the amount chips fill the form in place
    b.client
        .goto(&server.url("/dashboard/buy/airtime"))
        .await
        .unwrap();
    assert_eq!(b.text("#my-number").await, "My number (08031234567)");
    b.css("#my-number").await.click().await.unwrap();
    b.css("#amount-chips a[data-value='500']")
        .await
        .click()
        .await
        .unwrap();
    assert_eq!(
        b.css("#phone")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("08031234567")
    );
    assert_eq!(
        b.css("#amount")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("500")
    );
    let url = b.client.current_url().await.unwrap();
    assert_eq!(
        url.query(),
        None,
        "filled in place, not by reloading: {url}"
    );
    both_widths(b, "airtime").await;

    // data for their own number
    b.client
        .goto(&server.url("/dashboard/buy/data"))
        .await
        .unwrap();
    b.css("#my-number").await.click().await.unwrap();
    b.click("#show-plans").await;
    b.css("input[value='mtn-sme-1gb']")
        .await
        .click()
        .await
        .unwrap();
    b.fill("#pin", PIN).await;
    b.click("#buy").await;
    let code = receipt_code(b).await;
    assert_eq!(final_receipt(b).await, "successful");

    // History: the row says what was bought and for whom, and opens the receipt
    b.click("#nav-history").await;
    let link = format!("#transactions tr[data-code='{code}'] a.receipt-link");
    let words = b.text(&link).await;
    assert!(words.contains("data to 08031234567"), "{words}");
    assert!(
        !b.text("#transactions").await.contains("web-"),
        "no internal references for a buyer"
    );
    assert!(
        !has(b, "a.details-link").await,
        "no technical page for a buyer"
    );
    both_widths(b, "history").await;
    b.click(&link).await;
    assert_eq!(b.path().await, format!("/dashboard/receipts/{code}"));
    assert_eq!(b.text("#receipt-status").await, "successful");
    assert!(!has(b, "#technical-details").await);

    // shared on WhatsApp: the link carries the receipt's share text
    let share = b.css("#share").await.prop("value").await.unwrap().unwrap();
    assert!(
        share.contains("08031234567") && share.contains(&code),
        "{share}"
    );
    let href = b
        .css("#share-whatsapp")
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let text = href
        .strip_prefix("https://wa.me/?text=")
        .unwrap_or_else(|| panic!("not a WhatsApp share link: {href}"));
    assert!(
        !text.contains(' ') && !text.contains('\n'),
        "encoded: {text}"
    );
    assert_eq!(percent_decoded(text), share);
    both_widths(b, "receipt").await;

    // printed: the receipt alone, no menu, no buttons, no forms; one page
    let parts = [
        "#receipt",
        "header.top",
        "header nav",
        "#share-card",
        "#share-whatsapp",
        "#buy-again",
        "#save-recipient",
    ];
    assert_eq!(
        drawn(b, &parts).await,
        [true, true, true, true, true, true, true]
    );
    b.client.issue_cmd(EmulateMedia("print")).await.unwrap();
    assert_eq!(
        drawn(b, &parts).await,
        [true, false, false, false, false, false, false],
        "printed: {parts:?}"
    );
    b.client.issue_cmd(EmulateMedia("")).await.unwrap();
    let pdf = b
        .client
        .print(fantoccini::wd::PrintConfiguration::default())
        .await
        .unwrap();
    let pdf = String::from_utf8_lossy(&pdf);
    let pages = pdf.matches("/Type /Page").count() - pdf.matches("/Type /Pages").count();
    assert_eq!(pages, 1, "the receipt prints on one page");

    // home: the purchase is there, linking to its receipt
    b.client.goto(&server.url("/dashboard")).await.unwrap();
    let recent = b
        .css(&format!("#recent-purchases a[data-code='{code}']"))
        .await;
    assert_eq!(
        recent.attr("href").await.unwrap().as_deref(),
        Some(format!("/dashboard/receipts/{code}").as_str())
    );
    assert!(recent.text().await.unwrap().contains("data to 08031234567"));
    both_widths(b, "home").await;

    // saved from the receipt, listed on Beneficiaries, bought again, deleted
    b.client
        .goto(&server.url(&format!("/dashboard/receipts/{code}")))
        .await
        .unwrap();
    b.fill("#save-recipient input[name='nickname']", "Me").await;
    b.click("#save-recipient button").await;
    b.click("#nav-beneficiaries").await;
    let saved = b.text("#beneficiaries-data").await;
    assert!(
        saved.contains("Me") && saved.contains("08031234567"),
        "{saved}"
    );
    both_widths(b, "beneficiaries").await;
    b.click("#beneficiaries-data a.button").await;
    assert_eq!(b.path().await, "/dashboard/buy/data");
    assert_eq!(
        b.css("#phone")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("08031234567")
    );
    b.client
        .goto(&server.url("/dashboard/beneficiaries"))
        .await
        .unwrap();
    b.client
        .execute("window.confirm = () => true", vec![])
        .await
        .unwrap();
    b.click("#beneficiaries-data button.danger").await;
    b.css("#no-beneficiaries").await;

    // the developer pages say how to turn developer access on
    b.client.goto(&server.url("/dashboard/keys")).await.unwrap();
    assert!(b.text("#developer-off").await.contains("developer access"));
    both_widths(b, "developer-off").await;
    b.click("#turn-on-link").await;
    assert_eq!(b.text("#developer-state").await, "off");
    both_widths(b, "account").await;
    browser.stop().await;
}

/// `path`'s status and HTML with `cookie`.
async fn get(server: &TestServer, cookie: &str, path: &str) -> (u16, String) {
    let page = no_redirects()
        .get(server.url(path))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    (page.status().as_u16(), page.text().await.unwrap())
}

async fn post(server: &TestServer, cookie: &str, path: &str, fields: &[(&str, &str)]) -> u16 {
    let answer = no_redirects()
        .post(server.url(path))
        .header("Cookie", cookie)
        .form(fields)
        .send()
        .await
        .unwrap();
    answer.status().as_u16()
}

/// Whether the dashboard treats the account as a developer's: the menu's
/// two items, and the keys and webhooks pages answering.
async fn developer_pages(server: &TestServer, cookie: &str) -> bool {
    let (_, home) = get(server, cookie, "/dashboard").await;
    let in_menu = home.contains("id=\"nav-keys\"") && home.contains("id=\"nav-webhooks\"");
    let (keys, keys_page) = get(server, cookie, "/dashboard/keys").await;
    let (hooks, _) = get(server, cookie, "/dashboard/webhooks").await;
    let summary = home.contains("id=\"developer-summary\"");
    match (keys, hooks) {
        (200, 200) => {
            assert!(in_menu && summary, "pages answer, so the menu shows them");
            true
        }
        (403, 403) => {
            assert!(!in_menu && !summary, "hidden pages, hidden menu");
            assert!(keys_page.contains("turn on <strong>developer access</strong>"));
            false
        }
        other => panic!("keys and webhooks disagree: {other:?}"),
    }
}

#[tokio::test]
async fn developer_access_is_turned_on_with_the_password_and_off() {
    let server = TestServer::spawn_with_env(Options::default(), &OPEN).await;
    let email = format!("dev-{}@example.com", rand_suffix());
    let (status, _) = sign_up_http(&server, &applicant("Dayo Dev", &email)).await;
    assert_eq!(status, 200);
    let cookie = sign_in(&server, &email, PASSWORD).await.unwrap();
    assert!(
        !developer_pages(&server, &cookie).await,
        "a sign-up is a buyer"
    );
    let posted = no_redirects()
        .post(server.url("/dashboard/keys"))
        .header("Cookie", &cookie)
        .form(&[("csrf", "x"), ("name", "n"), ("current", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 403, "no key made without developer access");

    let (_, account) = get(&server, &cookie, "/dashboard/account").await;
    let csrf = csrf_in(&account);
    let on = [
        ("csrf", csrf.as_str()),
        ("access", "on"),
        ("current", "wrong"),
    ];
    assert_eq!(
        post(&server, &cookie, "/dashboard/account/developer", &on).await,
        422
    );
    assert!(
        !developer_pages(&server, &cookie).await,
        "a wrong password changes nothing"
    );
    let on = [
        ("csrf", csrf.as_str()),
        ("access", "on"),
        ("current", PASSWORD),
    ];
    assert_eq!(
        post(&server, &cookie, "/dashboard/account/developer", &on).await,
        303
    );
    assert!(developer_pages(&server, &cookie).await);
    let (_, account) = get(&server, &cookie, "/dashboard/account?done=developer-on").await;
    assert!(account.contains("you turned it on"), "{account}");

    let off = [("csrf", csrf.as_str()), ("access", "off")];
    assert_eq!(
        post(&server, &cookie, "/dashboard/account/developer", &off).await,
        303
    );
    assert!(!developer_pages(&server, &cookie).await);
}

#[tokio::test]
async fn an_operator_grants_developer_access_by_the_cli_and_the_console() {
    let server = TestServer::spawn().await;
    crate::console::add_operators(&server);
    let email = format!("reseller-{}@example.com", rand_suffix());
    let account = account_with_password(&server, &email, "100");
    let cookie = sign_in(&server, &email, PASSWORD).await.unwrap();
    assert!(
        developer_pages(&server, &cookie).await,
        "an account the operator opened is a developer's"
    );

    let off = server.cli(&["account", "developer-access", &account, "off"]);
    assert_eq!(off["developer_access"], false);
    assert!(!developer_pages(&server, &cookie).await);
    let shown = server.cli(&["account", "show", &account]);
    assert_eq!(shown["developer_access"], serde_json::Value::Null);

    // the console's customer page: an owner turns it back on, logged
    let fields = [("email", crate::console::OWNER), ("password", PASSWORD)];
    let owner = form_sign_in(&server, "/admin/login", "billpay_admin", &fields)
        .await
        .unwrap();
    let path = format!("/admin/customers/{account}");
    let (_, page) = get(&server, &owner, &path).await;
    assert!(page.contains("id=\"developer-access\">off<"), "{page}");
    let grant = [("csrf", csrf_in(&page)), ("on", "on".to_owned())];
    let grant: Vec<(&str, &str)> = grant.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let status = post(&server, &owner, &format!("{path}/developer-access"), &grant).await;
    assert_eq!(status, 303);
    assert!(developer_pages(&server, &cookie).await);
    let (_, page) = get(&server, &owner, &path).await;
    assert!(page.contains("id=\"developer-access\">on (an operator)<"));

    let log = server.cli(&["operator", "log", "--subject", &account]);
    let lines: Vec<_> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["action"] == "account.developer_access")
        .collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert_eq!(lines[0]["operator_email"], crate::console::OWNER);
    assert_eq!(lines[0]["after"], "on (operator)");
    assert_eq!(lines[1]["before"], "on (operator)");
    assert_eq!(lines[1]["after"], "off");
}

#[tokio::test]
async fn an_api_tier_gives_its_accounts_developer_access_while_they_are_on_it() {
    let server = TestServer::spawn().await;
    let email = format!("tiered-{}@example.com", rand_suffix());
    let account = account_with_password(&server, &email, "100");
    server.cli(&["account", "developer-access", &account, "off"]);
    let cookie = sign_in(&server, &email, PASSWORD).await.unwrap();
    assert!(!developer_pages(&server, &cookie).await, "a buyer");

    server.cli(&["tier", "create", "api"]);
    server.cli(&["account", "set-tier", &account, "api"]);
    assert!(
        !developer_pages(&server, &cookie).await,
        "a tier is not an API tier until the owner says so"
    );
    let on = server.cli(&["tier", "developer-access", "api", "on"]);
    assert_eq!(on["developer_access"], true);
    assert!(developer_pages(&server, &cookie).await, "at once");
    let (_, page) = get(&server, &cookie, "/dashboard/account").await;
    assert!(page.contains("it comes with your price tier"), "{page}");
    assert!(
        !page.contains("id=\"developer-off\""),
        "the customer's switch cannot end the tier's access"
    );
    let listed = server.cli(&["tier", "list"]);
    let api = listed["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "api")
        .unwrap();
    assert_eq!(api["developer_access"], true, "{listed}");
    let shown = server.cli(&["account", "show", &account]);
    assert_eq!(
        shown["developer_access"],
        serde_json::Value::Null,
        "the account's own switch is still off"
    );

    server.cli(&["account", "set-tier", &account, "default"]);
    assert!(
        !developer_pages(&server, &cookie).await,
        "off the tier, off the pages"
    );
    server.cli(&["account", "set-tier", &account, "api"]);
    server.cli(&["tier", "developer-access", "api", "off"]);
    assert!(!developer_pages(&server, &cookie).await);

    // the console's Prices page: an owner marks it again
    crate::console::add_operators(&server);
    let fields = [("email", crate::console::OWNER), ("password", PASSWORD)];
    let owner = form_sign_in(&server, "/admin/login", "billpay_admin", &fields)
        .await
        .unwrap();
    let (_, prices) = get(&server, &owner, "/admin/prices").await;
    assert!(prices.contains("id=\"tier-access\""), "{prices}");
    let csrf = csrf_in(&prices);
    let mark = [("csrf", csrf.as_str()), ("tier", "api"), ("access", "on")];
    let path = "/admin/prices/tiers/developer-access";
    assert_eq!(post(&server, &owner, path, &mark).await, 303);
    assert!(
        developer_pages(&server, &cookie).await,
        "marked in the console"
    );
    let (_, prices) = get(&server, &owner, "/admin/prices").await;
    assert!(prices.contains("api-tier"), "the tier wears its badge");
    let off = [("csrf", csrf.as_str()), ("tier", "api"), ("access", "off")];
    assert_eq!(post(&server, &owner, path, &off).await, 303);
    assert!(!developer_pages(&server, &cookie).await);

    let (ok, refused) = server.cli_result(&["tier", "developer-access", "default", "on"]);
    assert!(!ok, "default is every account's tier: {refused}");
    let (ok, missing) = server.cli_result(&["tier", "developer-access", "nope", "on"]);
    assert!(!ok, "{missing}");
    let log = server.cli(&["operator", "log", "--subject", "api"]);
    let lines: Vec<_> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["action"] == "pricing.tier_developer_access")
        .map(|l| (l["before"].clone(), l["after"].clone()))
        .collect();
    assert_eq!(
        lines,
        [
            (serde_json::json!("on"), serde_json::json!("off")),
            (serde_json::json!("off"), serde_json::json!("on")),
            (serde_json::json!("on"), serde_json::json!("off")),
            (serde_json::json!("off"), serde_json::json!("on"))
        ],
        "newest first: {log}"
    );
}
