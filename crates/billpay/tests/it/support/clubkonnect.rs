//! A fake ClubKonnect (Nellobytes Systems), written from the facts its
//! public clients agree on (../shared/design/integrations.md), not from our
//! adapter: every call a GET to `/<Endpoint>.asp` with `UserID` and `APIKey`;
//! purchases with `RequestID` (kept once: a second one with the same id is
//! not bought again) and `CallBackURL`; `statuscode`/`status`/`remark`
//! answers; `{"status":"INVALID_CREDENTIALS"}` for wrong credentials; an
//! HTML page on 503. Where public clients differ it accepts both forms (the
//! cable package as `Package` or `MeterType`, the query by `RequestID` or
//! `OrderID`, betting companies in either case).
//!
//! | number (phone, meter, smartcard or customer id) | purchase answers | queries answer |
//! |---|---|---|
//! | `08000000100` | `100` ORDER_RECEIVED | `200` completed |
//! | `08000000201` | `201` "completed", network unresponsive | `200` completed |
//! | `08000000300` | `300` after [`FakeClubkonnect::set_slow`] | `200` completed |
//! | `08000000503` | HTML 503 page (the order is taken) | `200` completed |
//! | `08000000000` | no answer: connection dropped (taken) | `200` completed |
//! | `08000000417` | `417` INSUFFICIENT_BALANCE (refused, not taken) | `INVALID_REQUESTID` |
//! | `08000000509` | `100` | `509` cancelled, credited back |
//! | `08000000602` | `600` on hold | `602` credited back |
//! | `08000000299` | `299` unspecified error | `299`, for ever |
//! | `08169999999` | `100` | `100` until [`FakeClubkonnect::complete`] |
//! | anything else | `200` completed | `200` completed |
//!
//! Verification finds smartcard `1212121212`, meter `1111111111111`,
//! betting customer `12345` and JAMB profile `1234567890`; other numbers get
//! a `customer_name` that says invalid.

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const USER_ID: &str = "CK100000001";
pub const API_KEY: &str = "fake-clubkonnect-key-0123";

type Params = HashMap<String, String>;

#[derive(Default)]
struct Books {
    /// RequestID → the order as ClubKonnect holds it.
    orders: HashMap<String, Order>,
    /// Every purchase call received (its parameters), in order.
    purchases: Vec<Params>,
    queries: usize,
    balance_naira: f64,
    slow: Duration,
    /// The API key it accepts now (rotated by a test).
    api_key: String,
    data_plans: Value,
    next_order_id: u64,
}

#[derive(Clone)]
struct Order {
    order_id: u64,
    endpoint: String,
    params: Params,
    /// What queries answer now.
    code: u16,
    /// What the next query moves it to.
    settles_to: u16,
}

#[derive(Clone)]
pub struct FakeClubkonnect {
    pub base: String,
    books: Arc<Mutex<Books>>,
}

impl FakeClubkonnect {
    pub async fn start() -> FakeClubkonnect {
        let books = Arc::new(Mutex::new(Books {
            balance_naira: 250_000.0,
            slow: Duration::from_secs(3),
            api_key: API_KEY.into(),
            next_order_id: 7_000_000,
            ..Books::default()
        }));
        let app = Router::new()
            .route("/{endpoint}", get(endpoint))
            .with_state(books.clone());
        let base = super::serve_apart(app);
        FakeClubkonnect { base, books }
    }

