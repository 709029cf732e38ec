//! What the family's sites answer, as typed structs read with serde, and
//! what billpay makes of each (docs/suppliers.md, "SME-data sites"): a
//! record with its capitalised `Status`, a refusal (`400` with
//! `{"error": […]}`, `{"error": "…"}` or field errors), refused credentials
//! (`401 {"detail": …}`), or an answer that says nothing certain (a 5xx or
//! HTML page, garbage). Only a refusal before acceptance is a failure that
//! may go to the next supplier; an unclear answer is an unknown outcome.

use super::SmedataConfig;
use crate::shared::amount;
use crate::{Delivery, Kobo, Order, PlanTraits, Product, SupplierPlan, SupplierStatus};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// An order as the site keeps it: the answer to a purchase, to
/// `GET <route>/<id>`, and a row of a listing. Numbers come as text or
/// numbers, so amounts stay JSON values read by [`amount`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Record {
    pub id: Option<Value>,
    /// The site's own reference, or ours where the site takes it (`ident = true`).
    pub ident: Option<String>,
    #[serde(rename = "Status", alias = "status")]
    pub status: Option<String>,
    pub balance_before: Option<Value>,
    pub balance_after: Option<Value>,
    /// Exam pins' answers name the balances so.
    pub previous_balance: Option<Value>,
    pub after_balance: Option<Value>,
    pub mobile_number: Option<Value>,
    pub meter_number: Option<Value>,
    pub smart_card_number: Option<Value>,
    /// Data: the plan's id at the site.
    pub plan: Option<Value>,
    /// Electricity: `"Token : 0303…"`.
    pub token: Option<String>,
    /// Exam pins: a list or text.
    pub pins: Option<Value>,
    pub create_date: Option<String>,
    /// The network's message (some copies), for the log.
    pub api_response: Option<Value>,
}

/// A record's `Status`.
#[derive(Debug, Clone, PartialEq)]
pub enum SiteStatus {
    Successful,
    /// `processing`, `pending`: accepted, not final.
    Processing,
    /// Set by the site's admin ("select failed and save to refund user"):
    /// the site's wallet was refunded.
    Failed,
    Other(String),
}

impl From<&str> for SiteStatus {
    fn from(status: &str) -> SiteStatus {
        match status.trim().to_ascii_lowercase().as_str() {
            "successful" | "success" => SiteStatus::Successful,
            "processing" | "pending" => SiteStatus::Processing,
            "failed" | "fail" => SiteStatus::Failed,
            other => SiteStatus::Other(other.to_owned()),
        }
    }
}

impl Record {
    /// The site's id of the order, as text (it is a number there).
    pub fn id(&self) -> Option<String> {
        match self.id.as_ref()? {
            Value::Number(n) => Some(n.to_string()),
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            _ => None,
        }
    }

    pub fn status(&self) -> SiteStatus {
        SiteStatus::from(self.status.as_deref().unwrap_or(""))
    }

    /// What it cost us: the wallet before less after (the listed price is
    /// only the expected one: an API account is charged its own price).
    pub fn cost(&self) -> Option<Kobo> {
        let before = self
            .balance_before
            .as_ref()
            .or(self.previous_balance.as_ref())?;
        let after = self
            .balance_after
            .as_ref()
            .or(self.after_balance.as_ref())?;
        let cost = amount(before)?.0 - amount(after)?.0;
        (cost >= 0).then_some(Kobo(cost))
    }

    /// The number the order was for (phone, meter or smartcard).
    pub fn number(&self) -> Option<String> {
        [
            &self.mobile_number,
            &self.meter_number,
            &self.smart_card_number,
        ]
        .into_iter()
        .flatten()
        .find_map(text)
    }

    /// What the site delivered, by product.
    pub fn delivery(&self, product: Product) -> Delivery {
        match product {
            Product::Electricity => {
                let token = self.token.as_deref().map(token_text).unwrap_or_default();
                Delivery::token(token, None)
            }
            Product::Education => {
                Delivery::exam_pins(self.pins.as_ref().map(pins).unwrap_or_default())
            }
            _ => Delivery::default(),
        }
    }

