//! The console's money pages over HTTP against the real binary: an
//! unmatched payment from the fake Monnify shows on the Funding page, an
//! owner assigns it once and only with a reason (support is refused), the
//! operator log keeps it; the sales report downloads as CSV with the
//! funding lines.

use super::*;
use crate::dashboard::{csrf_in, form_sign_in, no_redirects};
use crate::funding::gateways::Setup;
use serde_json::{Value, json};

pub(crate) async fn admin(server: &TestServer, email: &str) -> String {
    let fields = [("email", email), ("password", PASSWORD)];
    form_sign_in(server, "/admin/login", "billpay_admin", &fields)
        .await
        .expect("signed in")
}

pub(crate) async fn page(
    server: &TestServer,
    cookie: &str,
    path: &str,
) -> (u16, reqwest::header::HeaderMap, String) {
    let response = no_redirects()
        .get(server.url(path))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

pub(super) async fn post_form(
    server: &TestServer,
    cookie: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> (u16, String) {
    let response = no_redirects()
        .post(server.url(path))
        .header("Cookie", cookie)
        .form(fields)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmatched_payment_is_assigned_once_from_the_funding_page_and_reported() {
    let setup = Setup::start(&[("BILLPAY_FUNDING_FEE_PERCENT", "1.5")]).await;
    let server = &setup.server;
    add_operators(server);
    let fake = &setup.fakes[0];
    let customer = server.customer("1000");
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": reference()});
    let code = server
        .place(&customer.api_key, "/v1/airtime/purchase", body)
        .await;
    server.wait_final(&customer.api_key, &code).await;
    let transfer = fake.transfer(None, None, 1_200.0);
    let (status, answer) = setup.post_webhook(fake, fake.webhook(&transfer)).await;
    assert_eq!(
        (status, &answer["data"]["outcome"]),
        (200, &json!("unmatched")),
        "{answer}"
    );
    let listed = setup.cli(&["funding", "list", "--status", "unmatched"]);
    let id = listed["fundings"][0]["id"].as_str().unwrap().to_owned();

    // support sees it, without the form, and is refused the POST
    let support = admin(server, SUPPORT).await;
    let (status, _, html) = page(server, &support, "/admin/funding?status=unmatched").await;
    assert_eq!(status, 200);
    assert!(
        html.contains(&transfer) && html.contains("₦1,200.00"),
        "{html}"
    );
    assert!(!html.contains("/assign"), "support sees no assign form");
    let assign = format!("/admin/funding/{id}/assign");
    let proof = csrf_in(&html);
    let fields = [
        ("account", customer.account_id.as_str()),
        ("reason", "payer's name"),
        ("csrf", &proof),
    ];
    let (status, _) = post_form(server, &support, &assign, &fields).await;
    assert_eq!(status, 403);

    // the owner: a reason is required, then credited once less the fee
    let owner = admin(server, OWNER).await;
    let (_, _, html) = page(server, &owner, "/admin/funding?status=unmatched").await;
    assert!(html.contains(&assign), "the owner has the form");
    let proof = csrf_in(&html);
    let no_reason = [
        ("account", customer.account_id.as_str()),
        ("reason", ""),
        ("csrf", &proof),
    ];
    let (status, refusal) = post_form(server, &owner, &assign, &no_reason).await;
    assert_eq!(status, 400, "{refusal}");
    assert!(refusal.contains("reason"), "{refusal}");
    let fields = [
        ("account", customer.account_id.as_str()),
        ("reason", "payer named on the transfer"),
        ("csrf", &proof),
    ];
    let (status, _) = post_form(server, &owner, &assign, &fields).await;
    assert_eq!(status, 303);
    let (status, refusal) = post_form(server, &owner, &assign, &fields).await;
    assert_eq!(status, 409, "{refusal}");
    assert!(refusal.contains("only an unmatched"), "{refusal}");
    // ₦1,000 − ₦500 airtime + ₦1,200 − 1.5% (₦18)
    assert_eq!(server.balance(&customer.api_key).await, 1_682.0);
    let (_, _, html) = page(server, &owner, "/admin/funding?status=credited").await;
    assert!(
        html.contains(&transfer) && html.contains("₦18.00"),
        "credited, with its fee"
    );
    let log = server.cli(&["operator", "log", "--subject", &id]);
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    assert_eq!(entries[0]["action"], "funding.assign");
    assert_eq!(entries[0]["operator_email"], OWNER);
    assert_eq!(entries[0]["reason"], "payer named on the transfer");

    // the report as CSV: the same figures as `billpay report sales`
    let (status, headers, csv) =
        page(server, &owner, "/admin/reports.csv?from=&to=&by=provider").await;
    assert_eq!(status, 200, "{csv}");
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let disposition = headers["content-disposition"].to_str().unwrap();
    assert_eq!(
        disposition,
        "attachment; filename=\"billpay-sales-start-now-by-provider.csv\""
    );
    let cli: Value = server.cli(&["report", "sales", "--by", "provider"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "provider,purchases,face_value,charged,cost,profit,cost_unknown,failed_refunded"
    );
    let mtn = lines
        .iter()
        .find(|l| l.starts_with("mtn,"))
        .expect("an mtn row");
    assert!(mtn.starts_with("mtn,1,500.00,500.00,"), "{mtn}");
    let total = lines.iter().find(|l| l.starts_with("total,")).unwrap();
    assert!(total.starts_with("total,1,"), "{total}");
    assert_eq!(cli["totals"]["charged"], 500.0);
    assert!(
        lines.contains(&"funding received by bank transfer,,,1200.00,,,,"),
        "{csv}"
    );
    assert!(
        lines.contains(&"funding received by card,,,0.00,,,,"),
        "{csv}"
    );
    assert!(
        lines.contains(&"funding fees (income),,,18.00,,,,"),
        "{csv}"
    );
    assert_eq!(
        cli["funding_fees"], 18.0,
        "the CLI reports the same fee line"
    );
    let (status, _, html) = page(server, &owner, "/admin/reports?from=&by=provider").await;
    assert_eq!(status, 200);
    assert!(
        html.contains("₦18.00") && html.contains("₦1,200.00"),
        "the page shows the funding lines"
    );
    let (status, _, refusal) = page(server, &owner, "/admin/reports.csv?from=24-11-2026").await;
    assert_eq!(status, 400, "{refusal}");
    let (status, _, _) = page(server, &owner, "/admin/reports.csv?by=colour").await;
    assert_eq!(status, 400);
    let (status, _, _) = page(server, "", "/admin/reports.csv").await;
    assert_eq!(status, 303, "signed out: to the sign-in page");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suppliers_page_shows_a_low_float_the_routes_and_the_start_up_check() {
    let fake = crate::support::vtpass::FakeVtpass::start().await;
    let low = [("BILLPAY_SUPPLIER_LOW_BALANCE", "300000")];
    let server = crate::vtpass::server_with(&fake, &low).await;
    add_operators(&server);
    let support = admin(&server, SUPPORT).await;
    let (status, _, html) = page(&server, &support, "/admin/suppliers").await;
    assert_eq!(status, 200);
    let floats = &html[html.find("id=\"floats\"").unwrap()..html.find("id=\"routes\"").unwrap()];
    assert!(
        floats.contains("vtpass") && floats.contains("₦250,000.00"),
        "{floats}"
    );
    assert!(floats.contains("badge low"), "under ₦300,000: low");
    assert!(
        floats.contains("sandbox") && floats.contains("keeps no float"),
        "{floats}"
    );
    assert!(html.contains("₦300,000.00"), "the level is shown");
    let routes = &html[html.find("id=\"routes\"").unwrap()..];
    assert!(
        routes.contains("<td>default</td><td>vtpass</td>"),
        "{routes}"
    );
    let checks = &html[html.find("id=\"checks\"").unwrap()..];
    assert!(
        checks.contains("badge ok") && checks.contains("answered, float ₦250,000.00"),
        "{checks}"
    );
    let (_, _, overview) = page(&server, &support, "/admin").await;
    let floats = &overview[overview.find("id=\"overview-floats\"").unwrap()..];
    assert!(
        floats.contains("₦250,000.00") && floats.contains("badge low"),
        "{floats}"
    );
}
