//! How billpay's orders and VTpass's answers map onto each other: service
//! ids, request ids, the pay body, the outcome table of docs/suppliers.md,
//! delivered tokens and pins, verification answers.

use crate::shared::{AnswerLog, leading_number, misconfigured_status, token_digits};
use crate::*;
use serde_json::{Value, json};

/// VTpass's `serviceID` for one of our providers, or `None` where VTpass does
/// not sell it: recharge e-pins and betting (no such VTpass service), NECO and
/// NABTEB (not sold), JAMB (needs the candidate's profile ID, which our
/// education purchase does not carry).
pub fn service_id(product: Product, provider: &str) -> Option<String> {
    let telco = match provider {
        "9mobile" => "etisalat",
        "mtn" | "airtel" | "glo" => provider,
        _ => "",
    };
    match product {
        Product::Airtime if !telco.is_empty() => Some(telco.to_owned()),
        Product::Data if !telco.is_empty() => Some(format!("{telco}-data")),
        Product::Cable if matches!(provider, "dstv" | "gotv" | "startimes" | "showmax") => {
            Some(provider.to_owned())
        }
        Product::Electricity if provider == "aba-power" => Some("aba-electric".into()),
        Product::Electricity if provider.ends_with("-electric") => Some(provider.to_owned()),
        Product::Education if provider == "waec" => Some("waec".into()),
        _ => None,
    }
}

/// The `serviceID` an order goes to: the catalogue's `service_id` code
/// (`codes.vtpass.service_id`, formerly `vtpass_service_id`) names the
/// provider's own VTpass service (its airtime, cable, electricity or exam
/// service; `etisalat` for our `9mobile`), and data is that name plus
/// `-data`, as VTpass names them. `None` where VTpass does not sell it.
pub fn service_for(product: Product, provider: &str, codes: &SupplierCodes) -> Option<String> {
    let derived = service_id(product, provider)?;
    let named = codes.get("service_id").map(String::as_str);
    Some(match (named, product) {
        (None, _) => derived,
        (Some(name), Product::Data) => format!("{name}-data"),
        (Some(name), _) => name.to_owned(),
    })
}

/// A plan's `variation_code`: the catalogue's `variation_code` code
/// (`codes.vtpass.variation_code`), else our plan id.
pub fn variation_code(plan_id: &str, codes: &SupplierCodes) -> String {
    codes
        .get("variation_code")
        .cloned()
        .unwrap_or_else(|| plan_id.to_owned())
}

/// Our meter type (1 prepaid, 2 postpaid) as VTpass's `variation_code`/`type`.
pub(super) fn meter_variation(meter_type: u8) -> &'static str {
    if meter_type == 2 {
        "postpaid"
    } else {
        "prepaid"
    }
}

/// Our `request_id` for a reference code `BP` + Unix ms (13 digits) + 12
/// hex digits: the creation minute in Lagos time, then the code's digits. The
/// same code always gives the same id; two codes never give one id.
pub fn request_id(reference_code: &str) -> Result<String, SupplierError> {
    let bad = || SupplierError::Unavailable(format!("unexpected reference code {reference_code}"));
    let rest = reference_code.strip_prefix("BP").ok_or_else(bad)?;
    let millis: i64 = rest
        .get(..13)
        .and_then(|ms| ms.parse().ok())
        .ok_or_else(bad)?;
    // Africa/Lagos is UTC+1 all year (no daylight saving).
    let lagos = time::UtcOffset::from_hms(1, 0, 0).expect("valid offset");
    let created = time::OffsetDateTime::from_unix_timestamp_nanos(millis as i128 * 1_000_000)
        .map_err(|_| bad())?
        .to_offset(lagos);
    let stamp = created
        .format(time::macros::format_description!(
            "[year][month][day][hour][minute]"
        ))
        .map_err(|_| bad())?;
    Ok(format!("{stamp}{rest}"))
}

/// The reference code a `request_id` of ours was made from; `None` for one
/// we never made.
pub fn reference_code(ours: &str) -> Option<String> {
    let code = format!("BP{}", ours.get(12..)?);
    (request_id(&code).ok()? == ours).then_some(code)
}

