//! A fake VTpass, written from VTpass's public API docs: `/api/pay`,
//! `/api/requery`, `/api/merchant-verify`, `/api/balance`, with its auth
//! headers, request-id rules, response codes and sandbox numbers.
//!
//! | billersCode (or phone) | `/api/pay` answers | later requeries |
//! |---|---|---|
//! | `201000000000` | `000` pending | delivered |
//! | `500000000000` | an HTML page (unexpected answer); it is sold | delivered |
//! | `400000000000` | no answer (connection dropped); it is sold | delivered |
//! | `300000000000` | answers only after [`FakeVtpass::set_slow`]; it is sold | delivered |
//! | `08000000016` (kit's own) | `016` failed | failed |
//! | `08000000091` (kit's own) | `091` not processed, not charged | `015` |
//! | `08000000040` (kit's own) | `000` pending | reversed |
//! | `209000000000` (kit's own) | `000` pending | pending, for ever |
//! | anything else (`08011111111`, meters `1111111111111` prepaid and `1010101010101` postpaid, smartcard `1212121212`) | `000` delivered | delivered |
//!
//! Verification finds only the sandbox meters and smartcard (`020`-style
//! `000` with `Customer_Name`); other numbers get `content.error`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const API_KEY: &str = "fake-api-key-0123";
pub const SECRET_KEY: &str = "SK_fake-secret-4567";
pub const PUBLIC_KEY: &str = "PK_fake-public-89ab";

#[derive(Default)]
struct Books {
    /// request_id → the sale as VTpass holds it.
    sales: HashMap<String, Sale>,
    /// Every `/api/pay` body received, in order.
    pay_calls: Vec<Value>,
    /// Requeries received, and answered (a sale's state is read as it is
    /// answered, after `requery_delay`).
    requery_calls: usize,
    requery_answers: usize,
    /// How long `/api/requery` takes to answer.
    requery_delay: Duration,
    balance_naira: f64,
    slow: Duration,
    /// serviceID → what `/api/service-variations` lists.
    variations: HashMap<String, Vec<Value>>,
}

#[derive(Clone)]
struct Sale {
    body: Value,
    /// What requery reports: "pending", "delivered", "failed", "reversed".
    status: &'static str,
    /// What the next requery moves a pending sale to.
    settles_to: &'static str,
}

#[derive(Clone)]
pub struct FakeVtpass {
    pub base: String,
    books: Arc<Mutex<Books>>,
}

impl FakeVtpass {
    pub async fn start() -> FakeVtpass {
        let books = Arc::new(Mutex::new(Books {
            balance_naira: 250_000.0,
            slow: Duration::from_secs(3),
            ..Books::default()
        }));
        let app = Router::new()
            .route("/api/pay", post(pay))
            .route("/api/requery", post(requery))
            .route("/api/merchant-verify", post(verify))
            .route("/api/balance", get(balance))
            .route("/api/service-variations", get(variations))
            .with_state(books.clone());
        let base = super::serve_apart(app);
        FakeVtpass { base, books }
    }

    /// The environment that points `billpay serve` at this fake.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("BILLPAY_SUPPLIER", "vtpass".into()),
            ("BILLPAY_VTPASS_BASE_URL", self.base.clone()),
            ("BILLPAY_VTPASS_API_KEY", API_KEY.into()),
            ("BILLPAY_VTPASS_SECRET_KEY", SECRET_KEY.into()),
            ("BILLPAY_VTPASS_PUBLIC_KEY", PUBLIC_KEY.into()),
        ]
    }

    /// The plans VTpass lists for a serviceID: (variation_code, name, naira).
    pub fn set_variations(&self, service_id: &str, plans: &[(&str, &str, &str)]) {
        let list = plans
            .iter()
            .map(|(code, name, naira)| json!({ "variation_code": code, "name": name, "variation_amount": naira, "fixedPrice": "Yes" }))
            .collect();
        self.books
            .lock()
            .unwrap()
            .variations
            .insert(service_id.into(), list);
    }

    /// How long `300000000000` waits before answering.
    pub fn set_slow(&self, slow: Duration) {
        self.books.lock().unwrap().slow = slow;
    }

    /// How long `/api/requery` takes to answer from now on.
    pub fn set_requery_delay(&self, delay: Duration) {
        self.books.lock().unwrap().requery_delay = delay;
    }

    /// `/api/pay` calls received for a billersCode or phone.
    pub fn pay_calls_for(&self, number: &str) -> Vec<Value> {
        let books = self.books.lock().unwrap();
        books
            .pay_calls
            .iter()
            .filter(|body| number_of(body) == number)
            .cloned()
            .collect()
    }

    /// Sales VTpass made (and charged us for) for a billersCode or phone.
    pub fn sales_for(&self, number: &str) -> usize {
        let books = self.books.lock().unwrap();
        let charged = ["pending", "delivered", "reversed"];
        books
            .sales
            .values()
            .filter(|s| number_of(&s.body) == number && charged.contains(&s.status))
            .count()
    }

    /// VTpass reverses the sales it made for a number (refunding us).
    pub fn reverse(&self, number: &str) {
        let mut books = self.books.lock().unwrap();
        for sale in books.sales.values_mut() {
            if number_of(&sale.body) == number {
                (sale.status, sale.settles_to) = ("reversed", "reversed");
            }
        }
    }

    /// The request ids of the sales for a number.
    pub fn request_ids_for(&self, number: &str) -> Vec<String> {
        let books = self.books.lock().unwrap();
        let mut ids: Vec<String> = books
            .sales
            .iter()
            .filter(|(_, sale)| number_of(&sale.body) == number)
            .map(|(id, _)| id.clone())
            .collect();
        ids.sort();
        ids
    }

    /// VTpass's transaction-update callback body for a sale.
    pub fn callback_body(&self, request_id: &str) -> Value {
        let books = self.books.lock().unwrap();
        let sale = &books.sales[request_id];
        json!({ "type": "transaction-update", "data": transaction(request_id, sale) })
    }

    pub fn requery_calls(&self) -> usize {
        self.books.lock().unwrap().requery_calls
    }

    pub fn requery_answers(&self) -> usize {
        self.books.lock().unwrap().requery_answers
    }
}

