//! What a customer reads on the dashboard over plain HTTP: Lagos days and
//! times (WAT), the meter type as a word, the statement saying what was
//! bought.

use super::*;
use serde_json::json;
use time::macros::format_description;
use time::{OffsetDateTime, UtcOffset};

const LAGOS: UtcOffset = match UtcOffset::from_hms(1, 0, 0) {
    Ok(offset) => offset,
    Err(_) => panic!("a valid offset"),
};

async fn page(server: &TestServer, cookie: &str, path: &str) -> String {
    let response = no_redirects()
        .get(server.url(path))
        .header("Cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{path}");
    response.text().await.unwrap()
}

/// The text of the element with this id (its first text node).
fn by_id(html: &str, id: &str) -> String {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let start = at + html[at..].find('>').unwrap() + 1;
    let end = start + html[start..].find('<').unwrap();
    html[start..end].to_owned()
}

/// A purchase placed at half past midnight in Lagos (23:30 UTC the day
/// before) was spent today in Lagos; the dashboard counts it in today.
#[tokio::test]
async fn todays_spend_is_a_lagos_day() {
    let server = TestServer::spawn().await;
    let account = account_with_password(&server, "today@example.com", "10000");
    let cookie = sign_in(&server, "today@example.com", PASSWORD)
        .await
        .unwrap();
    let key = server.cli(&["key", "create", "--account", &account]);
    let api_key = key["api_key"].as_str().unwrap();
    let body = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": reference()});
    let code = server
        .post(api_key, "/v1/airtime/purchase", body)
        .await
        .assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    server.wait_final(api_key, &code).await;

    let lagos_midnight = OffsetDateTime::now_utc()
        .to_offset(LAGOS)
        .replace_time(time::Time::MIDNIGHT)
        .to_offset(UtcOffset::UTC);
    let half_past = (lagos_midnight + time::Duration::minutes(30))
        .format(format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].000+00:00"
        ))
        .unwrap();
    // Moved behind the store's back: its sales rollup rebuilt, as the audit checks.
    let moved = format!(
        "UPDATE transactions SET created_at = '{half_past}' WHERE code = '{code}';
         DELETE FROM sales_rollup; DELETE FROM sales_rollup_shards; {};",
        billpay_store::sales_rollup_backfill()
    );
    server.raw_sql(&moved, &moved).await;

    let html = page(&server, &cookie, "/dashboard").await;
    assert_eq!(by_id(&html, "spent-today"), "₦500.00", "today in Lagos");
    assert_eq!(by_id(&html, "today-count"), "1 purchases");
    // and the list shows the time it was in Lagos: 00:30
    let list = page(&server, &cookie, "/dashboard/transactions").await;
    assert!(list.contains(" 00:30</td>"), "{list}");
}

/// The detail page shows the meter type as a word and its times in Lagos
/// time; the statement says what each entry bought; its CSV names its zone.
#[tokio::test]
async fn the_detail_page_and_the_statement_read_as_words_in_lagos_time() {
    let server = TestServer::spawn().await;
    let account = account_with_password(&server, "words@example.com", "10000");
    let cookie = sign_in(&server, "words@example.com", PASSWORD)
        .await
        .unwrap();
    let key = server.cli(&["key", "create", "--account", &account]);
    let api_key = key["api_key"].as_str().unwrap();
    let accepted = server
        .post(
            api_key,
            "/v1/electricity/purchase",
            electricity(&reference(), "45012345678", 5000.0),
        )
        .await;
    let code = accepted.assert_ok()["reference_code"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = server.wait_final(api_key, &code).await;
    assert_eq!(done["status"], "successful");

    let detail = page(&server, &cookie, &format!("/dashboard/transactions/{code}")).await;
    assert!(
        detail.contains("<dt>Meter type</dt><dd>Prepaid</dd>"),
        "{detail}"
    );
    let created = done["created_at"].as_str().unwrap();
    let in_lagos = OffsetDateTime::parse(created, &time::format_description::well_known::Rfc3339)
        .unwrap()
        .to_offset(LAGOS)
        .format(format_description!(
            "[day padding:none] [month repr:short] [year], [hour]:[minute] WAT"
        ))
        .unwrap();
    assert!(
        detail.contains(&format!("<dt>Created</dt><dd>{in_lagos}</dd>")),
        "{in_lagos} not in {detail}"
    );
    assert!(!detail.contains("+00:00"), "a raw ISO time on the page");

    let statement = page(&server, &cookie, "/dashboard/wallet").await;
    assert!(
        statement.contains("Ikeja Electric prepaid token ₦5,000.00 for meter 45012345678"),
        "{statement}"
    );
    assert!(statement.contains(">Wallet top-up<"), "{statement}");

    let csv = no_redirects()
        .get(server.url("/dashboard/wallet.csv"))
        .header("Cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "time (Lagos, WAT),kind,description,amount_naira,balance_after_naira,reference"
    );
    let debit = lines.find(|l| l.contains(",debit,")).unwrap();
    let at = OffsetDateTime::parse(created, &time::format_description::well_known::Rfc3339)
        .unwrap()
        .to_offset(LAGOS);
    let day_hour = at
        .format(format_description!("[year]-[month]-[day] [hour]:"))
        .unwrap();
    assert!(debit.starts_with(&day_hour), "{debit} is not in Lagos time");
    assert!(
        debit.contains(",Ikeja Electric prepaid token ₦5,000.00 for meter 45012345678,")
            || debit.contains(",\"Ikeja Electric prepaid token ₦5,000.00 for meter 45012345678\","),
        "{debit}"
    );
}
