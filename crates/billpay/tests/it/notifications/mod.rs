//! Customer notices through the real binary, read where it sends them: the
//! mail folder (the `MailDir` email channel, `BILLPAY_MAIL_DIR`). Each is
//! sent once per cause, with what it must say; none for a change that was
//! refused or rolled back; a send the channel did not take is retried with
//! the same message id; and a `kill -9` between cause and send loses none.

mod guarded;

use crate::funding::gateways::Setup;
use crate::support::*;
use billpay_domain::Kobo;
use billpay_webkit::format::naira;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// One email the server wrote: its file's name (the notice id) and its text.
#[derive(Debug, Clone)]
struct Email {
    file: String,
    text: String,
}

impl Email {
    fn header(&self, name: &str) -> &str {
        let prefix = format!("{name}: ");
        self.text
            .lines()
            .find_map(|line| line.strip_prefix(prefix.as_str()))
            .unwrap_or("")
    }
}

/// The emails in `dir` whose subject contains `subject`.
fn emails(dir: &Path, subject: &str) -> Vec<Email> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Email> = entries
        .map(|entry| entry.unwrap().path())
        .map(|path| Email {
            file: path.file_stem().unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(&path).unwrap(),
        })
        .filter(|email| email.header("Subject").contains(subject))
        .collect();
    found.sort_by(|a, b| a.file.cmp(&b.file));
    found
}

