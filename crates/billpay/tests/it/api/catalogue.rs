//! The catalogue endpoints: providers per service, plans and denominations
//! filtered by provider slug or UUID, and the operator's switches.

use super::within;
use crate::support::*;
use serde_json::json;

#[tokio::test]
async fn providers_are_listed_with_their_services_and_per_service() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let key = &c.api_key;
    let providers = server
        .get(key, "/v1/providers")
        .await
        .assert_ok()
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(providers.len(), 32);
    let mtn = providers.iter().find(|p| p["slug"] == "mtn").unwrap();
    assert_eq!(mtn["services"], json!(["airtime", "data", "epin"]));
    assert_eq!(mtn["type"], "telco");
    assert_eq!(mtn["active"], true);
    assert!(uuid_like(mtn["id"].as_str().unwrap()));

    for (service, expected) in [
        ("airtime", 4),
        ("data", 4),
        ("epin", 4),
        ("cable", 4),
        ("electricity", 12),
        ("betting", 8),
    ] {
        let listed = server
            .get(key, &format!("/v1/providers/{service}"))
            .await
            .assert_ok()
            .clone();
        assert_eq!(listed.as_array().unwrap().len(), expected, "{service}");
    }
    let education = server
        .get(key, "/v1/providers/education")
        .await
        .assert_ok()
        .clone();
    assert!(
        education
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["price"].as_f64().unwrap() > 0.0)
    );
}

#[tokio::test]
async fn plans_categories_and_denominations_filter_by_provider_slug_or_uuid() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let key = &c.api_key;
    let mtn_id = server.provider_id(key, "mtn").await;
    let categories = server
        .get(key, "/v1/data-plans/categories?provider=mtn")
        .await
        .assert_ok()
        .clone();
    assert!(
        categories
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["provider"] == "mtn")
    );
    assert!(
        categories
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "sme")
    );

    // the provider filter takes the UUID too
    let by_slug = server
        .get(key, "/v1/data-plans?provider=mtn&category=sme")
        .await
        .assert_ok()
        .clone();
    let by_id = server
        .get(
            key,
            &format!("/v1/data-plans?provider={mtn_id}&category=sme"),
        )
        .await
        .assert_ok()
        .clone();
    assert_eq!(by_slug, by_id);
    for plan in by_slug.as_array().unwrap() {
        assert_eq!(plan["provider"], "mtn");
        assert_eq!(plan["category"], "sme");
        assert!(plan["duration"].as_u64().unwrap() > 0);
        assert!(plan["price"].as_f64().unwrap() > 0.0);
        let name = plan["name"].as_str().unwrap().to_lowercase();
        assert!(!name.contains("day") && !name.contains("month"), "{name}");
    }
    let unknown = server
        .get(key, "/v1/data-plans?provider=nope")
        .await
        .assert_ok()
        .clone();
    assert_eq!(unknown, json!([]));

    let cable = server
        .get(key, "/v1/cable-plans?provider=dstv")
        .await
        .assert_ok()
        .clone();
    assert!(
        cable
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "DStv Compact")
    );
    assert!(
        cable
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["provider"] == "dstv" && p["duration"].as_u64().is_some())
    );
    let pins = server
        .get(key, "/v1/recharge-pins/denominations?provider=glo")
        .await
        .assert_ok()
        .clone();
    assert!(
        pins.as_array()
            .unwrap()
            .contains(&json!({"provider": "glo", "denomination": 100.0, "price": 100.0}))
    );
}

#[tokio::test]
async fn a_provider_the_operator_disables_is_listed_inactive_within_seconds() {
    let server = TestServer::spawn().await;
    let c = server.customer("0");
    let key = &c.api_key;
    server.cli(&["provider", "disable", "glo"]);
    within(3, || async {
        let all = server.get(key, "/v1/providers").await;
        all.data()
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["slug"] == "glo" && p["active"] == false)
    })
    .await;
    server.cli(&["provider", "enable", "glo"]);
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}
