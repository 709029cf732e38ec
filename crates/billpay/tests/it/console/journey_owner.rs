//! What an owner meets in their first hour, in headless Chromium at 1280 px:
//! customers by name (not id) in the lists and the log, the lists' important
//! columns in view without scrolling, a refused credit back on its form with
//! the message beside the amount, `₦5,000` read as typed, the prices page's
//! search and plan types, a rule under the plan's last known supplier cost
//! stopped until confirmed, a list price edited. Screenshots of each
//! (docs/screenshots with BILLPAY_UPDATE_SCREENSHOTS=1).

use super::journey::{accept_confirms, sign_in};
use super::*;
use crate::dashboard::browser::Browser;
use serde_json::json;

/// The right edge of the first element `selector` finds, in CSS pixels.
async fn right_edge(b: &Browser, selector: &str) -> f64 {
    let script =
        format!("return document.querySelector(\"{selector}\").getBoundingClientRect().right");
    let value = b.client.execute(&script, vec![]).await.unwrap();
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{selector}: {value}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_reads_names_and_prices_and_is_warned_below_cost_in_a_browser() {
    let server = TestServer::spawn().await;
    add_operators(&server);
    let customer = server.customer("5000");
    // The sandbox charges the face value less 3%: MTN 1GB (SME) at ₦600 costs ₦582.
    let body = json!({"provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": "08031234567", "reference": reference()});
    let code = server
        .place(&customer.api_key, "/v1/data/purchase", body)
        .await;
    server.wait_final(&customer.api_key, &code).await;
    let browser = Browser::start().await;
    let b = &browser;
    sign_in(b, &server, OWNER).await;
    accept_confirms(b).await;

    // 7: a credit of 0 comes back on its form, the message beside the amount
    let account_page = server.url(&format!("/admin/customers/{}", customer.account_id));
    b.client.goto(&account_page).await.unwrap();
    b.fill("#credit input[name=amount]", "0").await;
    b.fill("#credit input[name=reference]", "gtb-24-nov").await;
    b.fill("#credit input[name=reason]", "GTBank transfer 24 Nov")
        .await;
    b.click("#credit button").await;
    let beside = b.text("#credit-amount-error").await;
    assert_eq!(beside, "must be more than 0");
    let kept = b.css("#credit input[name=reason]").await;
    assert_eq!(
        kept.prop("value").await.unwrap().as_deref(),
        Some("GTBank transfer 24 Nov"),
        "what was typed is kept"
    );
    b.screenshot("console-form-error").await;
    // ₦5,000 as a person types it
    b.fill("#credit input[name=amount]", "₦5,000").await;
    b.click("#credit button").await;
    assert!(b.text("#done").await.contains("wallet credited"));
    assert_eq!(
        server.balance(&customer.api_key).await,
        5_000.0 - 600.0 + 5_000.0
    );

    // 3 and 4: the transaction list names the customer, and at 1280 px the
    // amount and status are in view
    b.client
        .goto(&server.url("/admin/transactions"))
        .await
        .unwrap();
    let row = format!("#transactions tr[data-code='{code}']");
    let text = b.text(&row).await;
    assert!(text.contains("Test Co"), "{text}");
    assert!(!text.contains(&customer.account_id), "{text}");
    for column in ["td:nth-child(2)", "td:nth-child(3)", "td:nth-child(4)"] {
        let edge = right_edge(b, &format!("{row} {column}")).await;
        assert!(edge <= 1280.0, "{column} ends at {edge} px");
    }
    b.screenshot("console-transactions-names").await;
    b.click(&format!("{row} a")).await;
    let fields = b.text("#fields").await;
    for seen in [
        "Face value",
        "₦600.00",
        "Supplier cost",
        "₦582.00",
        "Profit",
        "₦18.00",
    ] {
        assert!(fields.contains(seen), "{seen} in {fields}");
    }

    // 8: the prices page: search, the plan's type, its last cost and margin
    b.client
        .goto(&server.url("/admin/prices?q=1gb&provider=mtn"))
        .await
        .unwrap();
    let plan = "#plans tr[data-target='mtn-sme-1gb']";
    let text = b.text(plan).await;
    assert!(
        text.contains("SME") && text.contains("₦582.00") && text.contains("₦18.00"),
        "{text}"
    );
    let count = b.text("#plans-count").await;
    assert!(!count.starts_with("(149"), "searched: {count}");
    // a tier with a rule under the cost: warned, then confirmed
    b.fill("#new-tier input[name=name]", "resellers").await;
    b.click("#new-tier button").await;
    b.fill("#set-rule input[name=provider]", "MTN").await;
    b.fill("#set-rule input[name=plan]", "mtn-sme-1gb").await;
    b.client
        .execute(
            "document.querySelector('#set-rule select[name=product]').value = 'data';\
             document.querySelector('#set-rule select[name=kind]').value = 'price'",
            vec![],
        )
        .await
        .unwrap();
    b.fill("#set-rule input[name=value]", "560").await;
    b.click("#set-rule button.primary").await;
    let warning = b.text("#below-cost").await;
    assert!(
        warning
            .contains("MTN 1GB (SME, 7 days) at ₦560.00 is below its last supplier cost ₦582.00"),
        "{warning}"
    );
    b.screenshot("console-below-cost").await;
    b.click("#confirm-below-cost").await;
    assert!(
        b.text("#done")
            .await
            .contains("below cost as you confirmed")
    );
    let tiers = b.text("#tiers").await;
    assert!(tiers.contains("margin −₦22.00"), "{tiers}");
    // a list price edited in place, logged
    accept_confirms(b).await;
    b.client
        .goto(&server.url("/admin/prices?q=mtn-sme-1gb"))
        .await
        .unwrap();
    b.fill(&format!("{plan} input[name=price]"), "650").await;
    b.click(&format!("{plan} form.list-price button")).await;
    assert!(b.text("#done").await.contains("list price changed"));
    b.screenshot("console-prices-costs").await;

    // 3 and 6: the operator log names the customer and reads as sentences
    b.client.goto(&server.url("/admin/log")).await.unwrap();
    let log = b.text("#log").await;
    for seen in [
        "Test Co",
        "data · MTN Nigeria · MTN 1GB (SME, 7 days): price ₦560.00",
        "catalogue.price",
        "600.00 → 650.00",
    ] {
        assert!(log.contains(seen), "{seen} in {log}");
    }
    for leak in ["Scope {", "Some(", "— → —"] {
        assert!(!log.contains(leak), "{leak} in {log}");
    }
    b.screenshot("console-log-names").await;
    browser.stop().await;
}
