//! An owner's and a support operator's day in a real headless Chromium:
//! sign in, find a customer, credit with a reason, resolve a needs-review
//! purchase (refunded once), see each in the operator log; support is
//! refused an owner-only action. Screenshots of each page (docs/screenshots
//! with BILLPAY_UPDATE_SCREENSHOTS=1; the overview's is taken by
//! `journey_money.rs`, where it has sales and funding to show).

use super::*;
use crate::dashboard::browser::Browser;
use serde_json::json;

pub async fn sign_in(b: &Browser, server: &TestServer, email: &str) {
    b.client.goto(&server.url("/admin")).await.unwrap();
    assert_eq!(b.path().await, "/admin/login");
    b.fill("#email", email).await;
    b.fill("#password", PASSWORD).await;
    b.click("#sign-in").await;
    assert_eq!(b.path().await, "/admin");
}

/// Confirm dialogs (`data-confirm`) answer yes.
pub async fn accept_confirms(b: &Browser) {
    b.client
        .execute("window.confirm = () => true", vec![])
        .await
        .unwrap();
}

#[tokio::test]
async fn an_owner_and_a_support_operator_run_the_day_in_a_browser() {
    let server = server_with_operators().await;
    let customer = server.customer("5000");
    let reference = reference();
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 1000, "reference": reference});
    let code = server
        .place(&customer.api_key, "/v1/airtime/purchase", body)
        .await;
    let browser = Browser::start().await;
    let b = &browser;

    // a wrong password is refused; the owner signs in to the overview
    b.client.goto(&server.url("/admin")).await.unwrap();
    b.fill("#email", OWNER).await;
    b.fill("#password", "wrong password").await;
    b.click("#sign-in").await;
    assert!(
        b.text(".error")
            .await
            .contains("Wrong email, password or code")
    );
    b.screenshot("console-sign-in").await;
    sign_in(b, &server, OWNER).await;
    assert_eq!(b.text("#backlog").await, "1");
    assert_eq!(b.text("#needs-review").await, "1");

    // find the customer by email, credit the wallet with a reason
    b.client
        .goto(&server.url("/admin/customers"))
        .await
        .unwrap();
    b.fill("#q", &customer.account_id).await;
    b.click("#search").await;
    b.screenshot("console-customers").await;
    b.click("#customers tbody tr a").await;
    assert_eq!(b.text("#account-id").await, customer.account_id);
    assert_eq!(b.text("#balance").await, "₦4,000.00");
    b.fill("#credit input[name=amount]", "2500").await;
    b.fill("#credit input[name=reference]", "bank-0001").await;
    b.fill("#credit input[name=reason]", "GTBank transfer 24 Nov")
        .await;
    b.click("#credit button").await;
    assert!(
        b.text("#done").await.contains("wallet credited"),
        "{}",
        b.text("#done").await
    );
    assert_eq!(b.text("#balance").await, "₦6,500.00");
    assert!(
        b.text("#account-log")
            .await
            .contains("GTBank transfer 24 Nov")
    );
    b.screenshot("console-customer").await;

    // the needs-review queue: mark the purchase failed, refunded once
    b.client.goto(&server.url("/admin/review")).await.unwrap();
    b.screenshot("console-review").await;
    b.click(&format!("#transactions tr[data-code='{code}'] a"))
        .await;
    assert_eq!(b.text("#tx-status").await, "processing");
    accept_confirms(b).await;
    b.fill("#resolve-reason", "MTN confirmed no delivery").await;
    b.click("#mark-failed").await;
    assert_eq!(b.text("#tx-status").await, "failed");
    assert!(b.text("#ledger").await.contains("refund"));
    b.screenshot("console-transaction").await;
    assert_eq!(
        server.balance(&customer.api_key).await,
        7500.0,
        "refunded once"
    );

    // the operator log shows both, with who and why
    b.client.goto(&server.url("/admin/log")).await.unwrap();
    let log = b.text("#log").await;
    assert!(
        log.contains("wallet.credit") && log.contains("GTBank transfer 24 Nov"),
        "{log}"
    );
    assert!(
        log.contains("transaction.resolve") && log.contains("MTN confirmed no delivery"),
        "{log}"
    );
    assert!(log.contains(OWNER), "{log}");
    b.screenshot("console-log").await;
    b.client
        .goto(&server.url("/admin/transactions"))
        .await
        .unwrap();
    b.screenshot("console-transactions").await;
    b.client
        .goto(&server.url("/admin/operators"))
        .await
        .unwrap();
    b.screenshot("console-operators").await;
    b.click("#sign-out").await;
    assert_eq!(b.path().await, "/admin/login");

    // support: reads the customer, but is refused the owner's pages and a credit
    sign_in(b, &server, SUPPORT).await;
    let account_page = server.url(&format!("/admin/customers/{}", customer.account_id));
    b.client.goto(&account_page).await.unwrap();
    assert!(
        b.client
            .find(fantoccini::Locator::Css("#credit"))
            .await
            .is_err()
    );
    let forge = format!(
        "const f = document.createElement('form'); f.method = 'post';
         f.action = '/admin/customers/{}/credit';
         for (const [k, v] of [['amount', '1'], ['reference', 'sneaky'], ['reason', 'x'],
              ['csrf', document.querySelector('input[name=csrf]').value]]) {{
           const i = document.createElement('input'); i.name = k; i.value = v; f.appendChild(i); }}
         document.body.appendChild(f); f.submit();",
        customer.account_id
    );
    let old_root = b
        .client
        .find(fantoccini::Locator::Css("html"))
        .await
        .unwrap();
    b.client.execute(&forge, vec![]).await.unwrap();
    while old_root.tag_name().await.is_ok() {
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert!(
        b.text("#refusal").await.contains("owner"),
        "{}",
        b.text("#refusal").await
    );
    b.client
        .goto(&server.url("/admin/operators"))
        .await
        .unwrap();
    assert!(b.text("#refusal").await.contains("owner"));
    assert_eq!(
        server.balance(&customer.api_key).await,
        7500.0,
        "nothing moved"
    );
    browser.stop().await;

    let log = server.cli(&["operator", "log", "--subject", &code]);
    assert_eq!(log["entries"][0]["operator_email"], OWNER);
    assert_eq!(log["entries"][0]["after"], "failed");
}