/// The `/api/pay` body for an order.
pub(super) fn pay_request(order: &Order) -> Result<Value, SupplierError> {
    let service = service_for(order.product, &order.provider, &order.codes).ok_or_else(|| {
        SupplierError::Unavailable(format!(
            "VTpass does not sell {} from {}",
            order.product, order.provider
        ))
    })?;
    let details = &order.details;
    let plan_id = details.plan_id.as_deref().unwrap_or("");
    let variation = variation_code(plan_id, &order.codes);
    let phone = match details.phone.as_deref() {
        None | Some("") => order.recipient.clone(),
        Some(phone) => phone.to_owned(),
    };
    let mut body = json!({
        "request_id": request_id(&order.reference_code)?,
        "serviceID": service,
        "amount": order.amount.0 as f64 / 100.0,
        "phone": phone,
    });
    match order.product {
        Product::Data => {
            body["billersCode"] = json!(order.recipient);
            body["variation_code"] = json!(variation);
        }
        Product::Cable => {
            // We always sell a named bouquet, so it is a "change" to that
            // bouquet (a "renew" would charge VTpass's renewal amount instead).
            body["billersCode"] = json!(order.recipient);
            body["variation_code"] = json!(variation);
            if order.provider != "showmax" {
                body["subscription_type"] = json!("change");
                body["quantity"] = json!(1);
            }
        }
        Product::Electricity => {
            let meter_type = details.meter_type.unwrap_or(1);
            body["billersCode"] = json!(order.recipient);
            body["variation_code"] = json!(meter_variation(meter_type));
        }
        Product::Education => {
            body["variation_code"] = json!("waecdirect");
            body["quantity"] = json!(details.quantity.unwrap_or(1));
        }
        _ => {}
    }
    Ok(body)
}

/// Codes VTpass documents as "not processed, not charged" (or refusals before
/// any charge: bad arguments, unknown product or variation, amount limits,
/// our low float, account problems, wrong credentials). Only on `/api/pay`:
/// the same code on a requery says nothing about the purchase.
const NOT_CHARGED: [&str; 15] = [
    "091", "010", "011", "012", "013", "017", "018", "019", "021", "022", "023", "024", "030",
    "087", "040",
];

/// What an `/api/pay` answer means.
pub fn pay_outcome(order: &Order, http_status: u16, body: &Value) -> SupplierStatus {
    match code(http_status, body) {
        Some(code) if NOT_CHARGED.contains(&code) => SupplierStatus::Failed {
            reason: "the supplier did not accept it".into(),
        },
        _ => requery_outcome(order, http_status, body),
    }
}

/// What an `/api/requery` answer means (and the common part of `/api/pay`).
pub fn requery_outcome(order: &Order, http_status: u16, body: &Value) -> SupplierStatus {
    match code(http_status, body) {
        Some("000") => transaction_outcome(order, body),
        Some("016") => SupplierStatus::Failed {
            reason: "the supplier could not deliver it".into(),
        },
        Some("015") => SupplierStatus::Unknown,
        // 099 processing, 014 already received (requery tells), 044
        // resolved, 5xx, garbage, unknown codes: not final.
        _ => SupplierStatus::Pending,
    }
}

/// `code` of a 2xx JSON answer; a server error or garbage has none.
pub(super) fn code(http_status: u16, body: &Value) -> Option<&str> {
    if !(200..300).contains(&http_status) {
        return None;
    }
    body.get("code")?.as_str()
}

/// A `000` answer: the state is in `content.transactions.status`.
pub(super) fn transaction_outcome(order: &Order, body: &Value) -> SupplierStatus {
    match body["content"]["transactions"]["status"].as_str() {
        Some("delivered") => SupplierStatus::delivered(delivery(order.product, body))
            .at_cost(total_amount(&body["content"]["transactions"])),
        Some("failed" | "reversed") => SupplierStatus::Failed {
            reason: "the supplier could not deliver it".into(),
        },
        // initiated, pending, resolved or anything new.
        _ => SupplierStatus::Pending,
    }
}

/// What VTpass charged us: the transaction's `total_amount` (its `amount`
/// less our `commission`), a number or a numeric string in Naira; `None` when
/// absent or not an amount of Naira (never guessed from the commission). One
/// such as 96.99999999 (computed there) is rounded half-up to the kobo.
pub(super) fn total_amount(transaction: &Value) -> Option<Kobo> {
    crate::shared::amount(&transaction["total_amount"])
}

/// What a delivered purchase gives the customer, shaped as the sandbox's:
/// electricity `{pin: token, units}`, education `{pin, pins}`.
pub(super) fn delivery(product: Product, body: &Value) -> Delivery {
    match product {
        Product::Electricity => Delivery {
            pin: ["mainToken", "token", "purchased_code"]
                .iter()
                .find_map(|key| body[key].as_str().and_then(token_digits)),
            units: ["mainTokenUnits", "units"]
                .iter()
                .find_map(|key| leading_number(&body[key])),
            ..Delivery::default()
        },
        Product::Education => {
            let pins: Vec<String> = body["cards"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|card| card["Pin"].as_str().map(str::to_owned))
                .collect();
            Delivery::exam_pins(pins)
        }
        _ => Delivery::default(),
    }
}

