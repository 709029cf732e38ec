//! What a purchase of each kind costs and how it is named, according to
//! the catalogue endpoints.

use super::kind::*;
use crate::support::TestServer;
use std::collections::HashMap;

/// What a purchase of a kind costs and how it is named, read from the
/// catalogue endpoints (prices come from the catalogue, never the client).
#[derive(Clone, Debug)]
pub struct Expect {
    pub amount: i64,
    /// The plan name (exact) or a part of the item name (the provider's name).
    pub label: String,
}

pub async fn expectations(server: &TestServer, key: &str) -> HashMap<Kind, Expect> {
    let providers = server.get(key, "/v1/providers").await.assert_ok().clone();
    let name = |slug: &str| {
        providers
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["slug"] == slug)
            .unwrap_or_else(|| panic!("no provider {slug} in {providers}"))["name"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let plans = server
        .get(key, "/v1/data-plans?provider=mtn")
        .await
        .assert_ok()
        .clone();
    let data_plan = plans
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_id"] == "mtn-sme-1gb")
        .expect("mtn-sme-1gb listed")
        .clone();
    let cable = server
        .get(key, "/v1/cable-plans?provider=dstv")
        .await
        .assert_ok()
        .clone();
    let cable_plan = cable
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_id"] == "dstv-padi")
        .expect("dstv-padi listed")
        .clone();
    let education = server
        .get(key, "/v1/providers/education")
        .await
        .assert_ok()
        .clone();
    let waec_price = kobo(
        &education
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["slug"] == "waec")
            .expect("waec listed")["price"],
    );
    let denominations = server
        .get(key, "/v1/recharge-pins/denominations?provider=airtel")
        .await
        .assert_ok()
        .clone();
    assert!(
        denominations
            .as_array()
            .unwrap()
            .iter()
            .any(|d| kobo(&d["denomination"]) == 20_000),
        "airtel sells 200 Naira e-pins: {denominations}"
    );
    HashMap::from([
        (
            Airtime,
            Expect {
                amount: 50_000,
                label: name("mtn"),
            },
        ),
        (
            Data,
            Expect {
                amount: kobo(&data_plan["price"]),
                label: data_plan["name"].as_str().unwrap().to_owned(),
            },
        ),
        (
            Epin,
            Expect {
                amount: 3 * 20_000,
                label: name("airtel"),
            },
        ),
        (
            Cable,
            Expect {
                amount: kobo(&cable_plan["price"]),
                label: cable_plan["name"].as_str().unwrap().to_owned(),
            },
        ),
        (
            Electricity,
            Expect {
                amount: 150_050,
                label: name("ikeja-electric"),
            },
        ),
        (
            Education,
            Expect {
                amount: 2 * waec_price,
                label: name("waec"),
            },
        ),
        (
            Bet,
            Expect {
                amount: 250_000,
                label: name("bet9ja"),
            },
        ),
    ])
}