    /// The outcome this record says for `order`.
    pub fn outcome(&self, order: &Order) -> SupplierStatus {
        match self.status() {
            SiteStatus::Successful => {
                let delivery = self.delivery(order.product);
                let missing = match order.product {
                    Product::Electricity => delivery.pin.as_deref().is_none_or(str::is_empty),
                    Product::Education => delivery.pins.is_empty(),
                    _ => false,
                };
                if missing {
                    // Successful without the token or pins: asked again for them.
                    return SupplierStatus::Pending;
                }
                SupplierStatus::delivered(delivery).at_cost(self.cost())
            }
            SiteStatus::Failed => SupplierStatus::Failed {
                reason: "the supplier failed the order".into(),
            },
            SiteStatus::Processing | SiteStatus::Other(_) => SupplierStatus::Pending,
        }
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `"Token : 0303 9560…"` → the token without the site's label (grouped by
/// four like the other suppliers' when it is the usual 20 digits).
pub fn token_text(token: &str) -> String {
    crate::shared::token_digits(token).unwrap_or_else(|| {
        let bare = token.rsplit_once(':').map_or(token, |(_, after)| after);
        bare.trim().to_owned()
    })
}

/// Exam pins as a list (of text, or of `{"pin": …}`) or as text.
fn pins(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|item| text(item).or_else(|| item.get("pin").and_then(text)))
            .filter(|p| !p.is_empty())
            .collect(),
        Value::String(all) => all
            .split([',', '\n', ';'])
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// An error body: `{"error": ["…"]}`, `{"error": "…"}`, `{"detail": "…"}`
/// or field errors (`{"plan": ["Invalid pk …"]}`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ErrorBody {
    Error { error: Messages },
    Detail { detail: Messages },
    Fields(BTreeMap<String, Messages>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Messages {
    One(String),
    Many(Vec<Value>),
}

impl std::fmt::Display for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Messages::One(one) => f.write_str(one),
            Messages::Many(all) => {
                let all: Vec<String> = all
                    .iter()
                    .map(|m| text(m).unwrap_or_else(|| m.to_string()))
                    .collect();
                f.write_str(&all.join("; "))
            }
        }
    }
}

impl std::fmt::Display for ErrorBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorBody::Error { error } => write!(f, "{error}"),
            ErrorBody::Detail { detail } => write!(f, "{detail}"),
            ErrorBody::Fields(fields) => {
                let all: Vec<String> = fields.iter().map(|(k, m)| format!("{k}: {m}")).collect();
                f.write_str(&all.join("; "))
            }
        }
    }
}

/// What an answer says, whatever was asked.
#[derive(Debug, Clone)]
pub enum Answer {
    /// 200 or 201 with a record.
    Order(Box<Record>),
    /// 400 with an error body: refused before it was taken (not charged).
    Refused(String),
    /// 401 (or 403): our token is refused.
    Unauthorized(String),
    /// 404: no such order (or route).
    NotFound,
    /// Anything else: a 5xx or HTML page, garbage, a 2xx without a status.
    Unclear(String),
}

impl Answer {
    /// How it was read, for the log line.
    pub fn name(&self) -> &'static str {
        match self {
            Answer::Order(record) => match record.status() {
                SiteStatus::Successful => "successful",
                SiteStatus::Processing => "processing",
                SiteStatus::Failed => "failed",
                SiteStatus::Other(_) => "unknown status",
            },
            Answer::Refused(_) => "refused",
            Answer::Unauthorized(_) => "misconfigured",
            Answer::NotFound => "not found",
            Answer::Unclear(_) => "unknown",
        }
    }
}

