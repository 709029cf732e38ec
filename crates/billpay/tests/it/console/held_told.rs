//! A held purchase is never silent (issue 46, docs/limits.md), through the
//! real binary: the buyer's receipt says "held for review" and until when,
//! the customer is told (the outbox), the owner sees it on the overview and
//! gets an alert; a release tells the customer it goes on; one nobody
//! reviews within `BILLPAY_HELD_REVIEW_SECS` is refunded by the service,
//! once, with its log line.

use super::money::{admin, page};
use super::*;
use crate::dashboard::browser::Browser;
use crate::dashboard::{PASSWORD as SHOP_PASSWORD, account_with_password, html_of, sign_in};
use serde_json::json;
use std::time::{Duration, Instant};

/// The notice kinds (`data-kind`) of the Notifications page at `query`,
/// once `kind` is among them (or 20 s passed).
async fn wait_kind(server: &TestServer, cookie: &str, query: &str, kind: &str) -> String {
    wait_kinds(server, cookie, query, (kind, 1)).await
}

/// As [`wait_kind`], until `count` notices of `kind` are listed: an alert's
/// notices to several operators are queued one after another.
async fn wait_kinds(
    server: &TestServer,
    cookie: &str,
    query: &str,
    (kind, count): (&str, usize),
) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, _, html) = page(server, cookie, &format!("/admin/notifications{query}")).await;
        assert_eq!(status, 200, "{html}");
        let listed = html.matches(&format!("data-kind=\"{kind}\"")).count();
        if listed >= count || Instant::now() > deadline {
            return html;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A server whose operators exist, with an account of ₦10,000 whose second
/// purchase in an hour is held, its API key, and the held purchase (placed
/// after a first that was delivered).
struct Held {
    server: TestServer,
    email: String,
    account: String,
    key: String,
    held: String,
}

/// An airtime purchase of ₦500 with a fresh reference.
fn buy() -> serde_json::Value {
    json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": reference()})
}

/// [`Held`] on a server that refunds a purchase nobody reviews within
/// `review_secs`.
async fn held_purchase(review_secs: &str) -> Held {
    let env = [
        ("BILLPAY_ALERT_INTERVAL_SECS", "1"),
        ("BILLPAY_HELD_REVIEW_SECS", review_secs),
    ];
    let server = TestServer::spawn_with_env(Options::default(), &env).await;
    add_operators(&server);
    let email = format!("held-{}@example.com", rand_suffix());
    let account = account_with_password(&server, &email, "10000");
    let key = server.cli(&["key", "create", "--account", &account])["api_key"]
        .as_str()
        .unwrap()
        .to_owned();
    server.cli(&[
        "limits",
        "set",
        "--account",
        &account,
        "--account-hourly-count",
        "1",
        "--account-hourly-action",
        "hold",
    ]);
    let first = server.place(&key, "/v1/airtime/purchase", buy()).await;
    assert_eq!(
        server.wait_final(&key, &first).await["status"],
        "successful"
    );
    let held = server.place(&key, "/v1/airtime/purchase", buy()).await;
    let shown = server.cli(&["transaction", "show", &held]);
    assert_eq!(shown["transaction"]["held_for"], "account_hourly_count");
    Held {
        server,
        email,
        account,
        key,
        held,
    }
}

/// The review window is an hour here, so the browser's pages (slow on a
/// loaded machine) can never race the service's own refund.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_purchase_tells_buyer_and_owner_and_goes_on_when_released() {
    let Held {
        server,
        email,
        account,
        key,
        held,
    } = held_purchase("3600").await;

    // The buyer's receipt says it is held, what happens next and until when.
    let shop = sign_in(&server, &email, SHOP_PASSWORD).await.unwrap();
    let receipt = html_of(&server, &shop, &format!("/dashboard/receipts/{held}")).await;
    assert!(receipt.contains(">held for review<"), "{receipt}");
    assert!(receipt.contains("Your ₦500.00 is set aside"), "{receipt}");
    assert!(receipt.contains("not reviewed by ") && receipt.contains("WAT"));
    assert!(
        receipt.contains("content=\"60\""),
        "a held receipt refreshes slowly"
    );

    // The owner sees it waiting for them, and is alerted; the customer is told.
    let owner = admin(&server, OWNER).await;
    let (_, _, overview) = page(&server, &owner, "/admin").await;
    assert!(
        overview.contains("id=\"held\"><a href=\"/admin/review\">1<"),
        "{overview}"
    );
    let mine = format!("?account={account}");
    let told = wait_kind(&server, &owner, &mine, "purchase_held").await;
    assert!(told.contains("Purchase held for review"), "{told}");
    let alerts = wait_kinds(&server, &owner, "", ("operator_held", 2)).await;
    assert_eq!(
        alerts.matches("data-kind=\"operator_held\"").count(),
        2,
        "one per operator"
    );
    // Several checks later, still once each.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (_, _, again) = page(&server, &owner, "/admin/notifications").await;
    assert_eq!(again.matches("data-kind=\"operator_held\"").count(), 2);
    let (_, _, customer) = page(&server, &owner, &format!("/admin/notifications{mine}")).await;
    assert_eq!(customer.matches("data-kind=\"purchase_held\"").count(), 1);

    // Both see it in a browser, at a phone's width and a laptop's.
    let browser = Browser::start().await;
    let b = &browser;
    b.client
        .goto(&server.url("/dashboard/login"))
        .await
        .unwrap();
    b.fill("#email", &email).await;
    b.fill("#password", SHOP_PASSWORD).await;
    b.click("#sign-in").await;
    for (width, height, suffix) in [(390, 844, "phone"), (1280, 900, "desktop")] {
        b.client.set_window_size(width, height).await.unwrap();
        let receipt = format!("/dashboard/receipts/{held}");
        b.client.goto(&server.url(&receipt)).await.unwrap();
        assert_eq!(b.text("#receipt-status").await, "held for review");
        assert!(b.text("#receipt-message").await.contains("set aside"));
        b.fits_the_width(&format!("a held receipt at {width} px"))
            .await;
        b.screenshot(&format!("shop-receipt-held-{suffix}")).await;
    }
    super::journey::sign_in(b, &server, OWNER).await;
    for (width, height, suffix) in [(390, 844, "phone"), (1280, 900, "desktop")] {
        b.client.set_window_size(width, height).await.unwrap();
        b.client.goto(&server.url("/admin")).await.unwrap();
        assert_eq!(b.text("#held").await, "1");
        b.fits_the_width(&format!("the overview at {width} px"))
            .await;
        b.screenshot(&format!("console-overview-held-{suffix}"))
            .await;
    }
    browser.stop().await;

    // Released: delivered, and the customer told it goes on.
    server.cli(&[
        "transaction",
        "release",
        &held,
        "--reason",
        "customer called",
    ]);
    assert_eq!(server.wait_final(&key, &held).await["status"], "successful");
    let released = wait_kind(&server, &owner, &mine, "purchase_released").await;
    assert!(
        released.contains("data-kind=\"purchase_released\""),
        "{released}"
    );

    assert_eq!(server.balance(&key).await, 9_000.0, "two delivered");
    server.assert_ledger_consistent(&account);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_purchase_nobody_decides_is_refunded_by_the_service_once() {
    let Held {
        server,
        account,
        key,
        held,
        ..
    } = held_purchase("5").await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let ended = loop {
        let status = server
            .get(
                &key,
                &format!("/v1/transaction/status?reference_code={held}"),
            )
            .await;
        let data = status.assert_ok().clone();
        if data["status"] != "processing" || Instant::now() > deadline {
            break data;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(
        server.balance(&key).await,
        9_500.0,
        "one delivered, one refunded"
    );
    let log = server.cli(&["operator", "log", "--subject", &held]);
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    assert_eq!(entries[0]["actor"], "billpay");
    assert_eq!(entries[0]["action"], "transaction.reject");
    assert_eq!(
        entries[0]["reason"],
        "not reviewed within 5 s of being held"
    );
    let owner = admin(&server, OWNER).await;
    let mine = format!("?account={account}");
    let refunded = wait_kind(&server, &owner, &mine, "purchase_refunded").await;
    assert!(refunded.contains("Purchase failed, refunded"), "{refunded}");
    server.assert_ledger_consistent(&account);
}
