//! A fake SME-data site (the Django REST script that Husmodata,
//! Gladtidings, Datastation… run), written from
//! ../shared/design/integrations.md ("A third supplier family"), not from
//! our adapter: `Authorization: Token …` (else `401 {"detail": …}`);
//! collection routes with their trailing slash (without it: the script's
//! `DEBUG` 500 page); `POST /api/data/`, `topup/`, `billpayment/`
//! (`Customer_Phone` required: a 500 without it, as the script's KeyError),
//! `cablesub/`, `epin/`; an order's own route `GET /api/<route>/<id>` (404
//! with an empty body when unknown); the listing `GET /api/data/` newest
//! first, 15 a page, `{count, next, previous, results}`; `GET /api/user/`
//! with `Account_Balance` (a number), `wallet_balance` (text) and the
//! password hash; `GET /api/network/`; `validateiuc`, `validatemeter`.
//! Answers are records with a capitalised `Status`, numbers as text, the
//! wallet before and after (an API account is charged its own price, not
//! the listed `plan_amount`), `create_date` in the site's (Lagos) time
//! without an offset. Errors: `400 {"error": [...]}`.
//!
//! Variants: the HTTP status of a purchase's answer (201 as the script, 200
//! as live sites), whether `ident` is taken from the request and echoed
//! (Gladtidings) or made by the site, the network numbering.
//!
//! | number (phone, meter or smartcard) | the purchase | later |
//! |---|---|---|
//! | `08000000400` | `400 {"error": ["Please check entered number is not MTN user …"]}`: no order, no charge | — |
//! | `08000000102` | `processing` | `successful` when next read |
//! | `08000000602` | `successful` | `failed` once [`FakeSmedata::fail_by_admin`] (the wallet refunded) |
//! | `08000000502` | HTML 502 page; the order was made (`successful`) | |
//! | `08000000000` | connection dropped; the order was made | |
//! | `08000000300` | answered after [`FakeSmedata::set_slow`]; the order was made | |
//! | `08000000500` | HTML 500 after the wallet was charged, no order (the script offline) | |
//! | anything else | `successful` | |

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const TOKEN: &str = "fake-smedata-token-0123456789";