/// Reads one HTTP answer.
pub fn read(http_status: u16, body: &str) -> Answer {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let error = || {
        json.clone()
            .and_then(|v| serde_json::from_value::<ErrorBody>(v).ok())
            .filter(|_| json.as_ref().is_some_and(Value::is_object))
    };
    match http_status {
        200 | 201 => match json.map(serde_json::from_value::<Record>) {
            Some(Ok(record)) if record.status.is_some() => Answer::Order(Box::new(record)),
            _ => Answer::Unclear(format!("HTTP {http_status} without an order's Status")),
        },
        400 => match error() {
            Some(refusal) => Answer::Refused(refusal.to_string()),
            None => Answer::Unclear("HTTP 400 without an error body".into()),
        },
        401 | 403 => Answer::Unauthorized(
            error().map_or_else(|| format!("HTTP {http_status}"), |e| e.to_string()),
        ),
        404 => Answer::NotFound,
        status => Answer::Unclear(match json {
            Some(_) => format!("HTTP {status}"),
            None => format!("HTTP {status}, not JSON"),
        }),
    }
}

/// The route of a product's orders (`data`, `topup`…), `None` when the
/// family does not sell it.
pub fn route(product: Product) -> Option<&'static str> {
    Some(match product {
        Product::Data => "data",
        Product::Airtime => "topup",
        Product::Electricity => "billpayment",
        Product::Cable => "cablesub",
        Product::Education => "epin",
        Product::Epin | Product::Betting => return None,
    })
}

/// Exams the family sells (`exam_name`).
const EXAMS: &[&str] = &["waec", "neco", "nabteb"];

/// Whether the site sells `product` from `provider` for us (its ids configured).
pub fn sells(config: &SmedataConfig, product: Product, provider: &str) -> bool {
    match product {
        Product::Airtime | Product::Data => config.networks.contains_key(provider),
        Product::Electricity => {
            config.discos.contains_key(provider) && config.customer_phone.is_some()
        }
        Product::Cable => config.cables.contains_key(provider),
        Product::Education => EXAMS.contains(&provider),
        Product::Epin | Product::Betting => false,
    }
}

/// A phone as the site wants it: 11 digits, local form.
pub fn local_phone(phone: &str) -> String {
    let digits: String = phone.chars().filter(char::is_ascii_digit).collect();
    match digits.strip_prefix("234") {
        Some(rest) if rest.len() == 10 => format!("0{rest}"),
        _ => digits,
    }
}

/// An amount of naira as the site reads it: a whole number when whole.
fn naira(amount: Kobo) -> Value {
    match amount.0 % 100 {
        0 => json!(amount.0 / 100),
        _ => json!(format!("{}.{:02}", amount.0 / 100, amount.0 % 100)),
    }
}

/// An id: the catalogue's code for this supplier (`codes.NAME.<key>`), else
/// the site's configured id for the provider.
fn id(order: &Order, key: &str, configured: &BTreeMap<String, u32>) -> Option<u64> {
    match order.codes.get(key) {
        Some(code) => code.trim().parse().ok(),
        None => configured.get(&order.provider).map(|&id| u64::from(id)),
    }
}