/// A `/api/merchant-verify` answer: `content.Customer_Name` when found,
/// `content.error` when not; anything else is an outage.
pub(super) fn verification(http_status: u16, body: &Value) -> Result<Verification, SupplierError> {
    let content = &body["content"];
    if code(http_status, body) != Some("000") {
        return Err(unexpected("merchant-verify", body));
    }
    match content["Customer_Name"].as_str() {
        Some(name) if content.get("error").is_none() => Ok(Verification::Found {
            customer_name: name.trim().to_owned(),
            address: content["Address"].as_str().map(str::to_owned),
            current: current_bouquet(content),
        }),
        _ => Ok(Verification::NotFound),
    }
}

/// A DStv/GOtv smartcard's bouquet now: `Current_Bouquet` (its name),
/// `Current_Bouquet_Code` (one code, or several comma-separated: the
/// bouquet, then add-ons) and `Renewal_Amount` (a number in the docs' DStv
/// sample, text in others: both read).
fn current_bouquet(content: &Value) -> Option<CurrentPlan> {
    let name = content["Current_Bouquet"].as_str().map(str::trim)?;
    if name.is_empty() {
        return None;
    }
    let codes = content["Current_Bouquet_Code"]
        .as_str()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|code| !code.is_empty())
        .map(str::to_owned)
        .collect();
    Some(CurrentPlan {
        name: name.split_whitespace().collect::<Vec<_>>().join(" "),
        codes,
        renewal: crate::shared::amount(&content["Renewal_Amount"]).filter(|k| *k > Kobo::ZERO),
    })
}

pub(super) fn unreachable_error(path: &str, error: &reqwest::Error) -> SupplierError {
    // reqwest's message names the URL, never the headers.
    SupplierError::Unavailable(format!("VTpass {path}: {error}"))
}

pub(super) fn unexpected(what: &str, body: &Value) -> SupplierError {
    let code = body["code"].as_str().unwrap_or("none");
    let description = body["response_description"].as_str().unwrap_or("");
    SupplierError::Unavailable(format!(
        "VTpass {what}: unexpected answer (code {code} {description})"
    ))
}

/// A GET answer (balance, plan lists): its JSON, or why it is none. `087`
/// is VTpass refusing our keys; a 404, a redirect or a page that is not JSON
/// is a base URL that is not VTpass's API.
pub(super) fn read_get_answer(path: &str, status: u16, text: &str) -> Result<Value, SupplierError> {
    let body: Option<Value> = serde_json::from_str(text).ok().filter(Value::is_object);
    match body {
        Some(body) if body["code"] == "087" => Err(SupplierError::Refused(format!(
            "VTpass {path}: code 087 {}",
            body["response_description"].as_str().unwrap_or("")
        ))),
        Some(body) if (200..300).contains(&status) => Ok(body),
        Some(body) if !misconfigured_status(status) => Err(unexpected(path, &body)),
        _ if misconfigured_status(status) || (200..300).contains(&status) => {
            Err(SupplierError::NotThisSupplier(format!(
                "VTpass {path}: HTTP {status}, not VTpass's JSON"
            )))
        }
        _ => Err(SupplierError::Unavailable(format!(
            "VTpass {path}: HTTP {status}"
        ))),
    }
}