/// Waits until `count` emails with `subject` are in `dir` (failing after
/// `limit`), then a moment more, so one more would be seen.
async fn wait_emails(dir: &Path, subject: &str, count: usize, limit: Duration) -> Vec<Email> {
    let deadline = Instant::now() + limit;
    while emails(dir, subject).len() < count {
        assert!(
            Instant::now() < deadline,
            "{count} emails {subject:?} never came: {:?}",
            emails(dir, "")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    emails(dir, subject)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_is_told_once_however_often_its_webhook_comes_and_a_forged_one_never() {
    let setup = Setup::start(&[
        ("BILLPAY_BUSINESS_NAME", "Ada Data"),
        ("BILLPAY_SUPPORT_CONTACT", "help@ada.example"),
    ])
    .await;
    let mail = setup.server.mail_dir();
    let fake = &setup.fakes[0];
    let (customer, number) = setup.customer_with_account(fake).await;
    let forged = fake.transfer(Some(&customer.account_id), Some(&number), 9_000.0);
    let (body, _) = fake.webhook(&forged);
    let (status, _) = setup.post_raw(fake, body, Some("not-the-signature")).await;
    assert_ne!(status, 200, "a forged webhook is refused");
    let reference = fake.transfer(Some(&customer.account_id), Some(&number), 5_000.0);
    for _ in 0..3 {
        let (status, body) = setup.post_webhook(fake, fake.webhook(&reference)).await;
        assert_eq!(status, 200, "{body}");
    }
    let told = wait_emails(
        &mail,
        "added to your Ada Data wallet",
        1,
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(told.len(), 1, "{told:?}");
    let text = &told[0].text;
    let balance = setup.server.balance(&customer.api_key).await;
    assert!(text.contains("bank transfer of ₦5,000.00"), "{text}");
    let balance = naira(Kobo((balance * 100.0).round() as i64));
    assert!(
        text.contains(&format!("Your balance is now {balance}")),
        "{text}"
    );
    assert!(text.contains("Hello Test Co"), "{text}");
    assert!(text.contains("help@ada.example"), "{text}");
    assert!(
        !text.contains("9,000"),
        "the forged payment is never told: {text}"
    );
    assert!(text.contains("-- HTML --"), "an HTML part too: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_purchase_is_told_with_its_refund_a_token_with_its_receipt_a_refused_one_never() {
    let server = TestServer::spawn().await;
    let mail = server.mail_dir();
    let c = server.customer("3000");
    let body = json!({"provider_id": "mtn", "phone": "08030000000", "amount": 100, "reference": reference()});
    let failed = server.place(&c.api_key, "/v1/airtime/purchase", body).await;
    let token = electricity(&reference(), "45012345678", 1500.0);
    let delivered = server
        .place(&c.api_key, "/v1/electricity/purchase", token)
        .await;
    server.wait_final(&c.api_key, &failed).await;
    let receipt = server.wait_final(&c.api_key, &delivered).await;
    // more than the balance: refused, nothing changes, nothing is told
    let too_much = json!({"provider_id": "mtn", "phone": "08030000000", "amount": 50000, "reference": reference()});
    let refused = server
        .post(&c.api_key, "/v1/airtime/purchase", too_much)
        .await;
    assert!(refused.status >= 400, "{}", refused.body);

    let refunds = wait_emails(&mail, "Purchase failed", 1, Duration::from_secs(20)).await;
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert!(refunds[0].text.contains(&failed), "{}", refunds[0].text);
    assert!(
        refunds[0].text.contains("₦100.00 is back in your wallet"),
        "{}",
        refunds[0].text
    );
    let receipts = wait_emails(&mail, "Your receipt", 1, Duration::from_secs(20)).await;
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    let token = receipt["pin"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {receipt}"));
    assert!(receipts[0].text.contains(token), "{}", receipts[0].text);
    assert!(
        receipts[0].text.contains(&delivered),
        "{}",
        receipts[0].text
    );
    // the key the customer was given is a security notice
    assert_eq!(emails(&mail, "new billpay API key").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_the_channel_did_not_take_is_retried_with_the_same_id() {
    let dir = tempfile::tempdir().unwrap();
    // the mail folder cannot be made while a file stands where its parent goes
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "not a folder").unwrap();
    let mail = blocked.join("mail");
    let mail_env = mail.display().to_string();
    let env = [
        ("BILLPAY_MAIL_DIR", mail_env.as_str()),
        ("BILLPAY_NOTICE_RETRY_BASE_MS", "300"),
    ];
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    server.customer("0");
    let deadline = Instant::now() + Duration::from_secs(20);
    while notices_counted(&server, "retrying").await < 1.0 {
        assert!(Instant::now() < deadline, "the failed send was not retried");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    std::fs::remove_file(&blocked).unwrap();
    let sent = wait_emails(&mail, "new billpay API key", 1, Duration::from_secs(30)).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    let id = &sent[0].file;
    assert!(id.starts_with("NT"), "named by the notice's id: {id}");
    assert_eq!(sent[0].header("Message-ID"), format!("<{id}@billpay>"));
    assert_eq!(notices_counted(&server, "sent").await, 1.0);
}

/// `billpay_notices_total{outcome=…}` summed over channels and providers.
async fn notices_counted(server: &TestServer, outcome: &str) -> f64 {
    server
        .metric_sum("billpay_notices_total", "outcome", outcome)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_between_cause_and_send_loses_no_notice_and_doubles_none() {
    let env = [("BILLPAY_NOTICE_LEASE_SECS", "2")];
    let options = Options {
        latency_ms: 100,
        ..Options::default()
    };
    let mut server = TestServer::spawn_with_env(options, &env).await;
    let mail = server.mail_dir();
    let c = server.customer("100000");
    let mut failed = Vec::new();
    for round in 0..3u64 {
        for _ in 0..4 {
            let body = json!({"provider_id": "mtn", "phone": "08030000000", "amount": 100, "reference": reference()});
            failed.push(server.place(&c.api_key, "/v1/airtime/purchase", body).await);
        }
        tokio::time::sleep(Duration::from_millis(50 + 120 * round)).await;
        server.kill();
        server.start();
    }
    for code in &failed {
        server.wait_final(&c.api_key, code).await;
    }
    let refunds = wait_emails(
        &mail,
        "Purchase failed",
        failed.len(),
        Duration::from_secs(40),
    )
    .await;
    assert_eq!(refunds.len(), failed.len(), "{refunds:?}");
    for code in &failed {
        let told = refunds
            .iter()
            .filter(|e| e.text.contains(code.as_str()))
            .count();
        assert_eq!(told, 1, "{code} told {told} times");
    }
}

#[tokio::test]
async fn a_customer_chooses_their_notices_in_a_browser_at_phone_width() {
    use crate::dashboard::browser::Browser;
    use crate::dashboard::{PASSWORD, account_with_password};
    // SMS is offered only by a server that sends it
    let termii = crate::support::termii::FakeTermii::start().await;
    let env = termii.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    let mail = server.mail_dir();
    let account = account_with_password(&server, "notes@example.com", "1000");
    let browser = Browser::start().await;
    let b = &browser;
    b.client.set_window_size(390, 844).await.unwrap();
    b.client
        .goto(&server.url("/dashboard/login"))
        .await
        .unwrap();
    b.fill("#email", "notes@example.com").await;
    b.fill("#password", PASSWORD).await;
    b.click("#sign-in").await;
    b.client
        .goto(&server.url("/dashboard/notifications"))
        .await
        .unwrap();
    b.fits_the_width("the notifications page").await;
    let checked = |id: &'static str| async move {
        b.css(id).await.prop("checked").await.unwrap().as_deref() == Some("true")
    };
    assert!(checked("#security_email").await, "email is on by default");
    assert!(!checked("#security_sms").await, "SMS is off by default");

    // SMS without a proven phone is refused, and nothing is saved
    b.css("#refund_sms").await.click().await.unwrap();
    b.click("#save-notifications").await;
    assert!(b.text("#notifications-error").await.contains("phone"));
    // the phone is proven by the code sent to it
    b.fill("#phone", "0803 123 4567").await;
    b.click("#send-phone-code").await;
    assert!(b.text("#phone-notice").await.contains("code"));
    let code =
        crate::dashboard::sign_up::last_notice(&server, "2348031234567", "phone_verification")
            .await["code"]
            .as_str()
            .unwrap()
            .to_owned();
    b.fill("#phone-code", &code).await;
    b.click("#prove-phone").await;
    assert!(b.text("#phone-notice").await.contains("proven"));
    b.css("#refund_sms").await.click().await.unwrap();
    b.css("#funding_email").await.click().await.unwrap();
    b.click("#save-notifications").await;
    assert!(b.text("#notifications-saved").await.contains("saved"));
    b.client
        .goto(&server.url("/dashboard/notifications"))
        .await
        .unwrap();
    let phone = b.css("#phone").await.prop("value").await.unwrap();
    assert_eq!(phone.as_deref(), Some("08031234567"));
    assert!(checked("#refund_sms").await);
    assert!(!checked("#funding_email").await);
    assert!(checked("#security_email").await, "always on");
    b.screenshot("notifications").await;

    // security notices by email cannot be turned off: a new key is emailed
    server.cli(&["key", "create", "--account", &account]);
    wait_emails(&mail, "API key", 1, Duration::from_secs(20)).await;
    browser.stop().await;
}

/// Proves `phone` (`0803…`) for the signed-in `session` by the code sent to it.
async fn prove_phone(server: &TestServer, session: &(String, String), phone: &str) {
    use crate::dashboard::sign_up::last_notice;
    let post = |path: &'static str, field: (&'static str, String)| {
        let form = [(field.0, field.1), ("csrf", session.1.clone())];
        crate::dashboard::no_redirects()
            .post(server.url(path))
            .header("Cookie", &session.0)
            .form(&form)
            .send()
    };
    let sent = post(
        "/dashboard/notifications/phone",
        ("phone", phone.to_owned()),
    )
    .await
    .unwrap();
    assert_eq!(sent.status(), 303, "{}", sent.text().await.unwrap());
    let international = format!("234{}", phone.trim_start_matches('0'));
    let code = last_notice(server, &international, "phone_verification").await["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let proven = post("/dashboard/notifications/phone/code", ("code", code))
        .await
        .unwrap();
    assert_eq!(proven.status(), 303, "{}", proven.text().await.unwrap());
}

/// The dashboard's form, signed in as `email`: (session cookie, CSRF proof).
async fn notifications_form(server: &TestServer, email: &str) -> (String, String) {
    use crate::dashboard::{PASSWORD, csrf_in, html_of, sign_in};
    let cookie = sign_in(server, email, PASSWORD).await.unwrap();
    let page = html_of(server, &cookie, "/dashboard/notifications").await;
    let csrf = csrf_in(&page);
    (cookie, csrf)
}

async fn save_notifications(
    server: &TestServer,
    session: &(String, String),
    form: &[(&str, &str)],
) {
    let mut form = form.to_vec();
    form.push(("csrf", session.1.as_str()));
    let saved = crate::dashboard::no_redirects()
        .post(server.url("/dashboard/notifications"))
        .header("Cookie", &session.0)
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 303, "{}", saved.text().await.unwrap());
}

/// A server without an SMS channel does not offer SMS (the page says so,
/// and a save turns SMS off, keeping the phone), and a notice queued for
/// SMS there (chosen while SMS was configured) is not claimed and failed:
/// it waits, queued, and is sent once a server with SMS runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_sms_offers_none_and_leaves_sms_notices_queued() {
    use crate::dashboard::{account_with_password, html_of};
    let termii = crate::support::termii::FakeTermii::start().await;
    let with_sms = termii.env();
    let with_sms: Vec<(&str, &str)> = with_sms.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut server = TestServer::spawn_with_env(Options::default(), &with_sms).await;
    let mail = server.mail_dir();
    let email = format!("sms-{}@example.com", rand_suffix());
    let account = account_with_password(&server, &email, "1000");
    // with SMS: security notices by email and SMS
    let session = notifications_form(&server, &email).await;
    let page = html_of(&server, &session.0, "/dashboard/notifications").await;
    assert!(page.contains("id=\"security_sms\"") && !page.contains("id=\"no-sms\""));
    prove_phone(&server, &session, "08031234567").await;
    termii.wait_for(1, Duration::from_secs(20)).await; // the code
    let form = [("security_email", "on"), ("security_sms", "on")];
    save_notifications(&server, &session, &form).await;

    // the same database, SMS no longer configured
    server.kill();
    server.set_env(&[]);
    server.start();
    let session = notifications_form(&server, &email).await;
    let page = html_of(&server, &session.0, "/dashboard/notifications").await;
    assert!(
        page.contains("id=\"no-sms\""),
        "the page says SMS is not available"
    );
    assert!(!page.contains("_sms\""), "no SMS box");
    assert!(!page.contains("id=\"phone\""), "no phone to give");

    // a cause: the email is sent, the SMS waits (never claimed here)
    server.cli(&["key", "create", "--account", &account]);
    wait_emails(&mail, "API key", 1, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        termii.requests().len(),
        1,
        "no SMS channel here (the code only)"
    );

    // a save here turns SMS off (a box sent by hand too) and keeps the phone
    let form = [("security_email", "on"), ("security_sms", "on")];
    save_notifications(&server, &session, &form).await;

    // SMS configured again: the queued SMS is sent, once; the choice is off now
    server.kill();
    server.set_env(&with_sms);
    server.start();
    let sent = termii.wait_for(2, Duration::from_secs(20)).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[1]["to"], "2348031234567");
    let session = notifications_form(&server, &email).await;
    let page = html_of(&server, &session.0, "/dashboard/notifications").await;
    assert!(page.contains("value=\"08031234567\""), "the phone was kept");
    assert!(!page.contains("id=\"security_sms\" aria-label=\"Security by SMS\" checked"));
    server.cli(&["key", "create", "--account", &account]);
    wait_emails(&mail, "API key", 2, Duration::from_secs(20)).await;
    assert_eq!(termii.requests().len(), 2, "SMS was turned off by the save");
}

/// Sets the customer's low-balance mark on the dashboard's Notifications
/// page, low-balance notices by email (the other topics off).
async fn set_low_balance_mark(server: &TestServer, email: &str, naira: &str) {
    use crate::dashboard::{PASSWORD, csrf_in, no_redirects, sign_in};
    let cookie = sign_in(server, email, PASSWORD).await.unwrap();
    let http = no_redirects();
    let page = http
        .get(server.url("/dashboard/notifications"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap();
    let csrf = csrf_in(&page.text().await.unwrap());
    let form = [
        ("csrf", csrf.as_str()),
        ("low_balance_below", naira),
        ("low_balance_email", "on"),
    ];
    let saved = http
        .post(server.url("/dashboard/notifications"))
        .header("Cookie", &cookie)
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 303, "{}", saved.text().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_balance_is_told_once_each_time_it_falls_under_the_mark() {
    let env = [
        ("BILLPAY_ALERT_INTERVAL_SECS", "1"),
        ("BILLPAY_BUSINESS_NAME", "Ada Data"),
        ("BILLPAY_SUPPORT_CONTACT", "help@ada.example"),
    ];
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    let mail = server.mail_dir();
    let email = format!("low-{}@example.com", rand_suffix());
    let account = crate::dashboard::account_with_password(&server, &email, "1000");
    let key = server.cli(&["key", "create", "--account", &account]);
    let api_key = key["api_key"].as_str().unwrap().to_owned();
    set_low_balance_mark(&server, &email, "500").await;
    let buy = |naira: u32| json!({"provider_id": "mtn", "phone": "08031234567", "amount": naira, "reference": reference()});

    // ₦1,000 → ₦400: under ₦500, told once
    let code = server
        .place(&api_key, "/v1/airtime/purchase", buy(600))
        .await;
    server.wait_final(&api_key, &code).await;
    let told = wait_emails(&mail, "balance is low", 1, Duration::from_secs(20)).await;
    assert_eq!(told.len(), 1, "{told:?}");
    let text = &told[0].text;
    assert!(
        text.contains("Your wallet balance is ₦400.00, under the ₦500.00"),
        "{text}"
    );
    assert!(
        text.contains("Ada Data") && text.contains("help@ada.example"),
        "{text}"
    );
    // ₦400 → ₦300: still under, nothing more (passes run every second)
    let code = server
        .place(&api_key, "/v1/airtime/purchase", buy(100))
        .await;
    server.wait_final(&api_key, &code).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(emails(&mail, "balance is low").len(), 1);

    // back above the mark, then under it again: told a second time
    server.cli(&[
        "wallet",
        "credit",
        "--account",
        &account,
        "--amount",
        "700",
        "--reference",
        &format!("top-up-{}", rand_suffix()),
    ]);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        emails(&mail, "balance is low").len(),
        1,
        "₦1,000 is not low"
    );
    let code = server
        .place(&api_key, "/v1/airtime/purchase", buy(800))
        .await;
    server.wait_final(&api_key, &code).await;
    let told = wait_emails(&mail, "balance is low", 2, Duration::from_secs(20)).await;
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(
        told.iter().any(|e| e.text.contains("balance is ₦200.00")),
        "{told:?}"
    );
    server.assert_ledger_consistent(&account);
}
