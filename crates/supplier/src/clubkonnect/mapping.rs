//! How billpay's orders and ClubKonnect's answers map onto each other: its
//! network, company, package and exam codes, the query parameters of each
//! purchase, the outcome table of docs/suppliers.md, what a delivered order
//! gave (token, exam pins, e-pin cards), verification answers.
//!
//! ClubKonnect's documentation is not public; this follows the facts several
//! independent public clients agree on (../shared/design/integrations.md),
//! and reads both forms where they differ (`statuscode` as text or number,
//! e-pins under `TXN_EPIN` or `carddetails`, `customer_name` spellings).

use crate::shared::{AnswerLog, amount, leading_number, misconfigured_status, token_digits};
use crate::*;
use billpay_domain::EpinCard;
use serde_json::Value;

/// A call to ClubKonnect: its endpoint (`APIAirtimeV1.asp`) and its query
/// parameters other than `UserID` and `APIKey`.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub endpoint: &'static str,
    pub params: Vec<(&'static str, String)>,
}

impl Call {
    pub fn new(endpoint: &'static str) -> Call {
        Call {
            endpoint,
            params: Vec::new(),
        }
    }

    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Call {
        self.params.push((name, value.into()));
        self
    }

    /// The value of one parameter (tests and logs).
    pub fn param(&self, name: &str) -> Option<&str> {
        let found = self.params.iter().find(|(n, _)| *n == name);
        found.map(|(_, v)| v.as_str())
    }
}

/// ClubKonnect's `MobileNetwork` for a telco: 01 MTN, 02 Glo, 03 9mobile,
/// 04 Airtel (the catalogue's `codes.clubkonnect.network` wins).
pub fn network(provider: &str, codes: &SupplierCodes) -> Option<String> {
    let derived = match provider {
        "mtn" => "01",
        "glo" => "02",
        "9mobile" => "03",
        "airtel" => "04",
        _ => return codes.get("network").cloned(),
    };
    Some(
        codes
            .get("network")
            .cloned()
            .unwrap_or_else(|| derived.into()),
    )
}

/// `ElectricCompany` for a distribution company (01 Eko … 12 Aba; the
/// catalogue's `codes.clubkonnect.company` wins).
pub fn electric_company(provider: &str, codes: &SupplierCodes) -> Option<String> {
    const COMPANIES: [&str; 12] = [
        "eko-electric",
        "ikeja-electric",
        "abuja-electric",
        "kano-electric",
        "portharcourt-electric",
        "jos-electric",
        "ibadan-electric",
        "kaduna-electric",
        "enugu-electric",
        "benin-electric",
        "yola-electric",
        "aba-power",
    ];
    let derived = COMPANIES.iter().position(|c| *c == provider);
    codes
        .get("company")
        .cloned()
        .or_else(|| derived.map(|i| format!("{:02}", i + 1)))
}

/// `CableTV`: dstv, gotv or startimes (`codes.clubkonnect.cable_tv` wins).
fn cable_tv(provider: &str, codes: &SupplierCodes) -> Option<String> {
    let derived = matches!(provider, "dstv" | "gotv" | "startimes").then(|| provider.to_owned());
    codes.get("cable_tv").cloned().or(derived)
}

/// `ExamType`: `waecdirect` for WAEC, `utme` (or `de`) for JAMB.
fn exam_type(provider: &str, codes: &SupplierCodes) -> Option<String> {
    let derived = match provider {
        "waec" => "waecdirect",
        "jamb" => "utme",
        _ => return codes.get("exam_type").cloned(),
    };
    Some(
        codes
            .get("exam_type")
            .cloned()
            .unwrap_or_else(|| derived.into()),
    )
}

/// `BettingCompany`: the catalogue's `codes.clubkonnect.company`, else our slug.
fn betting_company(provider: &str, codes: &SupplierCodes) -> String {
    codes
        .get("company")
        .cloned()
        .unwrap_or_else(|| provider.to_owned())
}

/// Whether ClubKonnect sells `product` from `provider` (with the codes it
/// derives; NECO, NABTEB and Showmax are not among its products).
pub fn sells(product: Product, provider: &str) -> bool {
    let none = SupplierCodes::new();
    match product {
        Product::Airtime | Product::Data | Product::Epin => network(provider, &none).is_some(),
        Product::Cable => cable_tv(provider, &none).is_some(),
        Product::Electricity => electric_company(provider, &none).is_some(),
        Product::Education => exam_type(provider, &none).is_some(),
        Product::Betting => true,
    }
}