/// The route and body of a purchase; `Err`: the site cannot take it as
/// asked (nothing is sent; it may go to the next supplier).
pub fn purchase(config: &SmedataConfig, order: &Order) -> Result<(&'static str, Value), String> {
    let name = &config.name;
    let plan = || {
        order
            .codes
            .get("plan")
            .and_then(|p| p.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                format!("{name} lists no such plan (no codes.{name}.plan in the catalogue)")
            })
    };
    let not_sold = || format!("{name} does not sell {} {}", order.provider, order.product);
    let mut body = match order.product {
        Product::Data => json!({
            "network": id(order, "network", &config.networks).ok_or_else(not_sold)?,
            "mobile_number": local_phone(&order.recipient),
            "plan": plan()?,
            "Ported_number": true,
        }),
        Product::Airtime => json!({
            "network": id(order, "network", &config.networks).ok_or_else(not_sold)?,
            "amount": naira(order.amount),
            "mobile_number": local_phone(&order.recipient),
            "Ported_number": true,
            "airtime_type": "VTU",
        }),
        Product::Electricity => json!({
            "disco_name": id(order, "disco", &config.discos).ok_or_else(not_sold)?,
            "amount": naira(order.amount),
            "meter_number": order.recipient,
            "MeterType": order.details.meter_type.unwrap_or(1),
            // The script reads it without a default: always sent.
            "Customer_Phone": config.customer_phone.as_deref().ok_or_else(not_sold)?,
        }),
        Product::Cable => json!({
            "cablename": id(order, "cable", &config.cables).ok_or_else(not_sold)?,
            "cableplan": plan()?,
            "smart_card_number": order.recipient,
        }),
        Product::Education if EXAMS.contains(&order.provider.as_str()) => {
            let quantity = order.details.quantity.unwrap_or(1);
            if !(1..=5).contains(&quantity) {
                return Err(format!("{name} sells at most 5 exam pins per order"));
            }
            json!({ "exam_name": order.provider.to_uppercase(), "quantity": quantity })
        }
        _ => return Err(not_sold()),
    };
    if config.ident {
        body["ident"] = json!(order.reference_code);
    }
    Ok((route(order.product).ok_or_else(not_sold)?, body))
}

/// A page of a listing (`GET /api/data/`: newest first, 15 a page).
#[derive(Debug, Clone, Deserialize)]
pub struct Page {
    #[serde(default)]
    pub count: Option<u64>,
    #[serde(default)]
    pub next: Option<String>,
    /// Required: an answer without it is no listing.
    pub results: Vec<Record>,
}

/// A plan row of `/api/network/` or `/api/user/`'s `Dataplans`.
#[derive(Debug, Clone, Deserialize)]
pub struct PlanRow {
    pub id: Value,
    #[serde(default)]
    pub network: Option<Value>,
    #[serde(default)]
    pub plan_type: Option<String>,
    #[serde(default)]
    pub plan_network: Option<String>,
    #[serde(default)]
    pub month_validate: Option<String>,
    #[serde(default)]
    pub plan: Option<String>,
    #[serde(default)]
    pub plan_amount: Option<Value>,
}

impl PlanRow {
    fn network_id(&self) -> Option<u32> {
        text(self.network.as_ref()?)?.parse().ok()
    }
}