/// How a pay or requery answer is logged: `misconfigured` for refused keys
/// (`087`), a URL that is not VTpass's (404, redirects) or a 2xx page that
/// is not JSON; else the state VTpass gave.
pub(super) fn answer_log<'a>(call: &'a str, status: u16, body: &'a Value) -> AnswerLog<'a> {
    let code = body["code"].as_str().unwrap_or("none");
    let not_json = !body.is_object() && (200..300).contains(&status);
    let reading = if code == "087" || misconfigured_status(status) || not_json {
        "misconfigured"
    } else {
        body["content"]["transactions"]["status"]
            .as_str()
            .unwrap_or("no transaction state")
    };
    AnswerLog {
        supplier: "vtpass",
        call,
        http_status: status,
        code,
        description: body["response_description"].as_str().unwrap_or(""),
        reading,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(product: Product, provider: &str) -> Order {
        Order {
            reference_code: "BP1795312282123ABCDEF012345".into(),
            product,
            provider: provider.into(),
            recipient: "08011111111".into(),
            amount: Kobo(10_050),
            details: PurchaseDetails {
                phone: Some("08011111111".into()),
                plan_id: Some("mtn-10mb-100".into()),
                meter_type: Some(2),
                quantity: Some(2),
                ..PurchaseDetails::default()
            },
            codes: SupplierCodes::new(),
            supplier_reference: None,
            placed_at: None,
        }
    }

    fn codes(pairs: &[(&str, &str)]) -> SupplierCodes {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn request_id_is_lagos_minute_then_the_code() {
        // 1795312282123 ms is 2026-11-22 01:51:22 UTC, 02:51 in Lagos.
        assert_eq!(
            request_id("BP1795312282123ABCDEF012345").unwrap(),
            "2026112202511795312282123ABCDEF012345"
        );
        assert!(request_id("XX1").is_err());
        assert_eq!(
            reference_code("2026112202511795312282123ABCDEF012345").as_deref(),
            Some("BP1795312282123ABCDEF012345")
        );
        assert_eq!(
            reference_code("2026112202521795312282123ABCDEF012345"),
            None
        );
        assert_eq!(reference_code("x"), None);
    }

    #[test]
    fn pay_bodies_follow_the_docs() {
        let data = pay_request(&order(Product::Data, "9mobile")).unwrap();
        assert_eq!(data["serviceID"], "etisalat-data");
        assert_eq!(data["variation_code"], "mtn-10mb-100");
        assert_eq!(data["billersCode"], "08011111111");
        assert_eq!(data["amount"], 100.5);
        let power = pay_request(&order(Product::Electricity, "ikeja-electric")).unwrap();
        assert_eq!(power["variation_code"], "postpaid");
        let cable = pay_request(&order(Product::Cable, "dstv")).unwrap();
        assert_eq!(cable["subscription_type"], "change");
        let exam = pay_request(&order(Product::Education, "waec")).unwrap();
        assert_eq!(
            (exam["variation_code"].as_str(), exam["quantity"].as_u64()),
            (Some("waecdirect"), Some(2))
        );
        assert!(pay_request(&order(Product::Betting, "bet9ja")).is_err());
        // The catalogue's own VTpass codes win.
        let mut named = order(Product::Data, "mtn");
        named.codes = codes(&[("service_id", "mtn"), ("variation_code", "mtn-10mb-100")]);
        named.details.plan_id = Some("our-own-id".into());
        let body = pay_request(&named).unwrap();
        assert_eq!(
            (body["serviceID"].as_str(), body["variation_code"].as_str()),
            (Some("mtn-data"), Some("mtn-10mb-100"))
        );
        // The provider's one name serves its airtime and its data.
        let named = codes(&[("service_id", "etisalat")]);
        assert_eq!(
            service_for(Product::Airtime, "9mobile", &named).unwrap(),
            "etisalat"
        );
        assert_eq!(
            service_for(Product::Data, "9mobile", &named).unwrap(),
            "etisalat-data"
        );
        let mtn = codes(&[("service_id", "mtn")]);
        assert_eq!(service_for(Product::Epin, "mtn", &mtn), None);
        assert!(service_id(Product::Epin, "mtn").is_none());
        assert!(service_id(Product::Education, "jamb").is_none());
    }

    #[test]
    fn the_cost_is_total_amount_as_number_or_text() {
        let o = order(Product::Airtime, "mtn");
        let delivered = |total: Value| {
            json!({"code": "000", "content": {"transactions": {"status": "delivered",
                "amount": 100, "commission": 3, "total_amount": total}}})
        };
        let cost = |body: &Value| match pay_outcome(&o, 200, body) {
            SupplierStatus::Delivered { cost, .. } => cost,
            other => panic!("{other:?}"),
        };
        assert_eq!(cost(&delivered(json!(97))), Some(Kobo(9_700)));
        assert_eq!(cost(&delivered(json!(19.3))), Some(Kobo(1_930)));
        assert_eq!(cost(&delivered(json!("96.5"))), Some(Kobo(9_650)));
        // Absent or not an amount: unknown, never worked out from `commission`.
        assert_eq!(cost(&delivered(Value::Null)), None);
        assert_eq!(cost(&delivered(json!("n/a"))), None);
        assert_eq!(cost(&delivered(json!(-1))), None);
        // More than two decimals (computed there): half-up to the kobo,
        // read from the digits (0.285 × 100 is 28.4999… as a float).
        assert_eq!(cost(&delivered(json!(0.285))), Some(Kobo(29)));
        assert_eq!(cost(&delivered(json!("96.994"))), Some(Kobo(9_699)));
        assert_eq!(cost(&delivered(json!(96.99999999))), Some(Kobo(9_700)));
    }

    #[test]
    fn only_definite_failures_fail() {
        let o = order(Product::Airtime, "mtn");
        let tx =
            |status: &str| json!({"code": "000", "content": {"transactions": {"status": status}}});
        assert!(matches!(
            pay_outcome(&o, 200, &tx("delivered")),
            SupplierStatus::Delivered { .. }
        ));
        assert!(matches!(
            pay_outcome(&o, 200, &tx("failed")),
            SupplierStatus::Failed { .. }
        ));
        assert!(matches!(
            pay_outcome(&o, 200, &tx("reversed")),
            SupplierStatus::Failed { .. }
        ));
        assert_eq!(
            pay_outcome(&o, 200, &tx("pending")),
            SupplierStatus::Pending
        );
        assert_eq!(
            pay_outcome(&o, 200, &tx("initiated")),
            SupplierStatus::Pending
        );
        for code in ["016", "091", "087", "018"] {
            assert!(
                matches!(
                    pay_outcome(&o, 200, &json!({"code": code})),
                    SupplierStatus::Failed { .. }
                ),
                "{code}"
            );
        }
        for code in ["099", "014", "044", "123"] {
            assert_eq!(
                pay_outcome(&o, 200, &json!({"code": code})),
                SupplierStatus::Pending,
                "{code}"
            );
        }
        assert_eq!(pay_outcome(&o, 200, &Value::Null), SupplierStatus::Pending);
        assert_eq!(
            pay_outcome(&o, 502, &json!({"code": "016"})),
            SupplierStatus::Pending
        );
        // A refusal of the requery itself says nothing about the purchase.
        assert_eq!(
            requery_outcome(&o, 200, &json!({"code": "087"})),
            SupplierStatus::Pending
        );
        assert_eq!(
            requery_outcome(&o, 200, &json!({"code": "015"})),
            SupplierStatus::Unknown
        );
    }

    #[test]
    fn reads_tokens_units_and_pins() {
        let power = json!({"code": "000", "content": {"transactions": {"status": "delivered"}},
            "purchased_code": "Token : 42167939603201733524", "units": "79.9 kWh"});
        assert_eq!(
            delivery(Product::Electricity, &power),
            Delivery::token("4216-7939-6032-0173-3524".into(), Some(79.9))
        );
        let exam =
            json!({"cards": [{"Serial": "WRN1", "Pin": "111"}, {"Serial": "WRN2", "Pin": "222"}]});
        assert_eq!(
            delivery(Product::Education, &exam),
            Delivery::exam_pins(vec!["111".into(), "222".into()])
        );
    }

    #[test]
    fn a_smartcard_verification_carries_the_bouquet_now_in_either_form() {
        // DStv: several codes (bouquet, then add-on), the amount a number
        let dstv = json!({"code": "000", "content": {
            "Customer_Name": "TEST METER", "Status": "ACTIVE",
            "Current_Bouquet": "DStv  Compact N12400 + ExtraView Access N5000",
            "Current_Bouquet_Code": "dstv-compact, extraview",
            "Renewal_Amount": 17400,
        }});
        let Verification::Found { current, .. } = verification(200, &dstv).unwrap() else {
            panic!("found");
        };
        assert_eq!(
            current,
            Some(CurrentPlan {
                name: "DStv Compact N12400 + ExtraView Access N5000".into(),
                codes: vec!["dstv-compact".into(), "extraview".into()],
                renewal: Some(Kobo(1_740_000)),
            })
        );
        // GOtv: no code, the amount text
        let gotv = json!({"code": "000", "content": {
            "Customer_Name": "ADA OBI", "Current_Bouquet": "GOtv Jolli", "Renewal_Amount": "4,850.00",
        }});
        let Verification::Found { current, .. } = verification(200, &gotv).unwrap() else {
            panic!("found");
        };
        let current = current.unwrap();
        assert_eq!(
            (current.codes.len(), current.renewal),
            (0, Some(Kobo(485_000)))
        );
        // a meter: none
        let meter = json!({"code": "000", "content": {"Customer_Name": "X", "Address": "1 Road"}});
        let Verification::Found { current, .. } = verification(200, &meter).unwrap() else {
            panic!("found");
        };
        assert_eq!(current, None);
    }
}