/// A plan's code at ClubKonnect (`DataPlan`, `Package`): the catalogue's
/// `codes.clubkonnect.plan`, else our plan id.
pub fn plan_code(plan_id: &str, codes: &SupplierCodes) -> String {
    codes
        .get("plan")
        .cloned()
        .unwrap_or_else(|| plan_id.to_owned())
}

/// Naira as ClubKonnect takes them: `500`, or `500.50`.
fn naira(amount: Kobo) -> String {
    if amount.0 % 100 == 0 {
        (amount.0 / 100).to_string()
    } else {
        format!("{}.{:02}", amount.0 / 100, amount.0 % 100)
    }
}

/// The purchase call for an order, `Err(why)` when ClubKonnect cannot sell
/// it as asked (then nothing is sent: a definite failure, not charged).
pub fn purchase_call(order: &Order) -> Result<Call, String> {
    let not_sold = || {
        format!(
            "ClubKonnect does not sell {} from {}",
            order.product, order.provider
        )
    };
    let (codes, details) = (&order.codes, &order.details);
    let phone = details.phone.clone().unwrap_or_default();
    let call = match order.product {
        Product::Airtime => Call::new("APIAirtimeV1.asp")
            .with(
                "MobileNetwork",
                network(&order.provider, codes).ok_or_else(not_sold)?,
            )
            .with("Amount", naira(order.amount))
            .with("MobileNumber", &order.recipient),
        Product::Data => Call::new("APIDatabundleV1.asp")
            .with(
                "MobileNetwork",
                network(&order.provider, codes).ok_or_else(not_sold)?,
            )
            // Its DataPlan codes ("1000.0") are never our plan ids: named or not sold.
            .with("DataPlan", codes.get("plan").cloned().ok_or_else(not_sold)?)
            .with("MobileNumber", &order.recipient),
        Product::Cable => Call::new("APICableTVV1.asp")
            .with(
                "CableTV",
                cable_tv(&order.provider, codes).ok_or_else(not_sold)?,
            )
            .with(
                "Package",
                plan_code(details.plan_id.as_deref().unwrap_or(""), codes),
            )
            .with("SmartCardNo", &order.recipient)
            .with("PhoneNo", phone),
        Product::Electricity => Call::new("APIElectricityV1.asp")
            .with(
                "ElectricCompany",
                electric_company(&order.provider, codes).ok_or_else(not_sold)?,
            )
            .with(
                "MeterType",
                format!("{:02}", details.meter_type.unwrap_or(1)),
            )
            .with("MeterNo", &order.recipient)
            .with("Amount", naira(order.amount))
            .with("PhoneNo", phone),
        Product::Education => education_call(order, phone)?,
        Product::Betting => Call::new("APIBettingV1.asp")
            .with("BettingCompany", betting_company(&order.provider, codes))
            .with("CustomerID", &order.recipient)
            .with("Amount", naira(order.amount)),
        Product::Epin => Call::new("APIEPINV1.asp")
            .with(
                "MobileNetwork",
                network(&order.provider, codes).ok_or_else(not_sold)?,
            )
            .with("Value", naira(details.denomination.unwrap_or(Kobo::ZERO)))
            .with("Quantity", details.quantity.unwrap_or(1).to_string()),
    };
    Ok(call.with("RequestID", &order.reference_code))
}

/// WAEC (`APIWAECV1.asp`, one pin per order) or JAMB (`APIJAMBV1.asp`, the
/// candidate's profile ID).
fn education_call(order: &Order, phone: String) -> Result<Call, String> {
    let exam = exam_type(&order.provider, &order.codes)
        .ok_or_else(|| format!("ClubKonnect does not sell {} pins", order.provider))?;
    let quantity = order.details.quantity.unwrap_or(1);
    if quantity != 1 {
        return Err(format!(
            "ClubKonnect sells one {} pin per order, not {quantity}",
            order.provider
        ));
    }
    if order.provider == "jamb" {
        let profile_id = order
            .details
            .profile_id
            .clone()
            .ok_or("a JAMB pin needs the candidate's profile_id")?;
        return Ok(Call::new("APIJAMBV1.asp")
            .with("ExamType", exam)
            .with("PhoneNo", phone)
            .with("ProfileID", profile_id));
    }
    Ok(Call::new("APIWAECV1.asp")
        .with("ExamType", exam)
        .with("PhoneNo", phone))
}