fn number_of(body: &Value) -> &str {
    body["billersCode"]
        .as_str()
        .or(body["phone"].as_str())
        .unwrap_or("")
}

fn authorised(headers: &HeaderMap, second: (&str, &str)) -> bool {
    let has = |name: &str, value: &str| headers.get(name).is_some_and(|v| v == value);
    has("api-key", API_KEY) && has(second.0, second.1)
}

fn answer(code: &str, description: &str) -> Response {
    Json(json!({ "code": code, "response_description": description })).into_response()
}

fn bad_credentials() -> Response {
    answer("087", "INVALID CREDENTIALS")
}

/// `request_id`: at least 12 characters, starting with YYYYMMDDHHII.
fn valid_request_id(id: &str) -> bool {
    id.len() > 12 && id[..12].bytes().all(|b| b.is_ascii_digit()) && id.starts_with("20")
}

async fn pay(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorised(&headers, ("secret-key", SECRET_KEY)) {
        return bad_credentials();
    }
    let request_id = body["request_id"].as_str().unwrap_or("").to_owned();
    let number = number_of(&body).to_owned();
    let (sale, slow) = {
        let mut books = books.lock().unwrap();
        books.pay_calls.push(body.clone());
        if body["serviceID"].as_str().is_none_or(str::is_empty) || !valid_request_id(&request_id) {
            return answer("011", "INVALID ARGUMENTS");
        }
        if books.sales.contains_key(&request_id) {
            return answer("014", "REQUEST ID ALREADY EXIST");
        }
        let (status, settles_to) = match number.as_str() {
            "201000000000" | "08000000040" => (
                "pending",
                if number == "201000000000" {
                    "delivered"
                } else {
                    "reversed"
                },
            ),
            "08000000016" => ("failed", "failed"),
            "209000000000" => ("pending", "pending"),
            "08000000091" => return answer("091", "TRANSACTION NOT PROCESSED"),
            _ => ("delivered", "delivered"),
        };
        let sale = Sale {
            body: body.clone(),
            status,
            settles_to,
        };
        // VTpass takes the amount less our commission from the wallet.
        books.balance_naira -= total_amount(&body).1;
        books.sales.insert(request_id.clone(), sale.clone());
        (sale, books.slow)
    };
    match number.as_str() {
        "500000000000" => return "<html><body>502 Bad Gateway</body></html>".into_response(),
        // Dropped without an answer: abort the connection's task quietly.
        "400000000000" => std::panic::resume_unwind(Box::new("connection dropped")),
        "300000000000" => tokio::time::sleep(slow).await,
        _ => {}
    }
    if sale.status == "failed" {
        return answer("016", "TRANSACTION FAILED");
    }
    Json(transaction(&request_id, &sale)).into_response()
}

async fn requery(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorised(&headers, ("secret-key", SECRET_KEY)) {
        return bad_credentials();
    }
    let request_id = body["request_id"].as_str().unwrap_or("");
    let delay = {
        let mut books = books.lock().unwrap();
        books.requery_calls += 1;
        books.requery_delay
    };
    tokio::time::sleep(delay).await;
    let mut books = books.lock().unwrap();
    books.requery_answers += 1;
    let Some(sale) = books.sales.get_mut(request_id) else {
        return answer("015", "INVALID REQUEST ID");
    };
    sale.status = sale.settles_to;
    Json(transaction(request_id, sale)).into_response()
}