/// The plans of `network` (its id at the site) in a plan list: `{"MTN_PLAN":
/// […]}` (`/api/network/`) or `{"MTN_PLAN": {"SME": […], "ALL": […]}}`
/// (`/api/user/`'s `Dataplans`, where `ALL` repeats the others: deduplicated
/// by id). A plan is named `"SME 1.0GB 30 days"`; its price is the listed
/// `plan_amount` (what it is expected to cost us; the answers say the real cost).
pub fn plan_list(lists: &Value, network: u32) -> Vec<SupplierPlan> {
    let mut rows: Vec<PlanRow> = Vec::new();
    let mut collect = |value: &Value| {
        if let Some(items) = value.as_array() {
            rows.extend(
                items
                    .iter()
                    .filter_map(|i| serde_json::from_value(i.clone()).ok()),
            );
        }
    };
    for (key, value) in lists.as_object().into_iter().flatten() {
        if !key.ends_with("_PLAN") {
            continue;
        }
        match value {
            Value::Object(by_type) => by_type.values().for_each(&mut collect),
            other => collect(other),
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    rows.into_iter()
        .filter(|row| row.network_id() == Some(network))
        .filter_map(|row| {
            let code = text(&row.id)?;
            let price = row.plan_amount.as_ref().and_then(plan_amount)?;
            let traits = PlanTraits {
                category: PlanTraits::category(row.plan_type.as_deref().unwrap_or_default()),
                megabytes: PlanTraits::megabytes(row.plan.as_deref().unwrap_or_default())?,
                days: row.month_validate.as_deref().and_then(PlanTraits::days),
            };
            seen.insert(code.clone()).then(|| SupplierPlan {
                traits: Some(traits),
                name: [
                    row.plan_type.as_deref(),
                    row.plan.as_deref(),
                    row.month_validate.as_deref(),
                ]
                .into_iter()
                .flatten()
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" "),
                code,
                price,
            })
        })
        .collect()
}

/// `plan_amount` as the copies write it: `"₦239.0"`, `"110.0"`, `300`.
fn plan_amount(value: &Value) -> Option<Kobo> {
    match value {
        Value::String(s) => amount(&json!(s.trim().trim_start_matches('₦').trim())),
        other => amount(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SupplierCodes;
    use billpay_domain::PurchaseDetails;

    fn config(ident: bool) -> SmedataConfig {
        let ids = |all: &[(&str, u32)]| all.iter().map(|(k, v)| ((*k).into(), *v)).collect();
        SmedataConfig {
            name: "husmodata".into(),
            base_url: "https://x.example".into(),
            token: "t".into(),
            timeout: std::time::Duration::from_secs(1),
            networks: ids(super::super::settings::NETWORKS),
            discos: ids(super::super::settings::DISCOS),
            cables: ids(super::super::settings::CABLES),
            ident,
            customer_phone: Some("08030000000".into()),
        }
    }

    fn order(product: Product, provider: &str, codes: &[(&str, &str)]) -> Order {
        let mut all = SupplierCodes::default();
        for (k, v) in codes {
            all.insert((*k).into(), (*v).into());
        }
        Order {
            reference_code: "BP1795312282123ABCDEF012345".into(),
            product,
            provider: provider.into(),
            recipient: "08031234567".into(),
            amount: Kobo(10_000),
            details: PurchaseDetails::default(),
            codes: all,
            supplier_reference: None,
            placed_at: None,
        }
    }

    #[test]
    fn the_readme_answer_is_a_delivery_at_its_real_cost() {
        let body = r#"{"id": 108602, "network": 1, "balance_before": "2698.6", "balance_after": "2459.6", "mobile_number": "08134567890", "plan": 7, "Status": "successful", "plan_network": "MTN", "plan_name": "1.0GB", "plan_amount": "₦239.0", "create_date": "2021-08-28T21:27:41.169631", "Ported_number": true}"#;
        let Answer::Order(record) = read(200, body) else {
            panic!("an order")
        };
        assert_eq!(record.id().as_deref(), Some("108602"));
        let outcome = record.outcome(&order(Product::Data, "mtn", &[("plan", "7")]));
        assert_eq!(
            outcome,
            SupplierStatus::delivered(Delivery::default()).at_cost(Some(Kobo(23_900)))
        );
        assert!(matches!(read(201, body), Answer::Order(_)));
    }

    #[test]
    fn errors_in_every_form_are_refusals_and_anything_unclear_is_not() {
        for body in [
            r#"{"error": ["Insufficient balance"]}"#,
            r#"{"error": "Customer_Phone is required"}"#,
            r#"{"plan": ["Invalid pk \"999\" - object does not exist."]}"#,
        ] {
            assert!(matches!(read(400, body), Answer::Refused(_)), "{body}");
        }
        let Answer::Refused(message) = read(400, r#"{"error": ["invalid plan id 999 for MTN"]}"#)
        else {
            panic!()
        };
        assert_eq!(message, "invalid plan id 999 for MTN");
        assert!(
            matches!(read(401, r#"{"detail": "Invalid token."}"#), Answer::Unauthorized(m) if m == "Invalid token.")
        );
        assert!(matches!(
            read(502, "<html>Bad Gateway</html>"),
            Answer::Unclear(_)
        ));
        assert!(matches!(read(500, "<html>"), Answer::Unclear(_)));
        assert!(matches!(read(400, "<html>"), Answer::Unclear(_)));
        assert!(matches!(read(200, "garbage"), Answer::Unclear(_)));
        assert!(matches!(read(200, r#"{"id": 3}"#), Answer::Unclear(_)));
        assert!(matches!(read(404, ""), Answer::NotFound));
    }

    #[test]
    fn statuses_and_tokens() {
        let record = |status: &str| Record {
            status: Some(status.into()),
            token: Some("Token : 42167939603201733524".into()),
            ..Record::default()
        };
        let meter = order(Product::Electricity, "ikeja-electric", &[]);
        assert!(matches!(
            record("processing").outcome(&meter),
            SupplierStatus::Pending
        ));
        assert!(matches!(
            record("pending").outcome(&meter),
            SupplierStatus::Pending
        ));
        assert!(matches!(
            record("failed").outcome(&meter),
            SupplierStatus::Failed { .. }
        ));
        let SupplierStatus::Delivered { result, .. } = record("successful").outcome(&meter) else {
            panic!()
        };
        assert_eq!(result.pin.as_deref(), Some("4216-7939-6032-0173-3524"));
        assert_eq!(token_text("Token : 12345-678"), "12345-678");
        let mut without = record("successful");
        without.token = None;
        assert_eq!(
            without.outcome(&meter),
            SupplierStatus::Pending,
            "no token yet"
        );
    }

    #[test]
    fn purchases_carry_the_sites_ids_and_never_a_plan_it_does_not_list() {
        let site = config(false);
        let (route, body) =
            purchase(&site, &order(Product::Data, "airtel", &[("plan", "353")])).unwrap();
        assert_eq!(route, "data");
        assert_eq!(
            body,
            json!({"network": 4, "mobile_number": "08031234567", "plan": 353, "Ported_number": true})
        );
        assert!(purchase(&site, &order(Product::Data, "mtn", &[])).is_err());
        let (_, body) = purchase(&config(true), &order(Product::Airtime, "mtn", &[])).unwrap();
        assert_eq!(body["airtime_type"], "VTU");
        assert_eq!(body["amount"], 100);
        assert_eq!(body["ident"], "BP1795312282123ABCDEF012345");
        let (route, body) =
            purchase(&site, &order(Product::Electricity, "eko-electric", &[])).unwrap();
        assert_eq!(
            (route, &body["disco_name"], &body["Customer_Phone"]),
            ("billpayment", &json!(2), &json!("08030000000"))
        );
        assert!(!sells(
            &SmedataConfig {
                customer_phone: None,
                ..site.clone()
            },
            Product::Electricity,
            "eko-electric"
        ));
        assert!(!sells(&site, Product::Betting, "bet9ja"));
        assert!(!sells(&site, Product::Cable, "showmax"));
        assert_eq!(local_phone("2348031234567"), "08031234567");
    }

    #[test]
    fn plan_lists_of_both_routes_are_read_and_deduplicated() {
        let row = |id: u32, network: u32, kind: &str, size: &str, price: &str| json!({"id": id, "dataplan_id": id.to_string(), "network": network, "plan_type": kind, "plan_network": "MTN", "month_validate": "30 days", "plan": size, "plan_amount": price});
        let flat = json!({"MTN_PLAN": [row(6, 1, "SME", "1.0GB", "300"), row(7, 1, "GIFTING", "2.0GB", "₦600.0")], "GLO_PLAN": [row(9, 2, "GIFTING", "1.0GB", "250")]});
        let plans = plan_list(&flat, 1);
        assert_eq!(plans.len(), 2);
        assert_eq!(
            plans[0],
            SupplierPlan {
                code: "6".into(),
                name: "SME 1.0GB 30 days".into(),
                price: Kobo(30_000),
                traits: Some(PlanTraits {
                    category: "sme".into(),
                    megabytes: 1000,
                    days: Some(30)
                }),
            }
        );
        assert_eq!(plans[1].price, Kobo(60_000));
        let nested = json!({"MTN_PLAN": {"SME": [row(6, 1, "SME", "1.0GB", "300")], "ALL": [row(6, 1, "SME", "1.0GB", "300")]}});
        assert_eq!(plan_list(&nested, 1).len(), 1);
    }
}