/// The verification call for a customer number.
pub fn verify_call(request: &VerifyRequest) -> Option<Call> {
    let (provider, codes) = (request.provider.as_str(), &request.codes);
    Some(match request.product {
        Product::Cable => Call::new("APIVerifyCableTVV1.0.asp")
            .with("CableTV", cable_tv(provider, codes)?)
            .with("SmartCardNo", &request.number),
        Product::Electricity => Call::new("APIVerifyElectricityV1.asp")
            .with("ElectricCompany", electric_company(provider, codes)?)
            .with("MeterNo", &request.number)
            .with(
                "MeterType",
                format!("{:02}", request.meter_type.unwrap_or(1)),
            ),
        Product::Betting => Call::new("APIVerifyBettingV1.asp")
            .with("BettingCompany", betting_company(provider, codes))
            .with("CustomerID", &request.number),
        Product::Education => Call::new("APIVerifyJAMBV1.asp")
            .with("ExamType", exam_type(provider, codes)?)
            .with("ProfileID", &request.number),
        _ => return None,
    })
}

/// `statuscode`, as text or a number.
fn status_code(body: &Value) -> Option<u16> {
    let code = body.get("statuscode").or(body.get("StatusCode"))?;
    code.as_u64()
        .map(|c| c as u16)
        .or_else(|| code.as_str()?.trim().parse().ok())
}

fn status_text(body: &Value) -> String {
    let text = body["status"].as_str().or(body["orderstatus"].as_str());
    text.unwrap_or("").trim().to_uppercase()
}

/// Our credentials refused, however it is written.
fn credentials_refused(body: &Value) -> bool {
    let status = status_text(body);
    let named = [
        "CREDENTIALS",
        "MISSING_USERID",
        "MISSING_APIKEY",
        "INVALID_USERID",
        "INVALID_APIKEY",
    ];
    named.iter().any(|n| status.contains(n))
        || status_code(body).is_some_and(|c| (400..=403).contains(&c))
}

/// A query about a RequestID ClubKonnect never received.
fn never_received(body: &Value) -> bool {
    let status = status_text(body);
    [
        "INVALID_REQUESTID",
        "INVALID_ORDERID",
        "ORDER_NOT_FOUND",
        "REQUESTID_NOT_FOUND",
    ]
    .contains(&status.as_str())
}

/// How an answer reads, before what it means for the order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    /// `200` (or e-pin cards in hand).
    Completed,
    /// `100`/`199`/`201`/`300`/`399`/`6xx` but `602`: they keep trying.
    OnHold,
    /// `4xx` but the credentials': refused, not charged.
    Refused,
    /// `5xx`: cancelled, money returned.
    Cancelled,
    /// `602`: credited back.
    CreditedBack,
    /// Query: no such RequestID there.
    NeverReceived,
    /// Credentials refused, a URL that is not ClubKonnect's, a page that is
    /// not JSON: billpay's setup, never the order's fate.
    Misconfigured,
    /// `299`, an outage page, unknown codes: requery, never refund.
    Unknown,
}

impl Reading {
    pub fn name(self) -> &'static str {
        match self {
            Reading::Completed => "completed",
            Reading::OnHold => "on hold",
            Reading::Refused => "refused",
            Reading::Cancelled => "cancelled",
            Reading::CreditedBack => "credited back",
            Reading::NeverReceived => "never received",
            Reading::Misconfigured => "misconfigured",
            Reading::Unknown => "unknown",
        }
    }
}

