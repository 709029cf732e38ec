//! The console's prices, catalogue and customer tools over plain HTTP
//! against the real binary: a tier changed on an account's page is the
//! price the customer then pays; a provider taken off sale refuses the
//! purchase; the transaction filters; "resend webhook" delivers again to a
//! real receiver; search
//! finds an account by a key prefix and by its virtual account number; a
//! supplier's plan-list differences are shown to support and applied by an
//! owner only.

use super::*;
use crate::dashboard::{csrf_in, no_redirects};
use crate::support::monnify::FakeMonnify;
use crate::support::receiver::Receiver;
use crate::support::vtpass::FakeVtpass;
use billpay_api_testkit::kind::kobo;
use serde_json::json;
use std::time::{Duration, Instant};

/// An operator signed in over HTTP.
pub struct Console {
    http: reqwest::Client,
    base: String,
    cookie: String,
}

impl Console {
    pub async fn sign_in(server: &TestServer, email: &str) -> Console {
        let http = no_redirects();
        let page = http.get(server.url("/admin/login")).send().await.unwrap();
        let login_cookie = cookie_named(&page, "billpay_admin_login=");
        let csrf = csrf_in(&page.text().await.unwrap());
        let signed_in = http
            .post(server.url("/admin/login"))
            .header("Cookie", login_cookie)
            .form(&[("email", email), ("password", PASSWORD), ("csrf", &csrf)])
            .send()
            .await
            .unwrap();
        assert_eq!(signed_in.status(), 303, "{email} signs in");
        Console {
            cookie: cookie_named(&signed_in, "billpay_admin="),
            http,
            base: server.url(""),
        }
    }

    pub async fn page(&self, path: &str) -> String {
        let page = self.get(path).await;
        assert_eq!(page.status(), 200, "GET {path}");
        page.text().await.unwrap()
    }

    async fn get(&self, path: &str) -> reqwest::Response {
        let url = format!("{}{path}", self.base);
        let request = self.http.get(url).header("Cookie", &self.cookie);
        request.send().await.unwrap()
    }

    /// Posts a form with the session's CSRF proof; answers the status and body.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let csrf = csrf_in(&self.page("/admin").await);
        let mut form: Vec<(&str, &str)> = fields.to_vec();
        form.push(("csrf", &csrf));
        let url = format!("{}{path}", self.base);
        let request = self.http.post(url).header("Cookie", &self.cookie);
        let response = request.form(&form).send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }
}

/// The `name=value` of the cookie a response sets whose text starts with `name`.
fn cookie_named(response: &reqwest::Response, name: &str) -> String {
    let all = response.headers().get_all("set-cookie");
    let pairs = all
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap());
    let mut named = pairs.filter(|pair| pair.starts_with(name));
    named
        .next()
        .unwrap_or_else(|| panic!("no {name} cookie"))
        .to_owned()
}

fn airtime(naira: u32) -> serde_json::Value {
    json!({"provider_id": "mtn", "phone": "08031234567", "amount": naira, "reference": reference()})
}

