//! Prices, the catalogue and the customer tools in a real headless
//! Chromium: the owner creates a tier with a rule, puts a plan off sale,
//! changes a customer's tier with a reason, creates a key (its secret shown
//! once) and resends a webhook, and sees each in the operator log; a
//! support operator is refused each owner-only action. Screenshots of the
//! prices page, an account page and a transaction page (docs/screenshots
//! with BILLPAY_UPDATE_SCREENSHOTS=1).

use super::journey::{accept_confirms, sign_in};
use super::*;
use crate::dashboard::browser::Browser;
use fantoccini::Locator;
use serde_json::json;

/// Posts a form the page does not offer, with the page's CSRF proof, and
/// waits for the answer.
async fn forge(b: &Browser, action: &str, fields: &[(&str, &str)]) {
    let fields: Vec<[&str; 2]> = fields.iter().map(|(k, v)| [*k, *v]).collect();
    let script = format!(
        "const f = document.createElement('form'); f.method = 'post'; f.action = {action:?};
         for (const [k, v] of {fields}.concat([['csrf', document.querySelector('input[name=csrf]').value]])) {{
           const i = document.createElement('input'); i.name = k; i.value = v; f.appendChild(i); }}
         document.body.appendChild(f); f.submit();",
        fields = serde_json::to_string(&fields).unwrap()
    );
    let old_root = b.client.find(Locator::Css("html")).await.unwrap();
    b.client.execute(&script, vec![]).await.unwrap();
    while old_root.tag_name().await.is_ok() {
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn an_owner_runs_prices_and_customer_tools_and_support_is_refused() {
    let server = TestServer::spawn().await;
    add_operators(&server);
    let customer = server.customer("5000");
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": reference()});
    let code = server
        .place(&customer.api_key, "/v1/airtime/purchase", body)
        .await;
    server.wait_final(&customer.api_key, &code).await;
    let browser = Browser::start().await;
    let b = &browser;
    sign_in(b, &server, OWNER).await;
    accept_confirms(b).await;

    // a tier with a rule, and a plan off sale
    b.client.goto(&server.url("/admin/prices")).await.unwrap();
    b.fill("#new-tier input[name=name]", "gold").await;
    b.click("#new-tier button").await;
    assert!(b.text("#done").await.contains("tier created"));
    b.fill("#set-rule input[name=provider]", "mtn").await;
    b.fill("#set-rule input[name=value]", "3").await;
    b.click("#set-rule button").await;
    assert!(b.text("#tiers").await.contains("discount 3.00%"));
    accept_confirms(b).await;
    let plan = "#plans tr[data-target='mtn-sme-2gb']";
    b.click(&format!(
        "{plan} form[action='/admin/prices/on-sale'] button"
    ))
    .await;
    assert!(
        b.text(plan).await.contains("off sale"),
        "{}",
        b.text(plan).await
    );
    b.screenshot("console-prices").await;

    // the referral commissions and settings, below the plans, on a phone and a laptop
    for (width, height, suffix) in [(390, 844, "-phone"), (1280, 900, "")] {
        b.client.set_window_size(width, height).await.unwrap();
        b.client.goto(&server.url("/admin/prices")).await.unwrap();
        let card = "document.getElementById('referral-rates').scrollIntoView()";
        b.client.execute(card, vec![]).await.unwrap();
        assert!(b.text("#referral-rates").await.contains("No commission"));
        b.screenshot(&format!("console-referrals{suffix}")).await;
        b.fits_the_width(&format!("/admin/prices at {width} px"))
            .await;
    }

    // the customer's tier, with a reason; a new key shown once
    let account_page = server.url(&format!("/admin/customers/{}", customer.account_id));
    b.client.goto(&account_page).await.unwrap();
    assert_eq!(b.text("#tier").await, "default");
    let choose = "document.querySelector('#tier-select').value = 'gold'";
    b.client.execute(choose, vec![]).await.unwrap();
    b.fill("#tier-reason", "Reseller since November").await;
    b.click("#change-tier-button").await;
    assert_eq!(b.text("#tier").await, "gold");
    b.fill("#new-key-form input[name=name]", "till 2").await;
    b.click("#new-key-form button").await;
    let secret = b.text("#new-key-secret").await;
    assert!(secret.len() > 60, "{secret}");
    assert!(
        b.text("#account-log")
            .await
            .contains("Reseller since November")
    );
    b.screenshot("console-account-tier").await;
    b.client.goto(&account_page).await.unwrap();
    let source = b.client.source().await.unwrap();
    assert!(!source.contains(&secret), "the secret is shown once");

    // resend the purchase's webhook
    let tx_page = server.url(&format!("/admin/transactions/{code}"));
    b.client.goto(&tx_page).await.unwrap();
    b.click("#resend-webhook").await;
    assert!(b.text("#done").await.contains("queued again"));
    b.screenshot("console-transaction-webhook").await;

    // each is in the operator log, with who and why
    b.client.goto(&server.url("/admin/log")).await.unwrap();
    let log = b.text("#log").await;
    for seen in [
        "pricing.account_tier",
        "Reseller since November",
        "catalogue.plan",
        "pricing.rule",
        "key.create",
        "webhook.resend",
    ] {
        assert!(log.contains(seen), "{seen} in {log}");
    }
    b.click("#sign-out").await;

    // support reads the pages, and is refused each owner-only action
    sign_in(b, &server, SUPPORT).await;
    b.client.goto(&server.url("/admin/prices")).await.unwrap();
    assert!(b.client.find(Locator::Css("#new-tier")).await.is_err());
    b.client.goto(&account_page).await.unwrap();
    assert!(b.client.find(Locator::Css("#change-tier")).await.is_err());
    let account = &customer.account_id;
    let refused: [(String, Vec<(&str, &str)>); 5] = [
        (
            format!("/admin/customers/{account}/tier"),
            vec![("tier", "default"), ("reason", "x")],
        ),
        (format!("/admin/customers/{account}/keys"), vec![]),
        ("/admin/prices/tiers".into(), vec![("name", "silver")]),
        (
            "/admin/prices/rules".into(),
            vec![("tier", "gold"), ("product", "airtime"), ("kind", "remove")],
        ),
        (
            "/admin/prices/on-sale".into(),
            vec![("kind", "plan"), ("target", "mtn-sme-2gb"), ("sale", "on")],
        ),
    ];
    for (action, fields) in &refused {
        b.client.goto(&account_page).await.unwrap();
        forge(b, action, fields).await;
        let refusal = b.text("#refusal").await;
        assert!(refusal.contains("owner"), "{action}: {refusal}");
    }
    browser.stop().await;

    let tier = server.cli(&["operator", "log", "--subject", account]);
    assert_eq!(tier["entries"][0]["action"], "key.create", "{tier}");
    let tiers = server.cli(&["tier", "list"]);
    let names: Vec<&str> = tiers["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["default", "gold"], "support created nothing");
}
