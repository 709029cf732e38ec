//! `billpay report sales`: its sums equal the ledger's, for every grouping,
//! over Lagos days.

use super::*;
use crate::support::TestServer;
use billpay_api_testkit::kind::kobo;

/// What the ledger says the purchases took: −(debits + refunds), kobo.
fn spent_per_ledger(server: &TestServer, account: &str) -> i64 {
    let statement = server.assert_ledger_consistent(account);
    let entries = statement["entries"].as_array().unwrap();
    -entries
        .iter()
        .filter(|e| e["kind"] == "debit" || e["kind"] == "refund")
        .map(|e| kobo(&e["amount"]))
        .sum::<i64>()
}

#[tokio::test]
async fn the_sales_report_sums_equal_the_ledger() {
    let server = TestServer::spawn().await;
    let reseller = server.customer("20000");
    let retail = server.customer("20000");
    tier(
        &server,
        "reseller",
        &[&["--product", "airtime", "--discount-percent", "2"]],
    );
    set_tier(&server, &reseller, "reseller").await;
    let mut codes = Vec::new();
    for (who, body) in [
        (&reseller, airtime(1000.0)),
        (&reseller, data("mtn", "mtn-sme-1gb")),
        (&retail, airtime(500.0)),
        (&retail, electricity(1500.5)),
        // fails at the sandbox (recipient ending 0000): refunded
        (
            &reseller,
            json!({ "provider_id": "mtn", "phone": "08030000000", "amount": 300 }),
        ),
    ] {
        let product = if body.get("plan_id").is_some() {
            "data"
        } else if body.get("meter_number").is_some() {
            "electricity"
        } else {
            "airtime"
        };
        let d = buy(&server, who, product, body).await;
        codes.push((
            who.api_key.clone(),
            d["reference_code"].as_str().unwrap().to_owned(),
        ));
    }
    for (key, code) in &codes {
        server.wait_final(key, code).await;
    }
    let spent = spent_per_ledger(&server, &reseller.account_id)
        + spent_per_ledger(&server, &retail.account_id);

    for by in ["day", "product", "provider", "supplier", "account", "tier"] {
        let report = server.cli(&["report", "sales", "--by", by]);
        let totals = &report["totals"];
        assert_eq!(kobo(&totals["charged"]), spent, "{by}: {report}");
        assert_eq!(kobo(&totals["charged"]), 98_000 + 60_000 + 50_000 + 150_050);
        assert_eq!(
            kobo(&totals["face_value"]),
            100_000 + 60_000 + 50_000 + 150_050
        );
        assert_eq!(totals["purchases"], 4);
        assert_eq!(totals["failed_refunded"], 1);
        assert_eq!(totals["cost_unknown"], 0);
        // The sandbox charged the face value less 3%.
        assert_eq!(kobo(&totals["cost"]), 97_000 + 58_200 + 48_500 + 145_549);
        assert_eq!(
            kobo(&totals["profit"]),
            kobo(&totals["charged"]) - kobo(&totals["cost"])
        );
        let rows = report["rows"].as_array().unwrap();
        for field in ["purchases", "failed_refunded"] {
            let sum: u64 = rows.iter().map(|r| r[field].as_u64().unwrap()).sum();
            assert_eq!(sum, totals[field].as_u64().unwrap(), "{by} {field}");
        }
        for field in ["face_value", "charged", "cost", "profit"] {
            let sum: i64 = rows.iter().map(|r| kobo(&r[field])).sum();
            assert_eq!(sum, kobo(&totals[field]), "{by} {field}");
        }
        // Money as Naira numbers of at most 2 decimals.
        for field in ["face_value", "charged", "cost", "profit"] {
            let text = totals[field].to_string();
            assert!(
                text.split('.').nth(1).is_none_or(|d| d.len() <= 2),
                "{field}: {text}"
            );
        }
    }
    let by_tier = server.cli(&["report", "sales", "--by", "tier"]);
    let keys: Vec<&str> = by_tier["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["default", "reseller"]);
    let reseller_row = &by_tier["rows"][1];
    assert_eq!(kobo(&reseller_row["charged"]), 98_000 + 60_000);
    assert_eq!(reseller_row["failed_refunded"], 1);

    // Lagos days: today is in, tomorrow is not.
    let lagos_today = time::OffsetDateTime::now_utc()
        .to_offset(time::UtcOffset::from_hms(1, 0, 0).unwrap())
        .date();
    let today = lagos_today.to_string();
    let tomorrow = (lagos_today + time::Duration::days(1)).to_string();
    let by_day = server.cli(&["report", "sales", "--from", &today, "--to", &today]);
    assert_eq!(by_day["rows"][0]["key"], today.as_str());
    assert_eq!(by_day["totals"]["purchases"], 4);
    let later = server.cli(&["report", "sales", "--from", &tomorrow]);
    assert_eq!(later["rows"], json!([]));
    assert_eq!(later["totals"]["purchases"], 0);
    let (ok, out) = server.cli_result(&["report", "sales", "--by", "colour"]);
    assert!(
        !ok && out["error"].as_str().unwrap().contains("--by"),
        "{out}"
    );
    let (ok, out) = server.cli_result(&["report", "sales", "--from", "24-11-2026"]);
    assert!(
        !ok && out["error"].as_str().unwrap().contains("--from"),
        "{out}"
    );
}

/// Days at the calendar's edges (issue 27, finding 3) are refused with the
/// range, exit 2, as any refused input; they used to panic (exit 101).
#[tokio::test]
async fn a_day_outside_the_reports_range_is_refused_with_exit_code_2() {
    let server = TestServer::spawn().await;
    for (flag, day) in [
        ("--to", "9999-12-31"),
        ("--from", "-9999-01-01"),
        ("--from", "1999-12-31"),
    ] {
        let typed = format!("{flag}={day}");
        let (code, answer) = server.cli_exit(&["report", "sales", &typed]);
        assert_eq!(code, Some(2), "{typed}: {answer}");
        let message = answer["error"].as_str().unwrap();
        let rule = format!("{flag} must be a day from 2000-01-01 to 2100-12-31");
        assert!(message.starts_with(&rule), "{message}");
    }
    let (code, answer) = server.cli_exit(&["report", "sales", "--to", "2100-12-31"]);
    assert_eq!(code, Some(0), "the last day of the range: {answer}");
    let (code, answer) = server.cli_exit(&["report", "sales", "--to", "yesterday"]);
    assert_eq!(code, Some(2), "{answer}");
}
