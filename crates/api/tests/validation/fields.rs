//! `validation_error`: a purchase body whose fields are missing, of the
//! wrong type or malformed, live and in test mode alike, naming the field;
//! and the boundaries of each rule, which pass.

use crate::app::Refusals;
use crate::kind::*;
use serde_json::{Value, json};

/// Each `(kind, field, bad value)` is refused naming `field`.
async fn each_refused(r: &Refusals, cases: &[(Kind, &str, Value)]) {
    for (kind, field, value) in cases {
        let body = with(&r.base(*kind), field, value.clone());
        r.refused(*kind, body, "validation_error", field).await;
    }
}

/// `(kind, field, each bad value)` as a list of single cases.
fn all_of(kind: Kind, field: &'static str, bad: Vec<Value>) -> Vec<(Kind, &'static str, Value)> {
    bad.into_iter().map(|v| (kind, field, v)).collect()
}

#[tokio::test]
async fn a_missing_required_field_is_refused_naming_it() {
    let r = Refusals::start().await;
    for kind in ALL {
        for field in kind.required_fields() {
            let body = without(&r.base(kind), field);
            r.refused(kind, body, "validation_error", field).await;
        }
    }
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_field_of_the_wrong_type_is_refused_naming_it() {
    let r = Refusals::start().await;
    let wrong_types = [
        (Airtime, "amount", json!("500")),
        (Airtime, "phone", json!(8031231234_u64)),
        (Airtime, "provider_id", json!(5)),
        (Airtime, "reference", json!(12345678901_u64)),
        (Electricity, "meter_type", json!("1")),
        (Electricity, "amount", json!(true)),
        (Electricity, "meter_number", json!(45012341234_u64)),
        (Epin, "quantity", json!("2")),
        (Epin, "denomination", json!("200")),
        (Education, "quantity", json!(1.5)),
        (Data, "plan_id", json!(["mtn-sme-1gb"])),
        (Bet, "amount", json!(null)),
        (Cable, "smartcard_number", json!(7023451234_u64)),
    ];
    each_refused(&r, &wrong_types).await;
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn an_amount_with_three_decimals_negative_or_not_a_number_is_refused() {
    let r = Refusals::start().await;
    for kind in [Airtime, Electricity, Bet] {
        let bad = vec![
            json!(1500.123),
            json!(-1500),
            json!(-0.5),
            json!("NaN"),
            json!(1000.001),
        ];
        each_refused(&r, &all_of(kind, "amount", bad)).await;
    }
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_malformed_phone_number_is_refused() {
    let r = Refusals::start().await;
    let bad = [
        "12345",
        "0803123123",
        "080312312345",
        "01031231234",
        "+08031231234",
        "2358031231234",
        "0803123123a",
        "0803--1231234",
        "",
    ];
    for kind in [Airtime, Data] {
        let bad = bad.iter().map(|b| json!(b)).collect();
        each_refused(&r, &all_of(kind, "phone", bad)).await;
    }
    let optional = [
        (Education, "phone", json!("12345")),
        (Cable, "phone", json!("0803")),
    ];
    each_refused(&r, &optional).await;
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_malformed_reference_is_refused() {
    let r = Refusals::start().await;
    let bad: Vec<Value> = [
        "abc1234".to_owned(),
        "x".repeat(101),
        "abcd efgh".to_owned(),
        "abcd\tefgh".to_owned(),
        "abcdefgh\u{7}".to_owned(),
        " abcdefgh".to_owned(),
        String::new(),
    ]
    .iter()
    .map(|b| json!(b))
    .collect();
    for kind in [Airtime, Electricity, Epin] {
        each_refused(&r, &all_of(kind, "reference", bad.clone())).await;
    }
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_bad_meter_type_or_meter_number_is_refused() {
    let r = Refusals::start().await;
    let types = vec![json!(0), json!(3), json!(-1), json!(256)];
    each_refused(&r, &all_of(Electricity, "meter_type", types)).await;
    let numbers = vec![
        json!("12345abc"),
        json!("1".repeat(21)),
        json!(""),
        json!("4501 2341"),
        json!("-4501234"),
    ];
    each_refused(&r, &all_of(Electricity, "meter_number", numbers)).await;
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_smartcard_number_of_the_wrong_length_or_not_digits_is_refused() {
    let r = Refusals::start().await;
    let bad = vec![
        json!("12345"),
        json!("1".repeat(21)),
        json!("70234a1234"),
        json!(""),
    ];
    each_refused(&r, &all_of(Cable, "smartcard_number", bad)).await;
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_quantity_out_of_range_is_refused() {
    let r = Refusals::start().await;
    let epins = vec![json!(0), json!(101), json!(-1)];
    each_refused(&r, &all_of(Epin, "quantity", epins)).await;
    let exams = vec![json!(0), json!(11), json!(-3)];
    each_refused(&r, &all_of(Education, "quantity", exams)).await;
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_denomination_the_provider_does_not_sell_is_refused() {
    let r = Refusals::start().await;
    let bad = vec![json!(150), json!(200.5), json!(0), json!(-200)];
    each_refused(&r, &all_of(Epin, "denomination", bad)).await;
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_customer_id_empty_blank_or_over_40_characters_is_refused() {
    let r = Refusals::start().await;
    let bad = vec![
        json!(""),
        json!("x".repeat(41)),
        json!("   "),
        json!("\u{a0}\u{200b}"),
    ];
    each_refused(&r, &all_of(Bet, "customer_id", bad)).await;
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn a_body_that_is_not_an_object_is_refused() {
    let r = Refusals::start().await;
    for kind in [Airtime, Data] {
        for path in [kind.live(), kind.test()] {
            r.app
                .post(&r.c.key, &path, &json!([1, 2]))
                .await
                .assert_error(422, "validation_error");
        }
    }
    r.assert_nothing_changed().await;
}

#[tokio::test]
async fn the_boundaries_of_each_rule_pass() {
    let r = Refusals::start().await;
    for (kind, field, ok) in [
        (Airtime, "reference", json!("abcdefgh")),
        (Airtime, "reference", json!("r".repeat(100))),
        (Electricity, "meter_number", json!("7")),
        (Electricity, "meter_number", json!("1".repeat(20))),
        (Electricity, "meter_type", json!(2)),
        (Cable, "smartcard_number", json!("702345")),
        (Cable, "smartcard_number", json!("7".repeat(20))),
        (Epin, "quantity", json!(1)),
        (Epin, "quantity", json!(100)),
        (Education, "quantity", json!(10)),
        (Bet, "customer_id", json!("x".repeat(40))),
        (Bet, "customer_id", json!("7")),
    ] {
        r.passes(kind, with(&r.base(kind), field, ok)).await;
    }
    r.assert_nothing_changed().await;
}