    /// The environment that configures ClubKonnect (not the default supplier).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("BILLPAY_CLUBKONNECT_BASE_URL", self.base.clone()),
            ("BILLPAY_CLUBKONNECT_USER_ID", USER_ID.into()),
            ("BILLPAY_CLUBKONNECT_API_KEY", API_KEY.into()),
            (
                "BILLPAY_CLUBKONNECT_CALLBACK_URL",
                "https://billpay.example/callbacks/clubkonnect".into(),
            ),
        ]
    }

    /// How long `08000000300` waits before answering.
    pub fn set_slow(&self, slow: Duration) {
        self.books.lock().unwrap().slow = slow;
    }

    /// The operator rotates the API key at ClubKonnect: ours is refused now.
    pub fn rotate_key(&self) {
        self.books.lock().unwrap().api_key = "rotated-key".into();
    }

    /// The data plans `APIDatabundlePlansV2.asp` lists for network `id`
    /// (PRODUCT_ID, name, naira).
    pub fn set_data_plans(&self, id: &str, name: &str, plans: &[(&str, &str, &str)]) {
        let products: Vec<Value> = plans
            .iter()
            .map(|(code, plan, naira)| json!({ "PRODUCT_SNO": "1", "PRODUCT_CODE": "1", "PRODUCT_ID": code, "PRODUCT_NAME": plan, "PRODUCT_AMOUNT": naira }))
            .collect();
        let mut books = self.books.lock().unwrap();
        if books.data_plans.is_null() {
            books.data_plans = json!({ "MOBILE_NETWORK": {} });
        }
        books.data_plans["MOBILE_NETWORK"][name] = json!([{ "ID": id, "PRODUCT": products }]);
    }

    /// Purchase calls received for a number.
    pub fn purchases_for(&self, number: &str) -> Vec<Params> {
        let books = self.books.lock().unwrap();
        books
            .purchases
            .iter()
            .filter(|p| number_of(p) == number)
            .cloned()
            .collect()
    }

    /// Orders it took (and charged us for) for a number.
    pub fn orders_for(&self, number: &str) -> usize {
        let books = self.books.lock().unwrap();
        books
            .orders
            .values()
            .filter(|o| number_of(&o.params) == number && o.code < 500)
            .count()
    }

    /// A held order (`08169999999`) completes at ClubKonnect.
    pub fn complete(&self, number: &str) {
        let mut books = self.books.lock().unwrap();
        for order in books
            .orders
            .values_mut()
            .filter(|o| number_of(&o.params) == number)
        {
            order.settles_to = 200;
        }
    }

    /// ClubKonnect cancels a number's orders after the fact and credits us
    /// back: queries answer `602` from now on.
    pub fn credit_back(&self, number: &str) {
        let mut books = self.books.lock().unwrap();
        for order in books
            .orders
            .values_mut()
            .filter(|o| number_of(&o.params) == number)
        {
            (order.code, order.settles_to) = (602, 602);
        }
    }

    pub fn queries(&self) -> usize {
        self.books.lock().unwrap().queries
    }

    /// The query string ClubKonnect's callback GET carries for an order.
    pub fn callback_query(&self, request_id: &str) -> String {
        let books = self.books.lock().unwrap();
        let order = &books.orders[request_id];
        let (status, remark) = describe(order.code);
        format!(
            "orderid={}&statuscode={}&orderstatus={status}&orderremark={}&requestid={request_id}",
            order.order_id,
            order.code,
            remark.replace(' ', "%20")
        )
    }
}

fn number_of(params: &Params) -> &str {
    [
        "MobileNumber",
        "MeterNo",
        "SmartCardNo",
        "CustomerID",
        "PhoneNo",
    ]
    .iter()
    .find_map(|k| params.get(*k).filter(|v| !v.is_empty()))
    .map_or("", String::as_str)
}

/// `status` and `remark` of a status code, as its public clients list them.
fn describe(code: u16) -> (&'static str, &'static str) {
    match code {
        100 => ("ORDER_RECEIVED", "Awaiting Processing"),
        200 => ("ORDER_COMPLETED", "Success"),
        201 => ("ORDER_COMPLETED", "Network Unresponsive"),
        299 => ("ORDER_COMPLETED", "Unspecified Error"),
        300 => ("ORDER_PROCESSED", "Awaiting Network Response"),
        417 => ("ORDER_ERROR", "INSUFFICIENT_BALANCE"),
        509 => (
            "ORDER_CANCELLED",
            "Your account has been credited back for failed Txn",
        ),
        600 => ("ORDER_ONHOLD", "Network Error"),
        602 => (
            "ORDER_ONHOLD",
            "Your account has been credited back for failed Txn",
        ),
        _ => ("ORDER_ERROR", "Unspecified Error"),
    }
}

const PURCHASES: [&str; 8] = [
    "APIAirtimeV1.asp",
    "APIDatabundleV1.asp",
    "APICableTVV1.asp",
    "APIElectricityV1.asp",
    "APIWAECV1.asp",
    "APIJAMBV1.asp",
    "APIBettingV1.asp",
    "APIEPINV1.asp",
];