#[tokio::test]
async fn a_tier_set_in_the_console_is_the_price_the_customer_then_pays() {
    let server = TestServer::spawn().await;
    add_operators(&server);
    let customer = server.customer("5000");
    let owner = Console::sign_in(&server, OWNER).await;
    let created = owner.post("/admin/prices/tiers", &[("name", "resellers")]);
    assert_eq!(created.await.0, 303);
    let rule = [
        ("tier", "resellers"),
        ("product", "airtime"),
        ("provider", "mtn"),
        ("kind", "discount_percent"),
        ("value", "10"),
    ];
    assert_eq!(owner.post("/admin/prices/rules", &rule).await.0, 303);
    let mut typo = rule;
    typo[2] = ("provider", "mtnn");
    let (status, body) = owner.post("/admin/prices/rules", &typo).await;
    assert_eq!(status, 400, "a rule names only what is sold: {body}");
    let prices = owner.page("/admin/prices").await;
    assert!(prices.contains("discount 10.00%"), "{prices}");

    let tier_form = format!("/admin/customers/{}/tier", customer.account_id);
    let fields = [("tier", "resellers"), ("reason", "signed a reseller deal")];
    assert_eq!(owner.post(&tier_form, &fields).await.0, 303);
    let placed = server
        .post(&customer.api_key, "/v1/airtime/purchase", airtime(1000))
        .await;
    let charged = kobo(&placed.assert_ok()["amount"]);
    assert_eq!(charged, 90_000, "10% off");
    assert_eq!(server.balance(&customer.api_key).await, 4100.0);

    let account = owner
        .page(&format!("/admin/customers/{}", customer.account_id))
        .await;
    assert!(account.contains("<span id=\"tier\">resellers</span>"));
    let log = server.cli(&["operator", "log", "--subject", &customer.account_id]);
    let line = &log["entries"][0];
    assert_eq!(line["action"], "pricing.account_tier", "{log}");
    assert_eq!(line["before"], "default");
    assert_eq!(line["after"], "resellers");
    assert_eq!(line["reason"], "signed a reseller deal");
    assert_eq!(line["operator_email"], OWNER);
}

#[tokio::test]
async fn a_provider_taken_off_sale_in_the_console_refuses_the_purchase() {
    let server = TestServer::spawn().await;
    add_operators(&server);
    let customer = server.customer("5000");
    let support = Console::sign_in(&server, SUPPORT).await;
    let off = [("kind", "provider"), ("target", "mtn"), ("sale", "off")];
    let (status, body) = support.post("/admin/prices/on-sale", &off).await;
    assert_eq!(status, 403, "{body}");
    let owner = Console::sign_in(&server, OWNER).await;
    assert_eq!(owner.post("/admin/prices/on-sale", &off).await.0, 303);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let reply = server
            .post(&customer.api_key, "/v1/airtime/purchase", airtime(100))
            .await;
        if reply.status == 422 {
            reply.assert_error(422, "invalid_provider");
            break;
        }
        assert!(Instant::now() < deadline, "mtn still on sale");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let log = server.cli(&["operator", "log", "--subject", "mtn"]);
    assert_eq!(log["entries"][0]["before"], "on sale", "{log}");
    assert_eq!(log["entries"][0]["after"], "off sale");
}

#[tokio::test]
async fn support_resends_a_webhook_and_the_receiver_gets_it_again() {
    let server = TestServer::spawn().await;
    add_operators(&server);
    let receiver = Receiver::start().await;
    let customer = server.customer("5000");
    let url = receiver.url("/ok");
    server.cli(&["key", "webhook", &customer.key_id, "--url", &url]);
    let code = server
        .place(&customer.api_key, "/v1/airtime/purchase", airtime(100))
        .await;
    receiver.wait_for(&code, 1).await;
    let support = Console::sign_in(&server, SUPPORT).await;
    let filtered = "/admin/transactions?provider=mtn&supplier=sandbox&recipient=0803123";
    assert!(support.page(filtered).await.contains(&code));
    for other in ["provider=glo", "supplier=vtpass", "recipient=0905"] {
        let page = support.page(&format!("/admin/transactions?{other}")).await;
        assert!(!page.contains(&code), "{other} leaves it out");
    }
    let page = support.page(&format!("/admin/transactions/{code}")).await;
    assert!(page.contains("id=\"resend-webhook\""), "{page}");
    let resend = format!("/admin/transactions/{code}/resend");
    assert_eq!(support.post(&resend, &[]).await.0, 303);
    let both = receiver.wait_for(&code, 2).await;
    assert_eq!(both[0].json(), both[1].json(), "the same event again");
    let (status, _) = support.post("/admin/transactions/NOPE/resend", &[]).await;
    assert_eq!(status, 404);
    let log = server.cli(&["operator", "log", "--subject", &code]);
    assert_eq!(log["entries"][0]["action"], "webhook.resend", "{log}");
    assert_eq!(log["entries"][0]["operator_email"], SUPPORT);
}

