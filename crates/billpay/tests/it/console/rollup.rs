//! The hourly sales rollup over HTTP (issue 48): the overview, the sales
//! report and its CSV read it and agree with the purchases; `billpay audit`
//! fails when a rollup row is not its purchases' sums.

use super::*;
use crate::pricing::{airtime, buy};
use serde_json::json;

/// The text of the first `class="{class}"` element in `section`'s HTML.
fn stat(html: &str, section: &str, class: &str) -> String {
    let from = html.find(&format!("id=\"{section}\"")).expect(section);
    let at = html[from..]
        .find(&format!("class=\"{class}\">"))
        .expect(class)
        + from;
    let text = &html[at..];
    let start = text.find('>').unwrap() + 1;
    text[start..start + text[start..].find('<').unwrap()].to_owned()
}

#[tokio::test]
async fn the_overview_and_report_read_the_rollup_and_the_audit_checks_it() {
    let mut server = TestServer::spawn().await;
    add_operators(&server);
    let who = server.customer("5000");
    let ok = buy(&server, &who, "airtime", airtime(1000.0)).await;
    let mut failing = airtime(300.0);
    // the sandbox fails a recipient ending 0000: refunded
    failing["phone"] = json!("08030000000");
    let failed = buy(&server, &who, "airtime", failing).await;
    for done in [&ok, &failed] {
        server
            .wait_final(&who.api_key, done["reference_code"].as_str().unwrap())
            .await;
    }

    let owner = admin(&server, OWNER).await;
    let (status, _, overview) = page(&server, &owner, "/admin").await;
    assert_eq!(status, 200);
    for period in ["period-1", "period-2"] {
        assert_eq!(stat(&overview, period, "sales-count"), "1", "{period}");
        assert_eq!(
            stat(&overview, period, "sales-value"),
            "₦1,000.00",
            "{period}"
        );
    }
    assert!(overview.contains("₦300.00 refunded"), "{overview}");

    let report = server.cli(&["report", "sales", "--by", "product"]);
    assert_eq!(report["totals"]["purchases"], 1);
    assert_eq!(report["totals"]["failed_refunded"], 1);
    let by_account = server.cli(&["report", "sales", "--by", "account"]);
    assert_eq!(
        by_account["totals"], report["totals"],
        "the purchases' and the rollup's"
    );
    let (status, _, csv) = page(&server, &owner, "/admin/reports.csv?by=product").await;
    assert_eq!(status, 200);
    assert!(csv.lines().any(|l| l.starts_with("airtime,1,")), "{csv}");
    assert!(server.audit().0, "the rollup equals the purchases");

    // A rollup row tampered with: the audit names it.
    server.kill();
    let tamper =
        "UPDATE sales_rollup_shards SET charged = charged + 100 WHERE status = 'successful'";
    server.raw_sql(tamper, tamper).await;
    server.skip_final_audit();
    let (passed, report) = server.audit();
    assert!(!passed, "{report}");
    let checks = report["checks"].as_array().unwrap();
    let failing: Vec<&str> = checks
        .iter()
        .filter(|c| !c["violations"].as_array().unwrap().is_empty())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(failing, ["sales_rollup_equals_transactions"], "{report}");
    let row = &checks
        .iter()
        .find(|c| c["name"] == "sales_rollup_equals_transactions")
        .unwrap()["violations"][0];
    assert_eq!(row["charged"], "-100", "{row}");
    assert_eq!(row["product"], "airtime");
}