async fn endpoint(
    State(books): State<Arc<Mutex<Books>>>,
    Path(endpoint): Path<String>,
    Query(params): Query<Params>,
) -> Response {
    let api_key = books.lock().unwrap().api_key.clone();
    if params.get("UserID").map(String::as_str) != Some(USER_ID)
        || params.get("APIKey") != Some(&api_key)
    {
        return Json(json!({ "status": "INVALID_CREDENTIALS" })).into_response();
    }
    match endpoint.as_str() {
        "APIWalletBalanceV1.asp" => {
            let naira = books.lock().unwrap().balance_naira;
            Json(json!({ "date": "2026-11-24 10:00:00", "id": USER_ID, "phoneno": "08011111111", "balance": format!("{naira:.2}") })).into_response()
        }
        "APIQueryV1.asp" => query(&books, &params),
        "APICancelV1.asp" => Json(json!({ "status": "ORDER_CANCELLED" })).into_response(),
        "APIDatabundlePlansV2.asp" => Json(books.lock().unwrap().data_plans.clone()).into_response(),
        "APICableTVPackagesV2.asp" => Json(json!({ "TV_ID": { "GOtv": [{ "ID": "gotv", "PRODUCT": [
            { "PACKAGE_ID": "gotv-smallie", "PACKAGE_NAME": "GOtv Smallie", "PACKAGE_AMOUNT": "1575.00" }] }] } })).into_response(),
        "APIVerifyCableTVV1.0.asp" => verify(&params, "SmartCardNo", "1212121212"),
        "APIVerifyElectricityV1.asp" => verify(&params, "MeterNo", "1111111111111"),
        "APIVerifyBettingV1.asp" => verify(&params, "CustomerID", "12345"),
        "APIVerifyJAMBV1.asp" => verify(&params, "ProfileID", "1234567890"),
        name if PURCHASES.contains(&name) => purchase(books, name, params).await,
        _ => (axum::http::StatusCode::NOT_FOUND, "<html><body>404 - File or directory not found.</body></html>").into_response(),
    }
}

fn verify(params: &Params, field: &str, known: &str) -> Response {
    let name = match params.get(field).map(String::as_str) {
        Some(n) if n == known => "ADA OBI",
        _ => "INVALID_CUSTOMERID",
    };
    Json(json!({ "customer_name": name })).into_response()
}

/// Which fields a purchase must have (else `4xx` refused).
fn missing_field(endpoint: &str, params: &Params) -> bool {
    let needs: &[&str] = match endpoint {
        "APIAirtimeV1.asp" => &["MobileNetwork", "Amount", "MobileNumber"],
        "APIDatabundleV1.asp" => &["MobileNetwork", "DataPlan", "MobileNumber"],
        "APICableTVV1.asp" => &["CableTV", "SmartCardNo"],
        "APIElectricityV1.asp" => &["ElectricCompany", "MeterType", "MeterNo", "Amount"],
        "APIWAECV1.asp" => &["ExamType"],
        "APIJAMBV1.asp" => &["ExamType", "ProfileID"],
        "APIBettingV1.asp" => &["BettingCompany", "CustomerID", "Amount"],
        _ => &["MobileNetwork", "Value", "Quantity"],
    };
    let package = endpoint != "APICableTVV1.asp"
        || params.contains_key("Package")
        || params.contains_key("MeterType");
    !package
        || needs
            .iter()
            .any(|n| params.get(*n).is_none_or(String::is_empty))
}