/// Multi-threaded: the fake gateway answers while the CLI blocks this thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_an_account_by_key_prefix_and_virtual_account_number() {
    let monnify = FakeMonnify::start().await;
    let env = monnify.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    add_operators(&server);
    let customer = server.customer("0");
    server.customer("0"); // another account, not to be found
    let reserved = server.cli(&[
        "funding",
        "reserve",
        "--account",
        &customer.account_id,
        "--gateway",
        "monnify",
        "--bvn",
        "22212345678",
    ]);
    let number = reserved["accounts"][0]["account_number"]
        .as_str()
        .unwrap_or_else(|| panic!("no account: {reserved}"))
        .to_owned();
    let support = Console::sign_in(&server, SUPPORT).await;
    // The key's display prefix: the secret without its last 58 of 64 random hex digits.
    let key = &customer.api_key;
    let prefix = &key[..key.len() - 58];
    for query in [prefix, number.as_str()] {
        let found = support.page(&format!("/admin/customers?q={query}")).await;
        let rows = found.matches("<a href=\"/admin/customers/").count();
        assert_eq!(rows, 1, "one account for {query}");
        assert!(found.contains(&customer.account_id), "{query}");
    }
    let account = support
        .page(&format!("/admin/customers/{}", customer.account_id))
        .await;
    assert!(account.contains(&number), "the funding account is shown");
}

/// Multi-threaded: the fake VTpass answers while the CLI blocks this thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn support_compares_with_a_suppliers_plans_and_only_an_owner_applies() {
    let fake = FakeVtpass::start().await;
    let server = crate::vtpass::server_with(&fake, &[]).await;
    add_operators(&server);
    let file = server.path().join("small.toml");
    std::fs::write(&file, crate::vtpass::operations::SMALL_CATALOGUE).unwrap();
    server.cli(&["catalogue", "import", file.to_str().unwrap()]);
    let mtn = [
        ("mtn-1gb-vt", "MTN 1GB", "650.00"),
        ("mtn-2gb", "MTN 2GB", "1200.00"),
        ("mtn-5gb", "MTN 5GB", "2500.00"),
    ];
    fake.set_variations("mtn-data", &mtn);
    fake.set_variations("dstv", &[("dstv-padi-vt", "DStv Padi", "4400.00")]);
    let compare = "/admin/prices/sync?supplier=vtpass";
    let support = Console::sign_in(&server, SUPPORT).await;
    let shown = support.page(compare).await;
    for difference in [
        "ours ₦600.00, theirs ₦650.00",
        "mtn-old",
        "MTN 5GB at ₦2,500.00",
    ] {
        assert!(shown.contains(difference), "{difference} in {shown}");
    }
    assert!(
        !shown.contains("id=\"apply-sync\""),
        "support only compares"
    );
    let apply = [("supplier", "vtpass")];
    assert_eq!(support.post("/admin/prices/sync", &apply).await.0, 403);
    let unknown = support.get("/admin/prices/sync?supplier=acme").await;
    assert_eq!(unknown.status(), 400);
    let owner = Console::sign_in(&server, OWNER).await;
    assert!(owner.page(compare).await.contains("id=\"apply-sync\""));
    let (status, applied) = owner.post("/admin/prices/sync", &apply).await;
    assert_eq!(status, 200);
    assert!(applied.contains("id=\"applied\""), "{applied}");
    let exported = server.cli(&["catalogue", "export"])["catalogue"].clone();
    let plans = exported["data_plans"].as_array().unwrap();
    let plan = |id: &str| plans.iter().find(|p| p["plan_id"] == id).unwrap().clone();
    assert_eq!(plan("mtn-1gb")["price"], 650.0);
    assert_eq!(plan("mtn-old")["active"], false);
    let log = server.cli(&["operator", "log", "--subject", "vtpass"]);
    assert_eq!(log["entries"][0]["action"], "catalogue.sync", "{log}");
    assert_eq!(log["entries"][0]["operator_email"], OWNER);
}