/// A data plan the site lists: (id, network id, plan_type, size, listed naira, charged naira).
pub type PlanRow = (
    u64,
    u32,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

#[derive(Clone)]
struct SiteOrder {
    id: u64,
    route: String,
    ident: String,
    number: String,
    request: Value,
    plan: Option<u64>,
    status: &'static str,
    /// What the next read finds.
    settles_to: &'static str,
    /// Kobo.
    before: i64,
    after: i64,
    create_date: String,
}

struct Books {
    token: String,
    /// Kobo.
    balance: i64,
    orders: Vec<SiteOrder>,
    /// Every POST received: (route, body).
    posts: Vec<(String, Value)>,
    next_id: u64,
    answer_status: u16,
    takes_ident: bool,
    /// The site's network ids: id → name (`MTN`).
    networks: HashMap<u32, &'static str>,
    slow: Duration,
    plans: Vec<PlanRow>,
    /// Reads of an order by its id, and listing pages read.
    item_reads: usize,
    listing_reads: usize,
}

#[derive(Clone)]
pub struct FakeSmedata {
    pub base: String,
    books: Arc<Mutex<Books>>,
}

/// The script's seed numbering.
pub const SCRIPT_NETWORKS: [(u32, &str); 4] =
    [(1, "MTN"), (2, "GLO"), (3, "9MOBILE"), (4, "AIRTEL")];

impl FakeSmedata {
    /// A site answering `201` as the script does, making its own `ident`,
    /// numbering networks as the script's seed.
    pub async fn start() -> FakeSmedata {
        Self::start_with(201, false, &SCRIPT_NETWORKS).await
    }

    pub async fn start_with(
        answer_status: u16,
        takes_ident: bool,
        networks: &[(u32, &'static str)],
    ) -> FakeSmedata {
        let books = Arc::new(Mutex::new(Books {
            token: TOKEN.into(),
            balance: 5_000_000,
            orders: Vec::new(),
            posts: Vec::new(),
            next_id: 108_600,
            answer_status,
            takes_ident,
            networks: networks.iter().copied().collect(),
            slow: Duration::from_secs(3),
            // The 1 GB SME plan is listed at 300 and charged 250 (the script's sample).
            plans: vec![
                (6, 1, "SME", "1.0GB", "300", "250"),
                (7, 1, "GIFTING", "2.0GB", "₦600.0", "560"),
                (8, 1, "CORPORATE GIFTING", "1.0GB", "280.0", "265.5"),
            ],
            item_reads: 0,
            listing_reads: 0,
        }));
        let app = Router::new()
            .route("/api/user/", get(user))
            .route("/api/network/", get(network))
            .route("/api/validateiuc", get(validate_iuc))
            .route("/api/validatemeter", get(validate_meter))
            .route("/api/{route}/", get(listing).post(purchase))
            .route("/api/{route}/{id}", get(item))
            .route("/api/{route}", get(no_slash).post(no_slash))
            .with_state(books.clone());
        let base = crate::serve_apart(app);
        FakeSmedata { base, books }
    }

    /// The site's base URL as an owner writes it, with `/api/`.
    pub fn api_url(&self) -> String {
        format!("{}/api/", self.base)
    }

    /// The config file's section of this site, named `name`.
    pub fn section(&self, name: &str, extra: &str) -> String {
        format!(
            "[suppliers.{name}]\nkind = \"smedata\"\nbase_url = \"{}\"\ntoken = \"{TOKEN}\"\ntimeout_ms = 1000\ncustomer_phone = \"08030000000\"\n{extra}\n",
            self.api_url()
        )
    }

    pub fn set_slow(&self, slow: Duration) {
        self.books.lock().unwrap().slow = slow;
    }

    /// The plans `/api/network/` lists (and their charged prices).
    pub fn set_plans(&self, plans: Vec<PlanRow>) {
        self.books.lock().unwrap().plans = plans;
    }

    /// The owner rotates the token at the site: ours is refused now.
    pub fn rotate_token(&self) {
        self.books.lock().unwrap().token = "rotated".into();
    }

    /// The owner gives the site our token back: it answers again.
    pub fn restore_token(&self) {
        self.books.lock().unwrap().token = TOKEN.into();
    }

    /// The owner funds the site's wallet: it holds `kobo` now (it starts
    /// with ₦50,000, 200 of the 1 GB SME plan; a benchmark buys more).
    pub fn set_balance(&self, kobo: i64) {
        self.books.lock().unwrap().balance = kobo;
    }

    /// The wallet, in kobo.
    pub fn balance(&self) -> i64 {
        self.books.lock().unwrap().balance
    }

    /// Every purchase POST received for a number.
    pub fn posts_for(&self, number: &str) -> Vec<Value> {
        let books = self.books.lock().unwrap();
        books
            .posts
            .iter()
            .filter(|(_, b)| number_of(b) == number)
            .map(|(_, b)| b.clone())
            .collect()
    }

    /// The orders the site made (and charged for) for a number.
    pub fn orders_for(&self, number: &str) -> usize {
        let books = self.books.lock().unwrap();
        books.orders.iter().filter(|o| o.number == number).count()
    }

    /// The site's id of its order for a number (the latest).
    pub fn order_id(&self, number: &str) -> Option<u64> {
        let books = self.books.lock().unwrap();
        books
            .orders
            .iter()
            .rev()
            .find(|o| o.number == number)
            .map(|o| o.id)
    }

    pub fn item_reads(&self) -> usize {
        self.books.lock().unwrap().item_reads
    }

    pub fn listing_reads(&self) -> usize {
        self.books.lock().unwrap().listing_reads
    }

    /// The site's admin sets a number's orders `failed` and saves: the
    /// wallet is refunded (once).
    pub fn fail_by_admin(&self, number: &str) {
        let mut books = self.books.lock().unwrap();
        let mut refund = 0;
        for order in books
            .orders
            .iter_mut()
            .filter(|o| o.number == number && o.status != "failed")
        {
            refund += order.before - order.after;
            (order.status, order.settles_to) = ("failed", "failed");
        }
        books.balance += refund;
    }

    /// Orders made by others (the owner's own shop, the site's page) for
    /// other numbers, so a listing has pages.
    pub fn other_orders(&self, count: usize) {
        let mut books = self.books.lock().unwrap();
        for i in 0..count {
            let request = json!({ "network": 1, "mobile_number": format!("0807{i:07}"), "plan": 6, "Ported_number": true });
            make_order(
                &mut books,
                "data",
                &request,
                Some(25_000),
                "successful",
                "successful",
            );
        }
    }
}

fn number_of(body: &Value) -> String {
    ["mobile_number", "meter_number", "smart_card_number"]
        .iter()
        .find_map(|k| match &body[*k] {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .unwrap_or_default()
}

fn naira(kobo: i64) -> String {
    // As the script writes a Decimal: "2698.6", "49750.0".
    let text = format!("{}.{:02}", kobo / 100, kobo % 100);
    let trimmed = text.trim_end_matches('0');
    if trimmed.ends_with('.') {
        format!("{trimmed}0")
    } else {
        trimmed.to_owned()
    }
}

fn kobo(naira: &str) -> i64 {
    let clean = naira.trim_start_matches('₦');
    let (whole, fraction) = clean.split_once('.').unwrap_or((clean, "0"));
    let fraction = format!("{fraction:0<2}");
    whole.parse::<i64>().unwrap() * 100 + fraction[..2].parse::<i64>().unwrap()
}

/// The site's local time (Lagos), without an offset, as the script writes it.
fn site_now() -> String {
    let now = time::OffsetDateTime::now_utc().to_offset(time::macros::offset!(+1));
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.microsecond()
    )
}

fn make_order(
    books: &mut Books,
    route: &str,
    request: &Value,
    price: Option<i64>,
    status: &'static str,
    settles_to: &'static str,
) -> SiteOrder {
    books.next_id += 1;
    let price = price.unwrap_or(0);
    let before = books.balance;
    books.balance -= price;
    let ident = match (&request["ident"], books.takes_ident) {
        (Value::String(ours), true) => ours.clone(),
        _ => format!("61{:08x}-6e3a-407c-96a0-162a85aa6496", books.next_id),
    };
    let order = SiteOrder {
        id: books.next_id,
        route: route.into(),
        ident,
        number: number_of(request),
        request: request.clone(),
        plan: request["plan"].as_u64(),
        status,
        settles_to,
        before,
        after: books.balance,
        create_date: site_now(),
    };
    books.orders.push(order.clone());
    order
}

fn record(order: &SiteOrder, books: &Books) -> Value {
    let mut out = json!({
        "id": order.id,
        "ident": order.ident,
        "Status": order.status,
        "balance_before": naira(order.before),
        "balance_after": naira(order.after),
        "create_date": order.create_date,
    });
    match order.route.as_str() {
        "data" => {
            let plan = books.plans.iter().find(|p| Some(p.0) == order.plan);
            out["network"] = order.request["network"].clone();
            out["mobile_number"] = json!(order.number);
            out["plan"] = json!(order.plan);
            out["plan_network"] = json!(
                plan.and_then(|p| books.networks.get(&p.1))
                    .copied()
                    .unwrap_or("")
            );
            out["plan_name"] = json!(plan.map_or("", |p| p.3));
            out["plan_amount"] = json!(plan.map_or(String::new(), |p| format!(
                "₦{}",
                p.4.trim_start_matches('₦')
            )));
            out["Ported_number"] = json!(true);
        }
        "topup" => {
            out["mobile_number"] = json!(order.number);
            out["amount"] = json!(order.request["amount"].to_string().trim_matches('"'));
            out["paid_amount"] = json!(naira(order.before - order.after));
            out["airtime_type"] = order.request["airtime_type"].clone();
        }
        "billpayment" => {
            out["meter_number"] = json!(order.number);
            out["Customer_Phone"] = order.request["Customer_Phone"].clone();
            out["paid_amount"] = json!(naira(order.before - order.after));
            if order.status == "successful" {
                out["token"] = json!("Token : 42167939603201733524");
            }
        }
        "cablesub" => {
            out["smart_card_number"] = json!(order.number);
            out["customer_name"] = json!("ADA OBI");
        }
        "epin" => {
            // Exam pins name the balances otherwise.
            let map = out.as_object_mut().unwrap();
            map.remove("balance_before");
            map.remove("balance_after");
            out["previous_balance"] = json!(naira(order.before));
            out["after_balance"] = json!(naira(order.after));
            out["exam_name"] = order.request["exam_name"].clone();
            out["quantity"] = order.request["quantity"].clone();
            if order.status == "successful" {
                let count = order.request["quantity"].as_u64().unwrap_or(1);
                let pins: Vec<String> = (0..count)
                    .map(|i| format!("{}{i:03}", 930_000_000 + order.id))
                    .collect();
                out["pins"] = json!(pins.join(","));
            }
        }
        _ => {}
    }
    out
}

/// Refused: a 401 (boxed: a response is large).
fn authorized(books: &Books, headers: &HeaderMap) -> Result<(), Box<Response>> {
    let given = headers.get("authorization").and_then(|v| v.to_str().ok());
    match given.and_then(|g| g.strip_prefix("Token ")) {
        Some(token) if token == books.token => Ok(()),
        Some(_) => Err((
            StatusCode::UNAUTHORIZED,
            [("WWW-Authenticate", "Token")],
            Json(json!({ "detail": "Invalid token." })),
        )
            .into_response()
            .into()),
        None => Err((
            StatusCode::UNAUTHORIZED,
            [("WWW-Authenticate", "Token")],
            Json(json!({ "detail": "Authentication credentials were not provided." })),
        )
            .into_response()
            .into()),
    }
}

fn html(status: StatusCode, title: &str) -> Response {
    (
        status,
        [("content-type", "text/html")],
        format!("<!DOCTYPE html><html><body><h1>{title}</h1></body></html>"),
    )
        .into_response()
}

async fn no_slash() -> Response {
    html(
        StatusCode::INTERNAL_SERVER_ERROR,
        "RuntimeError: You called this URL via POST, but the URL doesn't end in a slash",
    )
}

async fn user(State(books): State<Arc<Mutex<Books>>>, headers: HeaderMap) -> Response {
    let books = books.lock().unwrap();
    if let Err(refused) = authorized(&books, &headers) {
        return *refused;
    }
    let naira_number = books.balance as f64 / 100.0;
    Json(json!({
        "user": {
            "id": 1, "email": "owner@example.com", "username": "owner", "FullName": "Owner",
            "password": "pbkdf2_sha256$260000$fakesalt$fakehash=",
            "user_type": "API",
            "Account_Balance": naira_number,
            "wallet_balance": format!("{}", (books.balance + 50) / 100),
            "bonus_balance": "0.0",
        },
        "Dataplans": { "MTN_PLAN": { "ALL": plan_rows(&books) } },
        "notification": "",
    }))
    .into_response()
}

fn plan_rows(books: &Books) -> Vec<Value> {
    books
        .plans
        .iter()
        .map(|(id, network, kind, size, listed, _)| {
            json!({ "id": id, "dataplan_id": id.to_string(), "network": network, "plan_type": kind,
                    "plan_network": books.networks.get(network).copied().unwrap_or(""), "month_validate": "30 days",
                    "plan": size, "plan_amount": listed })
        })
        .collect()
}

async fn network(State(books): State<Arc<Mutex<Books>>>, headers: HeaderMap) -> Response {
    let books = books.lock().unwrap();
    if let Err(refused) = authorized(&books, &headers) {
        return *refused;
    }
    let mut by_network: serde_json::Map<String, Value> = serde_json::Map::new();
    for (id, name) in &books.networks {
        let rows: Vec<Value> = plan_rows(&books)
            .into_iter()
            .filter(|r| r["network"] == *id)
            .collect();
        by_network.insert(format!("{name}_PLAN"), json!(rows));
    }
    Json(Value::Object(by_network)).into_response()
}

async fn validate_iuc(Query(q): Query<HashMap<String, String>>) -> Response {
    let found = q.get("smart_card_number").map(String::as_str) == Some("1212121212");
    Json(json!({ "invalid": !found, "name": if found { "ADA OBI" } else { "INVALID SMARTCARD NUMBER" } })).into_response()
}

async fn validate_meter(Query(q): Query<HashMap<String, String>>) -> Response {
    let found = q.get("meternumber").map(String::as_str) == Some("1111111111111");
    Json(json!({ "invalid": !found, "name": if found { "ADA OBI" } else { "INVALID METER NUMBER" }, "address": "1 Marina, Lagos" })).into_response()
}

async fn listing(
    State(books): State<Arc<Mutex<Books>>>,
    Path(route): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let mut books = books.lock().unwrap();
    if let Err(refused) = authorized(&books, &headers) {
        return *refused;
    }
    books.listing_reads += 1;
    for order in books.orders.iter_mut().filter(|o| o.route == route) {
        order.status = order.settles_to;
    }
    let page: usize = q
        .get("page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1);
    let mine: Vec<&SiteOrder> = books
        .orders
        .iter()
        .rev()
        .filter(|o| o.route == route)
        .collect();
    let results: Vec<Value> = mine
        .iter()
        .skip((page - 1) * 15)
        .take(15)
        .map(|o| record(o, &books))
        .collect();
    let base = format!(
        "http://{}/api/{route}/",
        headers
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost")
    );
    let next = (page * 15 < mine.len()).then(|| format!("{base}?page={}", page + 1));
    let previous = (page > 1).then(|| format!("{base}?page={}", page - 1));
    Json(json!({ "count": mine.len(), "next": next, "previous": previous, "results": results }))
        .into_response()
}

async fn item(
    State(books): State<Arc<Mutex<Books>>>,
    Path((route, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let mut books = books.lock().unwrap();
    if let Err(refused) = authorized(&books, &headers) {
        return *refused;
    }
    books.item_reads += 1;
    let Some(index) = books
        .orders
        .iter()
        .position(|o| o.route == route && o.id.to_string() == id)
    else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let settles_to = books.orders[index].settles_to;
    books.orders[index].status = settles_to;
    Json(record(&books.orders[index], &books)).into_response()
}

/// What an order costs this (API) account, kobo; `Err`: refused.
fn price(books: &Books, route: &str, body: &Value) -> Result<i64, Box<Response>> {
    let refuse = |field: &str, message: &str| {
        Err((StatusCode::BAD_REQUEST, Json(json!({ field: [message] })))
            .into_response()
            .into())
    };
    let amount = |v: &Value| {
        v.as_i64().or_else(|| {
            v.as_str()
                .and_then(|s| s.parse::<f64>().ok())
                .map(|f| f as i64)
        })
    };
    match route {
        "data" => {
            let Some(network) = body["network"]
                .as_u64()
                .and_then(|n| books.networks.get(&(n as u32)))
            else {
                return refuse("network", "This field is required.");
            };
            let Some(plan) = body["plan"]
                .as_u64()
                .and_then(|p| books.plans.iter().find(|r| r.0 == p))
            else {
                return refuse(
                    "plan",
                    &format!("Invalid pk \"{}\" - object does not exist.", body["plan"]),
                );
            };
            if books.networks.get(&plan.1) != Some(network) {
                return refuse(
                    "error",
                    &format!("invalid plan id {} for {network}", plan.0),
                );
            }
            Ok(kobo(plan.5))
        }
        "topup" => match amount(&body["amount"]) {
            Some(naira) if naira >= 50 && body["airtime_type"] == "VTU" => Ok(naira * 98),
            _ => refuse(
                "error",
                "minimum airtime is 50 and airtime_type is required",
            ),
        },
        "billpayment" => match amount(&body["amount"]) {
            Some(naira) if naira >= 500 => Ok(naira * 100),
            _ => refuse("error", "Minimum amount is 500"),
        },
        "cablesub" => Ok(157_500),
        "epin" => match body["quantity"].as_u64() {
            Some(q @ 1..=5) => Ok(q as i64 * 330_000),
            _ => refuse("quantity", "Ensure this value is less than or equal to 5."),
        },
        _ => Err(StatusCode::NOT_FOUND.into_response().into()),
    }
}

async fn purchase(
    State(books): State<Arc<Mutex<Books>>>,
    Path(route): Path<String>,
    headers: HeaderMap,
    body: Json<Value>,
) -> Response {
    let Json(body) = body;
    let number = number_of(&body);
    let (order, answer_status, slow) = {
        let mut books = books.lock().unwrap();
        if let Err(refused) = authorized(&books, &headers) {
            return *refused;
        }
        books.posts.push((route.clone(), body.clone()));
        if route == "billpayment" && body.get("Customer_Phone").is_none() {
            // The script's view reads it without a default: a KeyError.
            return html(
                StatusCode::INTERNAL_SERVER_ERROR,
                "KeyError at /api/billpayment/ 'Customer_Phone'",
            );
        }
        if number == "08000000400" {
            return (StatusCode::BAD_REQUEST, Json(json!({ "error": ["Please check entered number is not MTN user and try again"] }))).into_response();
        }
        let charged = match price(&books, &route, &body) {
            Ok(charged) => charged,
            Err(refused) => return *refused,
        };
        if charged > books.balance {
            return (StatusCode::BAD_REQUEST, Json(json!({ "error": ["You can't purchase this plan due to insufficient balance"] }))).into_response();
        }
        if number == "08000000500" {
            // Charged, then the upstream failed: no order, a 500 page.
            books.balance -= charged;
            return html(StatusCode::INTERNAL_SERVER_ERROR, "Server Error (500)");
        }
        let (status, settles_to) = match number.as_str() {
            "08000000102" => ("processing", "successful"),
            _ => ("successful", "successful"),
        };
        let order = make_order(&mut books, &route, &body, Some(charged), status, settles_to);
        let answer = record(&order, &books);
        (answer, books.answer_status, books.slow)
    };
    match number.as_str() {
        "08000000502" => return html(StatusCode::BAD_GATEWAY, "502 Bad Gateway"),
        // Dropped without an answer: abort the connection's task quietly.
        "08000000000" => std::panic::resume_unwind(Box::new("connection dropped")),
        "08000000300" => tokio::time::sleep(slow).await,
        _ => {}
    }
    (StatusCode::from_u16(answer_status).unwrap(), Json(order)).into_response()
}
