//! "Download my data" (issue 32, NDPA) on the Account page: the signed-in
//! customer's own profile, statement and purchases as JSON and CSV, after
//! the password is asked again; never another account's.

use super::*;
use serde_json::Value;

/// A customer with a password, ₦5,000 and one electricity purchase to
/// `meter`: (account id, email, the purchase's reference).
async fn customer_with_purchase(server: &TestServer, meter: &str) -> (String, String, String) {
    let email = format!("data-{}@example.com", rand_suffix());
    let id = account_with_password(server, &email, "5000");
    let key = server.cli(&["key", "create", "--account", &id]);
    let key = key["api_key"].as_str().unwrap();
    let reference = reference();
    let code = server
        .place(
            key,
            "/v1/electricity/purchase",
            electricity(&reference, meter, 1500.0),
        )
        .await;
    server.wait_final(key, &code).await;
    (id, email, reference)
}

/// Posts the Account page's download form: (status, content type, body).
async fn download(
    server: &TestServer,
    cookie: &str,
    password: &str,
    format: &str,
) -> (u16, String, String) {
    let http = no_redirects();
    let page = http
        .get(server.url("/dashboard/account"))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    let html = page.text().await.unwrap();
    assert!(
        html.contains("id=\"download-json\""),
        "the Account page offers the download"
    );
    let csrf = csrf_in(&html);
    let response = http
        .post(server.url("/dashboard/account/data"))
        .header("Cookie", cookie)
        .form(&[("current", password), ("format", format), ("csrf", &csrf)])
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, response.text().await.unwrap())
}

#[tokio::test]
async fn a_customer_downloads_their_own_data_and_nobody_elses() {
    let server = TestServer::spawn().await;
    let (mine, email, my_reference) = customer_with_purchase(&server, "45012345678").await;
    let (_, other_email, other_reference) = customer_with_purchase(&server, "45098765432").await;
    let cookie = sign_in(&server, &email, PASSWORD).await.unwrap();

    let (status, kind, body) = download(&server, &cookie, "not my password", "json").await;
    assert_eq!(status, 422, "a wrong password gave the data");
    assert!(kind.starts_with("text/html"), "{kind}");
    assert!(
        body.contains("Your current password is not right."),
        "{body}"
    );
    assert!(!body.contains(&my_reference));

    let (status, kind, body) = download(&server, &cookie, PASSWORD, "json").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(kind, "application/json");
    let data: Value = serde_json::from_str(&body).expect("one JSON document");
    assert_eq!(data["profile"]["account_id"], mine.as_str());
    assert_eq!(data["profile"]["email"], email.as_str());
    assert_eq!(data["profile"]["price_tier"], "default");
    // the identity check's record is the customer's too (the operator's
    // level here: no BVN or NIN, so no last 4 digits)
    let kyc = server.cli(&["kyc", "show", &mine]);
    assert_eq!(data["profile"]["kyc_level"], kyc["kyc"]["level"], "{kyc}");
    assert_eq!(data["profile"]["kyc_method"], kyc["kyc"]["method"], "{kyc}");
    assert!(data["profile"]["kyc_level"].is_u64(), "{}", data["profile"]);
    assert_eq!(data["profile"]["kyc_last4"], Value::Null);
    assert!(
        data["profile"]["created"]
            .as_str()
            .unwrap()
            .ends_with(" WAT")
    );
    let statement = data["wallet_statement"].as_array().unwrap();
    let kinds: Vec<&str> = statement
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["credit", "debit"], "{statement:?}");
    assert_eq!(statement[0]["amount_naira"], "5000.00");
    assert_eq!(statement[1]["balance_after_naira"], "3500.00");
    let purchases = data["purchases"].as_array().unwrap();
    assert_eq!(purchases.len(), 1, "{purchases:?}");
    assert_eq!(purchases[0]["reference"], my_reference.as_str());
    assert_eq!(purchases[0]["recipient"], "45012345678");
    assert_eq!(purchases[0]["amount_charged_naira"], "1500.00");
    assert_eq!(purchases[0]["status"], "successful");
    let keys = data["api_keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert_eq!(keys[0]["status"], "active");
    assert!(keys[0].get("key_hash").is_none() && keys[0].get("secret").is_none());
    assert_eq!(data["notification_choices"]["topics"][0]["email"], true);
    for theirs in [
        other_email.as_str(),
        other_reference.as_str(),
        "45098765432",
    ] {
        assert!(
            !body.contains(theirs),
            "another account's {theirs} in the download"
        );
    }

    let (status, kind, csv) = download(&server, &cookie, PASSWORD, "csv").await;
    assert_eq!(status, 200, "{csv}");
    assert_eq!(kind, "text/csv; charset=utf-8");
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("section,item,time (Lagos; WAT)")
    );
    let purchase = csv
        .lines()
        .find(|l| l.starts_with("purchase,"))
        .expect("a purchase row");
    assert!(
        purchase.contains(&my_reference) && purchase.contains("45012345678"),
        "{purchase}"
    );
    assert!(purchase.contains(",1500.00,"), "{purchase}");
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("statement,")).count(),
        2
    );
    assert!(csv.contains(&format!("profile,email,,{email}")), "{csv}");
    for theirs in [
        other_email.as_str(),
        other_reference.as_str(),
        "45098765432",
    ] {
        assert!(
            !csv.contains(theirs),
            "another account's {theirs} in the CSV"
        );
    }

    // Signed out: no data, the sign-in page instead.
    let anonymous = no_redirects()
        .post(server.url("/dashboard/account/data"))
        .form(&[("current", PASSWORD), ("format", "json")])
        .send()
        .await
        .unwrap();
    assert_ne!(anonymous.status(), 200);
    assert!(!anonymous.text().await.unwrap().contains(&my_reference));
}