/// Reads an answer (`body` is `null` when it was not JSON).
pub fn read(http_status: u16, body: &Value) -> Reading {
    let json = body.is_object();
    if misconfigured_status(http_status) || ((200..300).contains(&http_status) && !json) {
        return Reading::Misconfigured;
    }
    if !(200..300).contains(&http_status) || !json {
        return Reading::Unknown;
    }
    if credentials_refused(body) {
        return Reading::Misconfigured;
    }
    if never_received(body) {
        return Reading::NeverReceived;
    }
    match status_code(body) {
        Some(200) => Reading::Completed,
        Some(100 | 199 | 201 | 300 | 399) => Reading::OnHold,
        Some(602) => Reading::CreditedBack,
        Some(600..=699) => Reading::OnHold,
        Some(404..=499) => Reading::Refused,
        Some(500..=599) => Reading::Cancelled,
        Some(_) => Reading::Unknown,
        // E-pins answer with the cards and no status code.
        None if !cards(body).is_empty() => Reading::Completed,
        None => match status_text(body).as_str() {
            "ORDER_RECEIVED" | "ORDER_PROCESSED" | "ORDER_ONHOLD" => Reading::OnHold,
            "ORDER_ERROR" => Reading::Refused,
            "ORDER_CANCELLED" => Reading::Cancelled,
            _ => Reading::Unknown,
        },
    }
}

/// What an answer means for `order` (`query`: an answer to the query by
/// RequestID, where "never received" means buy now).
pub fn outcome(order: &Order, reading: Reading, body: &Value, query: bool) -> SupplierStatus {
    let remark = body["remark"]
        .as_str()
        .or(body["orderremark"].as_str())
        .unwrap_or("");
    match reading {
        Reading::Completed => match delivery(order, body) {
            // ClubKonnect's answers do not state what it charged us: cost unknown.
            Some(result) => SupplierStatus::delivered(result),
            // Completed but the pins are not in this answer: ask again.
            None => SupplierStatus::Pending,
        },
        Reading::Refused => SupplierStatus::Failed {
            reason: refusal("the supplier refused the order", remark),
        },
        Reading::Cancelled | Reading::CreditedBack => SupplierStatus::Failed {
            reason: refusal("the supplier cancelled the order", remark),
        },
        Reading::NeverReceived if query => SupplierStatus::Unknown,
        _ => SupplierStatus::Pending,
    }
}

fn refusal(what: &str, remark: &str) -> String {
    let remark: String = remark
        .chars()
        .filter(|c| !c.is_control())
        .take(80)
        .collect();
    if remark.trim().is_empty() {
        what.to_owned()
    } else {
        format!("{what} ({})", remark.trim().to_lowercase())
    }
}

/// What a completed order gave the customer; `None` when pins were bought
/// and the answer carries none (or fewer than bought).
pub fn delivery(order: &Order, body: &Value) -> Option<Delivery> {
    let wanted = order.details.quantity.unwrap_or(1).max(1) as usize;
    match order.product {
        Product::Electricity => {
            let token = ["metertoken", "MeterToken", "token", "Token"]
                .iter()
                .find_map(|key| body[key].as_str().filter(|t| !t.trim().is_empty()))?;
            let units = ["units", "Units", "unit"]
                .iter()
                .find_map(|key| leading_number(&body[key]));
            Some(Delivery::token(
                token_digits(token).unwrap_or_else(|| token.trim().to_owned()),
                units,
            ))
        }
        Product::Education => {
            let pins: Vec<String> = cards(body).into_iter().map(|card| card.pin).collect();
            (pins.len() >= wanted).then(|| Delivery::exam_pins(pins))
        }
        Product::Epin => {
            let cards = cards(body);
            (cards.len() >= wanted).then(|| Delivery::epins(cards))
        }
        _ => Some(Delivery::default()),
    }
}

/// The cards (pin, serial) in an answer: `TXN_EPIN` (e-pins) or
/// `carddetails` (a list of cards, or text such as `Serial No:WRN1, Pin:1234`).
pub fn cards(body: &Value) -> Vec<EpinCard> {
    let list = ["TXN_EPIN", "txn_epin", "carddetails", "cards"]
        .iter()
        .find_map(|key| body[key].as_array());
    if let Some(list) = list {
        return list.iter().filter_map(card).collect();
    }
    body["carddetails"]
        .as_str()
        .map(cards_in_text)
        .unwrap_or_default()
}

