//! Refusals decided by the catalogue: `invalid_provider`, `invalid_plan`,
//! and `minimum_amount` / `maximum_amount` at each product's limits (the
//! limits themselves pass). Live and test mode alike, nothing changes.

use crate::app::Refusals;
use crate::kind::*;
use serde_json::{Value, json};

impl Refusals {
    /// The UUID of the provider `slug`, from `GET /v1/providers`.
    async fn provider_uuid(&self, slug: &str) -> String {
        let providers = self.app.get(&self.c.key, "/v1/providers").await;
        let list = providers.assert_ok().as_array().unwrap().clone();
        let provider = list.iter().find(|p| p["slug"] == slug);
        str_of(&provider.unwrap_or_else(|| panic!("no provider {slug}"))["id"])
    }

    /// The first plan listed at `path` (a plans endpoint with its filter).
    async fn first_plan(&self, path: &str) -> String {
        let plans = self.app.get(&self.c.key, path).await;
        str_of(&plans.assert_ok()[0]["plan_id"])
    }
}

#[tokio::test]
async fn an_unknown_provider_or_one_of_another_service_is_invalid_provider() {
    let r = Refusals::start().await;
    let other_service = [
        (Airtime, "dstv"),
        (Data, "ikeja-electric"),
        (Epin, "dstv"),
        (Cable, "mtn"),
        (Electricity, "mtn"),
        (Education, "bet9ja"),
        (Bet, "waec"),
    ];
    for (kind, other) in other_service {
        for provider in [
            "nope".to_owned(),
            "MTN ".to_owned(),
            other.to_owned(),
            r.provider_uuid(other).await,
            "00000000-0000-4000-8000-000000000000".to_owned(),
        ] {
            let body = with(&r.base(kind), "provider_id", json!(provider));
            r.refused(kind, body, "invalid_provider", "").await;
        }
    }
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn an_unknown_plan_or_one_of_another_provider_or_product_is_invalid_plan() {
    let r = Refusals::start().await;
    let airtel_plan = r.first_plan("/v1/data-plans?provider=airtel").await;
    let gotv_plan = r.first_plan("/v1/cable-plans?provider=gotv").await;
    for plan in ["mtn-nope", airtel_plan.as_str(), "dstv-padi", ""] {
        let body = with(&r.base(Data), "plan_id", json!(plan));
        r.refused(Data, body, "invalid_plan", "").await;
    }
    for plan in ["dstv-nope", gotv_plan.as_str(), "mtn-sme-1gb"] {
        let body = with(&r.base(Cable), "plan_id", json!(plan));
        r.refused(Cable, body, "invalid_plan", "").await;
    }
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn amounts_outside_each_products_limits_are_refused_and_the_limits_pass() {
    let r = Refusals::start().await;
    for (kind, min, max) in [
        (Airtime, 50, 50_000),
        (Electricity, 1_000, 500_000),
        (Bet, 100, 500_000),
    ] {
        let amount = |value: Value| with(&r.base(kind), "amount", value);
        let below = min as f64 - 0.01;
        let above = max as f64 + 0.01;
        r.refused(kind, amount(json!(below)), "minimum_amount", "")
            .await;
        r.refused(kind, amount(json!(0)), "minimum_amount", "")
            .await;
        r.refused(kind, amount(json!(above)), "maximum_amount", "")
            .await;
        r.refused(kind, amount(json!(max * 10)), "maximum_amount", "")
            .await;
        for ok in [min, max] {
            let body = amount(json!(ok));
            let d = r.passes(kind, body.clone()).await;
            assert_test_reply(&d, &body, ok * 100, r.start);
        }
    }
    r.assert_nothing_changed().await;
}
