//! Pay now through Paystack Checkout (issue 31), through the real binary and
//! the fake Paystack's `/transaction/initialize`, hosted page, verify and
//! signed `charge.success`: a payment is credited once whichever of the
//! customer's return, the webhook or the reconciler sees it first; a forged
//! webhook changes nothing; the wallet page reserves accounts and never
//! keeps a BVN. Every test ends with `billpay audit` (the kit's `Drop`).

use super::gateways::{Fake, Setup};
use crate::dashboard::browser::Browser;
use crate::dashboard::{PASSWORD, account_with_password, csrf_in, html_of, no_redirects, sign_in};
use serde_json::Value;
use std::time::{Duration, Instant};

const BVN: &str = "22212345678";

/// A signed-in customer of the dashboard.
struct Shopper {
    account_id: String,
    cookie: String,
}

impl Setup {
    fn paystack_fake(&self) -> Fake {
        self.fakes[1].clone()
    }

    async fn shopper(&self, email: &str) -> Shopper {
        let account_id = account_with_password(&self.server, email, "100");
        let cookie = sign_in(&self.server, email, PASSWORD).await.unwrap();
        Shopper { account_id, cookie }
    }

    /// Starts a checkout for `amount` from the wallet page's form: the 303
    /// to Paystack's page, and the reference billpay initialized.
    async fn start_checkout(&self, shopper: &Shopper, amount: &str) -> (String, String) {
        let http = no_redirects();
        let wallet = http
            .get(self.server.url("/dashboard/wallet"))
            .header("Cookie", &shopper.cookie)
            .send()
            .await
            .unwrap();
        let csrf = csrf_in(&wallet.text().await.unwrap());
        let answer = http
            .post(self.server.url("/dashboard/wallet/pay"))
            .header("Cookie", &shopper.cookie)
            .form(&[("amount", amount), ("csrf", &csrf)])
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 303, "{}", answer.text().await.unwrap());
        let to = answer.headers()["location"].to_str().unwrap().to_owned();
        let initialized = self.paystack_fake().paystack().initialized();
        let reference = initialized.last().unwrap()["reference"]
            .as_str()
            .unwrap()
            .to_owned();
        (to, reference)
    }

    /// The customer's return from Paystack's page (`callback_url?trxref&reference`).
    async fn come_back(&self, shopper: &Shopper, reference: &str) -> String {
        let path = format!("/dashboard/wallet/paid?trxref={reference}&reference={reference}");
        let answer = no_redirects()
            .get(self.server.url(&path))
            .header("Cookie", &shopper.cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 303);
        answer.headers()["location"].to_str().unwrap().to_owned()
    }

    async fn checkout_webhook(&self, reference: &str) -> (u16, Value) {
        let fake = self.paystack_fake();
        let signed = fake.paystack().webhook(reference);
        self.post_webhook(&fake, signed).await
    }

    fn balance(&self, shopper: &Shopper) -> f64 {
        let statement = self.server.assert_ledger_consistent(&shopper.account_id);
        statement["balance"].as_f64().unwrap()
    }

    fn fundings(&self, shopper: &Shopper) -> Vec<Value> {
        self.fundings_of(&shopper.account_id)
    }

    fn fundings_of(&self, account_id: &str) -> Vec<Value> {
        let listed = self.cli(&["funding", "list", "--account", account_id]);
        listed["fundings"].as_array().unwrap().clone()
    }
}