/// The commission VTpass's requery documentation shows (`"rate": "3.50"`,
/// `"rate_type": "percent"`).
pub const COMMISSION_PERCENT: f64 = 3.5;

/// (commission, total_amount) in Naira for a pay body: the amount less the
/// commission, rounded to the kobo as a real wallet would be.
pub fn total_amount(body: &Value) -> (f64, f64) {
    let amount = body["amount"].as_f64().unwrap_or(0.0);
    let commission = (amount * COMMISSION_PERCENT).round() / 100.0;
    (commission, ((amount - commission) * 100.0).round() / 100.0)
}

/// A `000` answer carrying the sale's state and, once delivered, what it delivered.
fn transaction(request_id: &str, sale: &Sale) -> Value {
    let body = &sale.body;
    let (commission, total) = total_amount(body);
    let mut out = json!({
        "code": "000",
        "response_description": "TRANSACTION SUCCESSFUL",
        "requestId": request_id,
        "amount": body["amount"],
        "content": { "transactions": {
            "status": sale.status,
            "unique_element": number_of(body),
            "amount": body["amount"],
            "commission": commission,
            "total_amount": total,
            "commission_details": { "amount": commission, "rate": format!("{COMMISSION_PERCENT:.2}"), "rate_type": "percent", "computation_type": "default" },
            "transactionId": format!("17{}", &request_id[12..].chars().filter(char::is_ascii_digit).collect::<String>()),
        }},
        "purchased_code": "",
    });
    if sale.status != "delivered" {
        return out;
    }
    let service = body["serviceID"].as_str().unwrap_or("");
    if service.ends_with("-electric") && body["variation_code"] == "prepaid" {
        let digits: String = request_id
            .bytes()
            .rev()
            .filter(u8::is_ascii_digit)
            .map(char::from)
            .take(20)
            .collect();
        out["purchased_code"] = json!(format!("Token : {digits}"));
        out["token"] = json!(format!("Token : {digits}"));
        out["units"] = json!("79.9 kWh");
    }
    if service == "waec" {
        let quantity = body["quantity"].as_u64().unwrap_or(1);
        out["cards"] = (0..quantity)
            .map(|i| json!({ "Serial": format!("WRN{i:09}"), "Pin": format!("{}{i:03}", &request_id[..9]) }))
            .collect();
    }
    out
}

async fn verify(headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if !authorised(&headers, ("secret-key", SECRET_KEY)) {
        return bad_credentials();
    }
    let found = match (number_of(&body), body["type"].as_str()) {
        ("1111111111111", Some("prepaid")) | ("1010101010101", Some("postpaid")) => {
            json!({ "Customer_Name": "TESTMETER1", "Address": "ABULE - EGBA BU ABULE", "Meter_Number": number_of(&body) })
        }
        // the docs' DStv sample: the bouquet, its codes (bouquet, then
        // add-ons) and the renewal as a number; GOtv's as others show it:
        // no code, the renewal as text (the adapter reads both)
        ("1212121212", None) if body["serviceID"] == "gotv" => {
            json!({ "Customer_Name": "TEST METER", "Status": "ACTIVE", "Current_Bouquet": "GOtv Jolli",
                    "Renewal_Amount": "5800.00" })
        }
        ("1212121212", None) => {
            json!({ "Customer_Name": "TEST METER", "Status": "ACTIVE", "Due_Date": "2026-12-06T00:00:00",
                    "Customer_Number": 8061522780u64, "Customer_Type": "DSTV",
                    "Current_Bouquet": "DStv Compact N19000 + ExtraView Access N5000",
                    "Current_Bouquet_Code": "dstv-compact, extraview-access", "Renewal_Amount": 24000 })
        }
        _ => json!({ "error": "This number is not correct or is not valid for this service" }),
    };
    Json(json!({ "code": "000", "content": found })).into_response()
}

async fn balance(State(books): State<Arc<Mutex<Books>>>, headers: HeaderMap) -> Response {
    if !authorised(&headers, ("public-key", PUBLIC_KEY)) {
        return bad_credentials();
    }
    let naira = books.lock().unwrap().balance_naira;
    Json(json!({ "code": 1, "contents": { "balance": naira } })).into_response()
}

async fn variations(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>,
) -> Response {
    if !authorised(&headers, ("public-key", PUBLIC_KEY)) {
        return bad_credentials();
    }
    let service = query.get("serviceID").cloned().unwrap_or_default();
    let list = books.lock().unwrap().variations.get(&service).cloned();
    let Some(list) = list else {
        return answer("012", "PRODUCT DOES NOT EXIST");
    };
    // "varations" (sic) as VTpass's documentation shows it.
    Json(json!({ "response_description": "000", "content": { "serviceID": service, "ServiceName": service, "convinience_fee": "0 %", "varations": list } }))
        .into_response()
}