async fn purchase(books: Arc<Mutex<Books>>, endpoint: &str, params: Params) -> Response {
    let request_id = params.get("RequestID").cloned().unwrap_or_default();
    let number = number_of(&params).to_owned();
    let (order, slow) = {
        let mut books = books.lock().unwrap();
        books.purchases.push(params.clone());
        if request_id.is_empty() || missing_field(endpoint, &params) {
            return Json(
                json!({ "statuscode": "410", "status": "ORDER_ERROR", "remark": "MISSING_FIELDS" }),
            )
            .into_response();
        }
        if let Some(order) = books.orders.get(&request_id) {
            // Kept once: the same RequestID is answered, never bought again.
            return Json(answer(&request_id, order)).into_response();
        }
        let (code, settles_to) = match number.as_str() {
            "08000000100" | "08000000503" | "08000000000" => (100, 200),
            "08000000201" => (201, 200),
            "08000000300" => (300, 200),
            "08000000417" => (417, 417),
            "08000000509" => (100, 509),
            "08000000602" => (600, 602),
            "08000000299" => (299, 299),
            "08169999999" => (100, 100),
            _ => (200, 200),
        };
        books.next_order_id += 1;
        let order = Order {
            order_id: books.next_order_id,
            endpoint: endpoint.into(),
            params: params.clone(),
            code,
            settles_to,
        };
        if code != 417 {
            books.balance_naira -= params
                .get("Amount")
                .and_then(|a| a.parse::<f64>().ok())
                .unwrap_or(0.0);
            books.orders.insert(request_id.clone(), order.clone());
        }
        (order, books.slow)
    };
    match number.as_str() {
        "08000000503" => {
            return (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "<html><body><h1>503 Service Unavailable</h1></body></html>",
            )
                .into_response();
        }
        // Dropped without an answer: abort the connection's task quietly.
        "08000000000" => std::panic::resume_unwind(Box::new("connection dropped")),
        "08000000300" => tokio::time::sleep(slow).await,
        _ => {}
    }
    if order.code == 200 && endpoint == "APIEPINV1.asp" {
        // E-pins answer with the cards themselves.
        return Json(json!({ "TXN_EPIN": epins(&request_id, &order) })).into_response();
    }
    Json(answer(&request_id, &order)).into_response()
}

fn query(books: &Arc<Mutex<Books>>, params: &Params) -> Response {
    let mut books = books.lock().unwrap();
    books.queries += 1;
    let by_order = params.get("OrderID").and_then(|id| {
        books
            .orders
            .iter()
            .find(|(_, o)| o.order_id.to_string() == *id)
            .map(|(k, _)| k.clone())
    });
    let Some(request_id) = params.get("RequestID").cloned().or(by_order) else {
        return Json(json!({ "status": "MISSING_REQUESTID" })).into_response();
    };
    let Some(order) = books.orders.get_mut(&request_id) else {
        return Json(json!({ "status": "INVALID_REQUESTID" })).into_response();
    };
    order.code = order.settles_to;
    Json(answer(&request_id, order)).into_response()
}

/// An order's answer: its code and, once completed, what it delivered.
fn answer(request_id: &str, order: &Order) -> Value {
    let (status, remark) = describe(order.code);
    let mut out = json!({
        "orderid": order.order_id.to_string(),
        "requestid": request_id,
        "statuscode": order.code.to_string(),
        "status": status,
        "remark": remark,
        "ordertype": order.endpoint.trim_end_matches(".asp"),
        "amountcharged": order.params.get("Amount"),
    });
    if order.code != 200 {
        return out;
    }
    let digits: String = request_id
        .bytes()
        .rev()
        .filter(u8::is_ascii_digit)
        .map(char::from)
        .chain(std::iter::repeat('7'))
        .take(20)
        .collect();
    match order.endpoint.as_str() {
        "APIElectricityV1.asp"
            if order.params.get("MeterType").map(String::as_str) == Some("01") =>
        {
            out["metertoken"] = json!(format!("Token : {digits}"));
            out["units"] = json!("47.7");
        }
        "APIWAECV1.asp" | "APIJAMBV1.asp" => {
            out["carddetails"] = json!(format!(
                "Serial No:WRN{}, pin: {}",
                &digits[..9],
                &digits[..12]
            ));
        }
        "APIEPINV1.asp" => out["carddetails"] = json!(epins(request_id, order)),
        _ => {}
    }
    out
}

fn epins(request_id: &str, order: &Order) -> Vec<Value> {
    let quantity: u32 = order
        .params
        .get("Quantity")
        .and_then(|q| q.parse().ok())
        .unwrap_or(1);
    (0..quantity)
        .map(|i| json!({ "transactionid": format!("{}{i}", order.order_id), "batchno": "203682",
            "mobilenetwork": "MTN", "sno": format!("SN{}{i:03}", order.order_id), "pin": format!("{}{i:03}", &request_id[2..15]),
            "amount": order.params.get("Value") }))
        .collect()
}
