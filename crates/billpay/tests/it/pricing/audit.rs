//! `billpay audit` proves each purchase's debit equals its stored charged
//! amount, and that a cost is only ever on a successful purchase.

use super::*;
use crate::support::TestServer;

fn violations(report: &Value, check: &str) -> Vec<Value> {
    let checks = report["checks"].as_array().unwrap();
    let found = checks.iter().find(|c| c["name"] == check);
    found.unwrap_or_else(|| panic!("no check {check}: {report}"))["violations"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn the_audit_catches_a_charged_amount_that_is_not_the_debit_and_a_cost_on_a_failure() {
    let mut server = TestServer::spawn().await;
    let who = server.customer("5000");
    tier(
        &server,
        "t",
        &[&["--product", "airtime", "--discount-percent", "2"]],
    );
    set_tier(&server, &who, "t").await;
    let ok = buy(&server, &who, "airtime", airtime(1000.0)).await;
    let mut failing = airtime(500.0);
    failing["phone"] = json!("08030000000");
    let failed = buy(&server, &who, "airtime", failing).await;
    let (ok, failed) = (
        ok["reference_code"].as_str().unwrap(),
        failed["reference_code"].as_str().unwrap(),
    );
    server.wait_final(&who.api_key, ok).await;
    server.wait_final(&who.api_key, failed).await;
    assert!(server.audit().0, "clean before the corruption");
    server.kill();
    // The stored price rewritten to the list price (the debit was ₦980), and
    // a cost recorded on the refunded purchase.
    let corrupt = format!(
        "UPDATE transactions SET amount = face_value WHERE code = '{ok}';
         UPDATE transactions SET cost = 100 WHERE code = '{failed}';"
    );
    server.raw_sql(&corrupt, &corrupt).await;
    server.skip_final_audit();
    let (passed, report) = server.audit();
    assert!(!passed, "{report}");
    let debited = violations(&report, "debited_once");
    assert_eq!(debited.len(), 1, "{report}");
    assert_eq!(debited[0]["reference_code"], ok);
    assert_eq!(debited[0]["amount"], "100000");
    assert_eq!(debited[0]["debited"], "-98000");
    let priced = violations(&report, "priced_purchase");
    assert_eq!(priced.len(), 1, "{report}");
    assert_eq!(priced[0]["reference_code"], failed);
    assert_eq!(priced[0]["cost"], "100");
}