/// Who sees a paid checkout first.
#[derive(Debug, Clone, Copy)]
enum Race {
    ReturnFirst,
    WebhookFirst,
    Together,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_return_and_the_webhook_race_and_credit_once_with_the_fee() {
    let setup = Setup::start(&[("BILLPAY_FUNDING_FEE_PERCENT", "1.5")]).await;
    let shopper = setup.shopper("racer@example.com").await;
    let mut expected = 100.0;
    for race in [Race::ReturnFirst, Race::WebhookFirst, Race::Together] {
        let (to, reference) = setup.start_checkout(&shopper, "5,000").await;
        assert!(to.contains("/checkout/"), "{race:?}: sent to {to}");
        let initialized = setup.paystack_fake().paystack().initialized();
        let body = initialized.last().unwrap();
        assert_eq!(
            body["amount"], 500_000,
            "amount in kobo, an integer: {body}"
        );
        assert_eq!(body["currency"], "NGN");
        let callback = body["callback_url"].as_str().unwrap();
        assert!(callback.ends_with("/dashboard/wallet/paid"), "{callback}");

        setup.paystack_fake().paystack().pay(&reference);
        match race {
            Race::ReturnFirst => {
                setup.come_back(&shopper, &reference).await;
                let (status, answer) = setup.checkout_webhook(&reference).await;
                assert_eq!(
                    (status, &answer["data"]["outcome"]),
                    (200, &"credited".into())
                );
            }
            Race::WebhookFirst => {
                let (status, answer) = setup.checkout_webhook(&reference).await;
                assert_eq!(status, 200, "{answer}");
                setup.come_back(&shopper, &reference).await;
            }
            Race::Together => {
                let fake = setup.paystack_fake();
                let webhooks = setup.post_at_once(&fake, fake.paystack().webhook(&reference), 4);
                let returns = async {
                    for _ in 0..4 {
                        setup.come_back(&shopper, &reference).await;
                    }
                };
                let (answers, ()) = tokio::join!(webhooks, returns);
                assert!(
                    answers.iter().all(|(status, _)| *status == 200),
                    "{answers:?}"
                );
            }
        }
        // ₦5,000 less 1.5 % (₦75), once.
        expected += 4_925.0;
        assert_eq!(setup.balance(&shopper), expected, "{race:?}");
        let fundings = setup.fundings(&shopper);
        let this: Vec<&Value> = fundings
            .iter()
            .filter(|f| f["gateway_reference"] == reference.as_str())
            .collect();
        assert_eq!(this.len(), 1, "{race:?}: {fundings:?}");
        assert_eq!(this[0]["status"], "credited");
        assert_eq!(this[0]["fee"], 75.0, "{:?}", this[0]);
    }
    let statement = setup.server.assert_ledger_consistent(&shopper.account_id);
    let entries = statement["entries"].as_array().unwrap();
    let fees = entries.iter().filter(|e| e["kind"] == "fee").count();
    assert_eq!(fees, 3, "one fee entry per payment: {statement}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_tab_is_credited_by_the_webhook_or_the_reconciler_and_a_surcharge_is_added() {
    let setup = Setup::start(&[
        ("BILLPAY_FUNDING_FEE_FLAT", "50"),
        ("BILLPAY_FUNDING_FEE_AS_SURCHARGE", "true"),
    ])
    .await;
    let shopper = setup.shopper("tab@example.com").await;

    // Paid, tab closed: only the webhook comes.
    let (_, reference) = setup.start_checkout(&shopper, "2000").await;
    let initialized = setup.paystack_fake().paystack().initialized();
    assert_eq!(
        initialized.last().unwrap()["amount"],
        205_000,
        "the ₦50 fee is added to what is paid"
    );
    setup.paystack_fake().paystack().pay(&reference);
    let (status, answer) = setup.checkout_webhook(&reference).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["outcome"], "credited");
    assert_eq!(
        setup.balance(&shopper),
        2_100.0,
        "₦2,000 credited, as asked"
    );

    // Paid, tab closed, and the webhook never arrives: the reconciler.
    let (_, lost) = setup.start_checkout(&shopper, "1000").await;
    let reconciled = setup.cli(&["funding", "reconcile", "--since-hours", "1"]);
    assert_eq!(
        setup.balance(&shopper),
        2_100.0,
        "not paid yet: {reconciled}"
    );
    setup.paystack_fake().paystack().pay(&lost);
    let reconciled = setup.cli(&["funding", "reconcile", "--since-hours", "1"]);
    assert_eq!(setup.balance(&shopper), 3_100.0, "{reconciled}");
    let again = setup.cli(&["funding", "reconcile", "--since-hours", "1"]);
    assert_eq!(setup.balance(&shopper), 3_100.0, "{again}");
    let back = setup.come_back(&shopper, &lost).await;
    assert!(back.starts_with("/dashboard/wallet?paid="), "{back}");
    assert_eq!(
        setup.balance(&shopper),
        3_100.0,
        "the late return credits nothing more"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_or_unpaid_checkout_webhook_changes_nothing() {
    let setup = Setup::start(&[]).await;
    let shopper = setup.shopper("forger@example.com").await;
    let (_, reference) = setup.start_checkout(&shopper, "3000").await;
    let fake = setup.paystack_fake();

    let (status, _) = setup
        .post_webhook(&fake, fake.paystack().forged_webhook(&reference))
        .await;
    assert_eq!(status, 401);
    // Signed, but Paystack's verify says it was never paid.
    let (status, answer) = setup.checkout_webhook(&reference).await;
    assert_eq!(
        (status, &answer["data"]["outcome"]),
        (200, &"rejected".into())
    );
    setup.come_back(&shopper, &reference).await;
    assert_eq!(setup.balance(&shopper), 100.0);
    assert!(setup.fundings(&shopper).is_empty());

    // Another customer's return for this checkout finds nothing.
    let other = setup.shopper("other@example.com").await;
    let path = format!("/dashboard/wallet/paid?reference={reference}");
    let answer = no_redirects()
        .get(setup.server.url(&path))
        .header("Cookie", &other.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);

    // An amount that is not one is refused and initializes nothing.
    let before = fake.paystack().initialized().len();
    let http = no_redirects();
    let wallet = http
        .get(setup.server.url("/dashboard/wallet"))
        .header("Cookie", &shopper.cookie)
        .send()
        .await
        .unwrap();
    let csrf = csrf_in(&wallet.text().await.unwrap());
    for amount in ["5,00", "abc", "50", "2000000"] {
        let answer = http
            .post(setup.server.url("/dashboard/wallet/pay"))
            .header("Cookie", &shopper.cookie)
            .form(&[("amount", amount), ("csrf", &csrf)])
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 422, "{amount}");
        let page = answer.text().await.unwrap();
        assert!(page.contains("id=\"pay-error\""), "{amount}: {page}");
    }
    assert_eq!(fake.paystack().initialized().len(), before);
}

/// The reserved accounts the wallet page shows.
async fn account_rows(b: &Browser) -> usize {
    let found = b
        .client
        .find_all(fantoccini::Locator::Css("#funding-accounts tbody tr"));
    found.await.unwrap().len()
}

/// Waits until `check` holds (a webhook in flight), at most 10 s.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_customer_reserves_accounts_and_pays_by_card_in_a_browser() {
    let setup = Setup::start(&[("BILLPAY_FUNDING_FEE_PERCENT", "1.5")]).await;
    let fake = setup.paystack_fake();
    fake.paystack()
        .send_webhooks_to(&setup.server.url("/callbacks/paystack"));
    let email = "ada@example.com";
    let account_id = account_with_password(&setup.server, email, "100");
    let browser = Browser::start().await;
    let b = &browser;
    b.client.set_window_size(390, 844).await.unwrap();
    b.client
        .goto(&setup.server.url("/dashboard/login"))
        .await
        .unwrap();
    b.fill("#email", email).await;
    b.fill("#password", PASSWORD).await;
    b.click("#sign-in").await;

    // First visit: Paystack's account is reserved at once; Monnify asks for a BVN or NIN.
    b.client
        .goto(&setup.server.url("/dashboard/wallet"))
        .await
        .unwrap();
    let accounts = b.text("#funding-accounts").await;
    assert!(accounts.contains("Test Bank"), "{accounts}");
    let paystack_rows = account_rows(b).await;
    b.css("#reserve-monnify").await;
    b.screenshot("wallet-funding-phone").await;
    b.fits_the_width("the wallet page").await;
    b.fill("#identity-monnify", BVN).await;
    b.click("#reserve-monnify button").await;
    assert!(
        account_rows(b).await > paystack_rows,
        "Monnify's accounts are shown"
    );
    assert!(
        b.client
            .find(fantoccini::Locator::Css("#reserve-monnify"))
            .await
            .is_err(),
        "reserved: the form is gone"
    );

    // Pay ₦5,000 by card on the hosted page; come back credited (the
    // return and the webhook race).
    b.fill("#pay-amount", "5000").await;
    b.click("#pay-button").await;
    assert!(
        b.path().await.starts_with("/checkout/"),
        "on Paystack's page"
    );
    assert_eq!(b.text("#amount").await, "5000.00");
    b.click("#pay-card").await;
    assert_eq!(b.path().await, "/dashboard/wallet");
    let notice = b.css("#paid-notice").await;
    assert_eq!(
        notice.attr("data-status").await.unwrap().as_deref(),
        Some("credited")
    );
    let words = notice.text().await.unwrap();
    assert!(words.contains("₦4,925.00 added"), "{words}");
    b.screenshot("wallet-paid-phone").await;
    b.fits_the_width("the wallet page after paying").await;
    b.client.set_window_size(1280, 900).await.unwrap();
    b.screenshot("wallet-paid").await;

    let fundings = setup.cli(&["funding", "list", "--account", &account_id]);
    let count = || fundings["fundings"].as_array().unwrap().len();
    assert_eq!(count(), 1, "{fundings}");
    // The webhook lands too (its own task): still one credit.
    let server = &setup.server;
    eventually("the webhook reached billpay", || {
        !fake.paystack().delivered().is_empty()
    })
    .await;
    assert_eq!(fake.paystack().delivered(), [200]);
    assert_eq!(setup.fundings_of(&account_id).len(), 1);
    let statement = server.assert_ledger_consistent(&account_id);
    assert_eq!(statement["balance"], 5_025.0, "{statement}");

    // The BVN went to Monnify, and nowhere else: not the database, not the log.
    let contents = server.database_contents().await;
    let stored = String::from_utf8_lossy(&contents);
    assert!(!stored.contains(BVN), "the BVN is stored in clear");
    assert!(stored.contains("5678"), "its last 4 digits are kept");
    let logs = String::from_utf8_lossy(&server.logs()).into_owned();
    assert!(!logs.contains(BVN), "the BVN is in the server log");
    browser.stop().await;
}

/// The wallet page's status of each of the customer's checkouts.
async fn checkout_status(setup: &Setup, shopper: &Shopper, reference: &str) -> String {
    let html = html_of(&setup.server, &shopper.cookie, "/dashboard/wallet").await;
    let marker = format!("data-reference=\"{reference}\" data-status=\"");
    let at = html
        .find(&marker)
        .unwrap_or_else(|| panic!("{reference} not listed"))
        + marker.len();
    html[at..at + html[at..].find('"').unwrap()].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkout_unpaid_a_day_on_is_abandoned_and_a_late_payment_still_credits() {
    let setup = Setup::start(&[]).await;
    let shopper = setup.shopper("late@example.com").await;
    let (_, stale) = setup.start_checkout(&shopper, "1000").await;
    let (_, fresh) = setup.start_checkout(&shopper, "2000").await;
    // `stale` was opened two days ago; and one Paystack never heard of
    let unknown = "BPC-00000000000000000000";
    let aged = format!(
        "UPDATE checkouts SET created_at = '2020-01-01T00:00:00.000+00:00' WHERE reference = '{stale}';
         INSERT INTO checkouts (reference, account_id, gateway, amount, fee, status, created_at, updated_at)
         VALUES ('{unknown}', '{}', 'paystack', 100000, 0, 'open',
                 '2020-01-01T00:00:00.000+00:00', '2020-01-01T00:00:00.000+00:00');",
        shopper.account_id
    );
    setup.server.raw_sql(&aged, &aged).await;

    let reconciled = setup.cli(&["funding", "reconcile", "--since-hours", "1"]);
    for reference in [stale.as_str(), unknown] {
        assert_eq!(
            checkout_status(&setup, &shopper, reference).await,
            "abandoned",
            "{reference}: {reconciled}"
        );
    }
    assert_eq!(checkout_status(&setup, &shopper, &fresh).await, "open");
    assert_eq!(setup.balance(&shopper), 100.0, "nothing credited");

    // paid after all (the webhook comes): credited once, the checkout too
    setup.paystack_fake().paystack().pay(&stale);
    let (status, answer) = setup.checkout_webhook(&stale).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["outcome"], "credited");
    assert_eq!(setup.balance(&shopper), 1_100.0);
    assert_eq!(checkout_status(&setup, &shopper, &stale).await, "credited");
    setup.cli(&["funding", "reconcile", "--since-hours", "1"]);
    assert_eq!(setup.balance(&shopper), 1_100.0, "credited once");
}

/// Issue 46, item 4: money in is named by its channel — a payment on the
/// hosted checkout is a card payment in the buyer's statement and the sales
/// report, a transfer to the reserved account a bank transfer — and the
/// card's payer is the one the gateway gave.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_payment_is_named_card_and_a_transfer_a_bank_transfer() {
    let setup = Setup::start(&[]).await;
    let shopper = setup.shopper("channels@example.com").await;
    let fake = setup.paystack_fake();
    let reserved = setup.reserve(&fake, &shopper.account_id);
    let number = reserved["accounts"][0]["account_number"]
        .as_str()
        .unwrap_or_else(|| panic!("no account: {reserved}"))
        .to_owned();
    let transfer = fake.transfer(None, Some(&number), 1_000.0);
    let (status, answer) = setup.post_webhook(&fake, fake.webhook(&transfer)).await;
    assert_eq!(status, 200, "{answer}");
    let (_, card) = setup.start_checkout(&shopper, "2000").await;
    fake.paystack().pay(&card);
    setup.come_back(&shopper, &card).await;
    assert_eq!(setup.balance(&shopper), 3_100.0);

    let wallet = html_of(&setup.server, &shopper.cookie, "/dashboard/wallet").await;
    assert_eq!(
        wallet.matches("Card payment (Paystack)").count(),
        1,
        "{wallet}"
    );
    assert_eq!(
        wallet.matches("Bank transfer (Paystack)").count(),
        1,
        "{wallet}"
    );
    let csv = html_of(&setup.server, &shopper.cookie, "/dashboard/wallet.csv").await;
    assert!(csv.contains("Card payment (Paystack)"), "{csv}");

    let report = setup.cli(&["report", "sales"]);
    assert_eq!(report["funding_received"], 3_000.0, "{report}");
    assert_eq!(report["funding_by_card"], 2_000.0, "{report}");

    let fundings = setup.fundings(&shopper);
    let paid = fundings
        .iter()
        .find(|f| f["gateway_reference"] == card.as_str())
        .unwrap();
    let payer = paid["payer"].as_str().unwrap_or_default();
    assert!(payer.contains("card ending 4081"), "{paid}");
}