fn card(value: &Value) -> Option<EpinCard> {
    let text = |keys: &[&str]| {
        keys.iter().find_map(|key| match &value[key] {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    Some(EpinCard {
        pin: text(&["pin", "Pin", "PIN"])?,
        serial: text(&["sno", "serial", "Serial", "SerialNo", "serial_no"]).unwrap_or_default(),
        expires_on: text(&["expirydate", "expiry", "expires_on"]).unwrap_or_else(a_year_from_today),
    })
}

/// `Serial No:WRN1, Pin:1234 | Serial No:WRN2, Pin:5678` (also one per line).
fn cards_in_text(text: &str) -> Vec<EpinCard> {
    text.split(['|', '\n', ';'])
        .filter_map(|part| {
            Some(EpinCard {
                pin: labelled(part, "pin")?,
                serial: labelled(part, "serial").unwrap_or_default(),
                expires_on: a_year_from_today(),
            })
        })
        .collect()
}

/// The word after `label …:` in `part` (`Serial No:WRN1` → `WRN1`).
fn labelled(part: &str, label: &str) -> Option<String> {
    let at = part.to_ascii_lowercase().find(label)?;
    let rest = &part[at..];
    let value = rest[rest.find(':')? + 1..].trim_start();
    let value: String = value
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect();
    (!value.is_empty()).then_some(value)
}

/// Printed cards stay loadable for a year when the answer names no date.
fn a_year_from_today() -> String {
    (time::OffsetDateTime::now_utc().date() + time::Duration::days(365)).to_string()
}

/// A verification answer: `customer_name` when found; a name that says
/// "invalid" or "error" is not found.
pub fn verification(http_status: u16, body: &Value) -> Result<Verification, SupplierError> {
    if body.is_object() && credentials_refused(body) {
        return Err(SupplierError::Refused("ClubKonnect verification".into()));
    }
    if !(200..300).contains(&http_status) || !body.is_object() {
        return Err(SupplierError::Unavailable(format!(
            "ClubKonnect verification: HTTP {http_status}, no JSON answer"
        )));
    }
    let name = ["customer_name", "Customer_Name", "customername", "name"]
        .iter()
        .find_map(|key| body[key].as_str())
        .unwrap_or("")
        .trim();
    let upper = name.to_uppercase();
    let refused = ["INVALID", "ERROR", "NOT FOUND", "NOT_FOUND"]
        .iter()
        .any(|w| upper.contains(w));
    if name.is_empty() || refused {
        return Ok(Verification::NotFound);
    }
    let address = body["customer_address"]
        .as_str()
        .or(body["address"].as_str());
    Ok(Verification::Found {
        customer_name: name.to_owned(),
        address: address.map(str::to_owned),
        // ClubKonnect's verify answers the name (and a meter's address) only
        current: None,
    })
}

/// Our float (`APIWalletBalanceV1.asp`: `balance`, e.g. `"12,345.67"`).
pub fn balance(http_status: u16, body: &Value) -> Result<Kobo, SupplierError> {
    if body.is_object() && credentials_refused(body) {
        return Err(SupplierError::Refused(format!(
            "ClubKonnect balance: {}",
            status_text(body)
        )));
    }
    let found = body.get("balance").or(body.get("Balance")).and_then(amount);
    match found {
        Some(kobo) if (200..300).contains(&http_status) => Ok(kobo),
        _ if (500..600).contains(&http_status) && !misconfigured_status(http_status) => Err(
            SupplierError::Unavailable(format!("ClubKonnect balance: HTTP {http_status}")),
        ),
        _ => Err(SupplierError::NotThisSupplier(format!(
            "ClubKonnect balance: HTTP {http_status}, no balance in the answer"
        ))),
    }
}

/// The plans of one network or cable service in a plan or package list
/// (`APIDatabundlePlansV2.asp`, `APICableTVPackagesV2.asp`): every list
/// under the answer whose `ID` is `id` (a network code or `dstv`…),
/// its `PRODUCT` entries.
pub fn plan_list(body: &Value, id: &str) -> Vec<SupplierPlan> {
    let mut plans = Vec::new();
    collect_plans(body, id, &mut plans);
    plans
}

fn collect_plans(value: &Value, id: &str, out: &mut Vec<SupplierPlan>) {
    match value {
        Value::Object(map) => {
            let matches = map
                .get("ID")
                .and_then(Value::as_str)
                .is_some_and(|own| own.eq_ignore_ascii_case(id));
            if let (true, Some(products)) = (matches, map.get("PRODUCT").and_then(Value::as_array))
            {
                out.extend(products.iter().filter_map(offered_plan));
                return;
            }
            map.values().for_each(|v| collect_plans(v, id, out));
        }
        Value::Array(list) => list.iter().for_each(|v| collect_plans(v, id, out)),
        _ => {}
    }
}

fn offered_plan(value: &Value) -> Option<SupplierPlan> {
    let first = |keys: &[&str]| keys.iter().find_map(|key| value.get(*key)).cloned();
    let code = first(&["PRODUCT_ID", "PACKAGE_ID", "dataplan_id"])?;
    let code = code
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| code.to_string());
    let name = first(&["PRODUCT_NAME", "PACKAGE_NAME", "plan_name"]).unwrap_or_default();
    let price = amount(&first(&[
        "PRODUCT_AMOUNT",
        "PACKAGE_AMOUNT",
        "plan_amount",
    ])?)?;
    Some(SupplierPlan {
        code,
        name: name.as_str().unwrap_or_default().to_owned(),
        price,
        traits: None,
    })
}

/// Whether `request_id` can be one of our reference codes (`BP` and 25
/// letters or digits): a callback naming anything else is ignored.
pub fn reference_code(request_id: &str) -> Option<String> {
    let id = request_id.trim();
    let ours = id.len() == 27
        && id.starts_with("BP")
        && id[2..].bytes().all(|b| b.is_ascii_alphanumeric());
    ours.then(|| id.to_owned())
}

/// `statuscode` as written (text or number), `none` without one: for logs.
pub fn code_text(body: &Value) -> String {
    match body.get("statuscode").or(body.get("StatusCode")) {
        Some(Value::String(code)) => code.clone(),
        Some(Value::Number(code)) => code.to_string(),
        _ => "none".into(),
    }
}

/// How an answer is logged.
pub fn answer_log<'a>(
    call: &'a str,
    http_status: u16,
    body: &'a Value,
    code: &'a str,
    reading: Reading,
) -> AnswerLog<'a> {
    AnswerLog {
        supplier: "clubkonnect",
        call,
        http_status,
        code,
        description: body["status"].as_str().unwrap_or(""),
        reading: reading.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CODE: &str = "BP1795312282123ABCDEF012345";

    fn order(product: Product, provider: &str) -> Order {
        Order {
            reference_code: CODE.into(),
            product,
            provider: provider.into(),
            recipient: "08011111111".into(),
            amount: Kobo(10_050),
            details: PurchaseDetails {
                phone: Some("08022222222".into()),
                plan_id: Some("mtn-sme-1gb".into()),
                meter_type: Some(2),
                quantity: Some(1),
                denomination: Some(Kobo(10_000)),
                profile_id: Some("1234567890".into()),
                ..PurchaseDetails::default()
            },
            codes: SupplierCodes::new(),
            supplier_reference: None,
            placed_at: None,
        }
    }

    fn with_codes(mut order: Order, pairs: &[(&str, &str)]) -> Order {
        order.codes = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        order
    }

    #[test]
    fn purchase_calls_follow_the_public_clients() {
        let airtime = purchase_call(&order(Product::Airtime, "9mobile")).unwrap();
        assert_eq!(airtime.endpoint, "APIAirtimeV1.asp");
        assert_eq!(
            (
                airtime.param("MobileNetwork"),
                airtime.param("Amount"),
                airtime.param("MobileNumber")
            ),
            (Some("03"), Some("100.50"), Some("08011111111"))
        );
        assert_eq!(airtime.param("RequestID"), Some(CODE), "our code itself");
        // Data needs the catalogue's plan code there.
        assert!(purchase_call(&order(Product::Data, "mtn")).is_err());
        let data = purchase_call(&with_codes(
            order(Product::Data, "mtn"),
            &[("plan", "1000.0")],
        ))
        .unwrap();
        assert_eq!(
            (data.param("MobileNetwork"), data.param("DataPlan")),
            (Some("01"), Some("1000.0"))
        );
        let power = purchase_call(&order(Product::Electricity, "ikeja-electric")).unwrap();
        assert_eq!(
            (power.param("ElectricCompany"), power.param("MeterType")),
            (Some("02"), Some("02"))
        );
        let cable = purchase_call(&order(Product::Cable, "gotv")).unwrap();
        assert_eq!(
            (cable.param("CableTV"), cable.param("Package")),
            (Some("gotv"), Some("mtn-sme-1gb"))
        );
        let bet = purchase_call(&order(Product::Betting, "bet9ja")).unwrap();
        assert_eq!(
            (bet.endpoint, bet.param("BettingCompany")),
            ("APIBettingV1.asp", Some("bet9ja"))
        );
        let epin = purchase_call(&order(Product::Epin, "airtel")).unwrap();
        assert_eq!(
            (epin.param("Value"), epin.param("Quantity")),
            (Some("100"), Some("1"))
        );
        let jamb = purchase_call(&order(Product::Education, "jamb")).unwrap();
        assert_eq!(
            (
                jamb.endpoint,
                jamb.param("ExamType"),
                jamb.param("ProfileID")
            ),
            ("APIJAMBV1.asp", Some("utme"), Some("1234567890"))
        );
        let waec = purchase_call(&order(Product::Education, "waec")).unwrap();
        assert_eq!(
            (waec.endpoint, waec.param("ExamType")),
            ("APIWAECV1.asp", Some("waecdirect"))
        );
        let mut two = order(Product::Education, "waec");
        two.details.quantity = Some(2);
        assert!(purchase_call(&two).is_err(), "one pin per order");
        assert!(purchase_call(&order(Product::Education, "neco")).is_err());
        assert!(purchase_call(&order(Product::Cable, "showmax")).is_err());
        assert!(!sells(Product::Cable, "showmax") && sells(Product::Betting, "msport"));
    }

    fn status(order: &Order, http: u16, body: Value, query: bool) -> SupplierStatus {
        outcome(order, read(http, &body), &body, query)
    }

    #[test]
    fn the_outcome_table() {
        let o = order(Product::Airtime, "mtn");
        let coded = |code: Value| json!({"orderid": "789", "statuscode": code, "status": "X"});
        assert!(matches!(
            status(&o, 200, coded(json!("200")), false),
            SupplierStatus::Delivered { .. }
        ));
        assert!(matches!(
            status(&o, 200, coded(json!(200)), false),
            SupplierStatus::Delivered { .. }
        ));
        for pending in [
            "100", "199", "201", "300", "399", "600", "601", "699", "299", "123", "999",
        ] {
            assert_eq!(
                status(&o, 200, coded(json!(pending)), false),
                SupplierStatus::Pending,
                "{pending}"
            );
        }
        for failed in ["404", "417", "499", "500", "509", "521", "602"] {
            assert!(
                matches!(
                    status(&o, 200, coded(json!(failed)), false),
                    SupplierStatus::Failed { .. }
                ),
                "{failed}"
            );
        }
        // Credentials refused, HTML pages, outages, wrong URLs: never a refund.
        for (http, body) in [
            (200, json!({"status": "INVALID_CREDENTIALS"})),
            (200, coded(json!("400"))),
            (200, coded(json!("403"))),
            (200, Value::Null),
            (503, Value::Null),
            (502, coded(json!("500"))),
            (404, Value::Null),
            (200, json!({"status": "SOMETHING_NEW"})),
        ] {
            assert_eq!(
                status(&o, http, body.clone(), false),
                SupplierStatus::Pending,
                "{http} {body}"
            );
            assert_eq!(
                status(&o, http, body.clone(), true),
                SupplierStatus::Pending,
                "{http} {body}"
            );
        }
        assert_eq!(
            read(200, &json!({"status": "INVALID_CREDENTIALS"})),
            Reading::Misconfigured
        );
        assert_eq!(read(404, &Value::Null), Reading::Misconfigured);
        assert_eq!(read(503, &Value::Null), Reading::Unknown);
        // A query about an order they never received: buy now.
        let never = json!({"status": "INVALID_REQUESTID"});
        assert_eq!(
            status(&o, 200, never.clone(), true),
            SupplierStatus::Unknown
        );
        assert_eq!(status(&o, 200, never, false), SupplierStatus::Pending);
        // Without a code, the status name.
        assert_eq!(
            status(&o, 200, json!({"status": "ORDER_RECEIVED"}), false),
            SupplierStatus::Pending
        );
        assert!(matches!(
            status(&o, 200, json!({"status": "ORDER_CANCELLED"}), true),
            SupplierStatus::Failed { .. }
        ));
    }

    #[test]
    fn reads_tokens_pins_and_cards() {
        let power = order(Product::Electricity, "eko-electric");
        let body = json!({"statuscode": "200", "metertoken": "Token: 4216 7939 6032 0173 3524", "units": "79.9 kWh"});
        assert_eq!(
            delivery(&power, &body),
            Some(Delivery::token(
                "4216-7939-6032-0173-3524".into(),
                Some(79.9)
            ))
        );
        assert_eq!(
            delivery(&power, &json!({"statuscode": "200"})),
            None,
            "no token yet"
        );
        let mut epins = order(Product::Epin, "mtn");
        epins.details.quantity = Some(2);
        let body = json!({"TXN_EPIN": [
            {"transactionid": "1", "mobilenetwork": "MTN", "sno": "SN1", "pin": "1111", "amount": "100"},
            {"transactionid": "2", "mobilenetwork": "MTN", "sno": "SN2", "pin": "2222", "amount": "100"}]});
        assert_eq!(read(200, &body), Reading::Completed);
        let cards = delivery(&epins, &body).unwrap();
        let got: Vec<(&str, &str)> = cards
            .cards()
            .map(|c| (c.serial.as_str(), c.pin.as_str()))
            .collect();
        assert_eq!(got, [("SN1", "1111"), ("SN2", "2222")]);
        let carddetails =
            json!({"statuscode": "200", "carddetails": [{"serial": "SN1", "pin": "1111"}]});
        assert_eq!(
            delivery(&epins, &carddetails),
            None,
            "fewer cards than bought"
        );
        let waec = order(Product::Education, "waec");
        let text = json!({"statuscode": "200", "carddetails": "Serial No:WRN123456789, pin: 012345678912"});
        assert_eq!(
            delivery(&waec, &text),
            Some(Delivery::exam_pins(vec!["012345678912".into()]))
        );
    }

    #[test]
    fn verifications_balances_and_plan_lists() {
        assert_eq!(
            verification(200, &json!({"customer_name": "ADA OBI"})).unwrap(),
            Verification::Found {
                customer_name: "ADA OBI".into(),
                address: None,
                current: None,
            }
        );
        for body in [
            json!({"customer_name": "INVALID_SMARTCARDNO"}),
            json!({"customer_name": "Error: not found"}),
            json!({}),
        ] {
            assert_eq!(
                verification(200, &body).unwrap(),
                Verification::NotFound,
                "{body}"
            );
        }
        assert!(matches!(
            verification(200, &json!({"status": "INVALID_CREDENTIALS"})),
            Err(SupplierError::Refused(_))
        ));
        assert!(matches!(
            verification(503, &Value::Null),
            Err(SupplierError::Unavailable(_))
        ));
        assert_eq!(
            balance(200, &json!({"balance": "12,345.67"})).unwrap(),
            Kobo(1_234_567)
        );
        assert!(matches!(
            balance(200, &json!({"status": "INVALID_CREDENTIALS"})),
            Err(SupplierError::Refused(_))
        ));
        assert!(matches!(
            balance(404, &Value::Null),
            Err(SupplierError::NotThisSupplier(_))
        ));
        assert!(matches!(
            balance(200, &Value::Null),
            Err(SupplierError::NotThisSupplier(_))
        ));
        assert!(matches!(
            balance(503, &Value::Null),
            Err(SupplierError::Unavailable(_))
        ));
        let list = json!({"MOBILE_NETWORK": {"MTN": [{"ID": "01", "PRODUCT": [
            {"PRODUCT_ID": "1000.0", "PRODUCT_NAME": "1 GB - 30 days (SME)", "PRODUCT_AMOUNT": "280.00"}]}],
            "Glo": [{"ID": "02", "PRODUCT": [{"PRODUCT_ID": "200", "PRODUCT_NAME": "200 MB", "PRODUCT_AMOUNT": "100"}]}]}});
        assert_eq!(
            plan_list(&list, "01"),
            [SupplierPlan {
                code: "1000.0".into(),
                name: "1 GB - 30 days (SME)".into(),
                price: Kobo(28_000),
                traits: None,
            }]
        );
        assert_eq!(reference_code(CODE).as_deref(), Some(CODE));
        assert_eq!(reference_code("BP123"), None);
    }
}
