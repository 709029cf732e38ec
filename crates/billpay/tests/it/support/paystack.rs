//! A fake Paystack, written from Paystack's public API reference
//! (paystack.com/docs): every call with `Authorization: Bearer <secret
//! key>`, answers `{status, message, data}`; `POST /customer`, `POST
//! /dedicated_account` (answers the account at once), `GET
//! /transaction/verify/{reference}` (amounts in kobo), `GET
//! /transaction?status=success&from=…&perPage=…&page=…`; and its webhooks
//! (`charge.success` with `channel: dedicated_nuban`,
//! `dedicatedaccount.assign.success`), signed with `x-paystack-signature`:
//! hex HMAC-SHA512 of the body under the secret key.

use super::monnify::{Verify, sign};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub const SECRET_KEY: &str = "sk_test_fakepaystack0123456789abcdef";

#[derive(Default)]
struct Books {
    /// customer_code → the dedicated account.
    customers: HashMap<String, Value>,
    customer_calls: usize,
    dedicated_calls: usize,
    payments: HashMap<String, Value>,
    order: Vec<String>,
    verify: Option<Verify>,
    next: u64,
}

#[derive(Clone)]
pub struct FakePaystack {
    pub base: String,
    books: Arc<Mutex<Books>>,
}

impl FakePaystack {
    pub async fn start() -> FakePaystack {
        let books = Arc::new(Mutex::new(Books::default()));
        let app = Router::new()
            .route("/customer", post(customer))
            .route("/dedicated_account", post(dedicated))
            .route("/transaction/verify/{reference}", get(verify))
            .route("/transaction", get(list))
            .with_state(books.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        FakePaystack { base, books }
    }

    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("BILLPAY_PAYSTACK_BASE_URL", self.base.clone()),
            ("BILLPAY_PAYSTACK_SECRET_KEY", SECRET_KEY.into()),
            ("BILLPAY_PAYSTACK_PREFERRED_BANK", "test-bank".into()),
        ]
    }

    pub fn set_verify(&self, verify: Verify) {
        self.books.lock().unwrap().verify = Some(verify);
    }

    /// (`POST /customer`, `POST /dedicated_account`) calls so far.
    pub fn calls(&self) -> (usize, usize) {
        let books = self.books.lock().unwrap();
        (books.customer_calls, books.dedicated_calls)
    }

    /// The customer code of the one customer with this dedicated account.
    pub fn customer_of(&self, account_number: &str) -> String {
        let books = self.books.lock().unwrap();
        let found = books
            .customers
            .iter()
            .find(|(_, a)| a["account_number"] == account_number);
        found.unwrap().0.clone()
    }

    /// A transfer of `naira` into a dedicated account (`None`: one billpay
    /// does not hold); returns its reference.
    pub fn transfer(&self, account_number: Option<&str>, naira: f64) -> String {
        let mut books = self.books.lock().unwrap();
        books.next += 1;
        let reference = format!("T{:012}", 700_000_000 + books.next);
        let (number, customer) = match account_number {
            Some(number) => {
                let found = books
                    .customers
                    .iter()
                    .find(|(_, a)| a["account_number"] == number);
                (json!(number), json!(found.unwrap().0))
            }
            None => (json!("9999999999"), json!("CUS_stranger")),
        };
        let payment = json!({
            "id": 3_000_000 + books.next, "domain": "test", "status": "success", "reference": reference,
            "amount": (naira * 100.0).round() as i64, "message": null, "gateway_response": "Approved",
            "paid_at": "2026-11-24T09:30:00.000Z", "created_at": "2026-11-24T09:30:00.000Z",
            "channel": "dedicated_nuban", "currency": "NGN", "fees": 5000,
            "customer": {"id": 1, "customer_code": customer, "email": "test@example.com"},
            "authorization": {"channel": "dedicated_nuban", "bank": "Wema Bank",
                "receiver_bank_account_number": number, "receiver_bank": "Wema Bank",
                "sender_name": "ADA OKAFOR", "sender_bank": "GTBank", "sender_bank_account_number": "XXXXXX4567",
                "narration": "funding"}
        });
        books.payments.insert(reference.clone(), payment);
        books.order.push(reference.clone());
        reference
    }

    pub fn set_status(&self, reference: &str, status: &str) {
        let mut books = self.books.lock().unwrap();
        books.payments.get_mut(reference).unwrap()["status"] = json!(status);
    }

    /// The signed `charge.success` Paystack sends: (body, signature).
    pub fn webhook(&self, reference: &str) -> (Vec<u8>, String) {
        let payment = self.books.lock().unwrap().payments[reference].clone();
        signed(json!({"event": "charge.success", "data": payment}))
    }

    pub fn webhook_claiming(&self, reference: &str, naira: f64) -> (Vec<u8>, String) {
        let mut payment = self.books.lock().unwrap().payments[reference].clone();
        payment["amount"] = json!((naira * 100.0).round() as i64);
        signed(json!({"event": "charge.success", "data": payment}))
    }

    /// A later assignment of a dedicated account to `customer_code`.
    pub fn assignment_webhook(
        &self,
        customer_code: &str,
        account_number: &str,
    ) -> (Vec<u8>, String) {
        signed(json!({"event": "dedicatedaccount.assign.success", "data": {
            "customer": {"customer_code": customer_code, "email": "test@example.com"},
            "dedicated_account": {"bank": {"name": "Titan Paystack", "slug": "titan-paystack"},
                "account_name": "PAYSTACK/TEST CO", "account_number": account_number, "active": true},
            "identification": {"status": "success"}}}))
    }

    pub fn transfer_webhook(&self) -> (Vec<u8>, String) {
        signed(
            json!({"event": "transfer.success", "data": {"amount": 100000, "reference": "trf_1"}}),
        )
    }
}

fn signed(event: Value) -> (Vec<u8>, String) {
    let body = serde_json::to_vec(&event).unwrap();
    let signature = sign(SECRET_KEY, &body);
    (body, signature)
}

fn ok(message: &str, data: Value) -> Response {
    Json(json!({"status": true, "message": message, "data": data})).into_response()
}

fn refused(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"status": false, "message": message}))).into_response()
}

fn authorized(headers: &HeaderMap) -> bool {
    let given = headers.get("authorization").and_then(|v| v.to_str().ok());
    given == Some(&format!("Bearer {SECRET_KEY}"))
}

async fn customer(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorized(&headers) {
        return refused(StatusCode::UNAUTHORIZED, "Invalid key");
    }
    let mut books = books.lock().unwrap();
    books.customer_calls += 1;
    books.next += 1;
    let code = format!("CUS_fake{:08}", books.next);
    ok(
        "Customer created",
        json!({"email": body["email"], "first_name": body["first_name"], "last_name": body["last_name"],
        "customer_code": code, "id": books.next, "integration": 100032}),
    )
}

async fn dedicated(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorized(&headers) {
        return refused(StatusCode::UNAUTHORIZED, "Invalid key");
    }
    let mut books = books.lock().unwrap();
    books.dedicated_calls += 1;
    let Some(code) = body["customer"].as_str().map(str::to_owned) else {
        return refused(StatusCode::BAD_REQUEST, "Customer is required");
    };
    books.next += 1;
    let account = json!({
        "bank": {"name": "Test Bank", "id": 24, "slug": body["preferred_bank"]},
        "account_name": "PAYSTACK/TEST CO", "account_number": format!("{:010}", 9_930_000_000u64 + books.next),
        "assigned": true, "currency": "NGN", "active": true, "id": books.next,
        "customer": {"customer_code": code}
    });
    books.customers.insert(code, account.clone());
    ok("NUBAN successfully created", account)
}

async fn verify(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Path(reference): Path<String>,
) -> Response {
    if !authorized(&headers) {
        return refused(StatusCode::UNAUTHORIZED, "Invalid key");
    }
    let (mode, payment) = {
        let books = books.lock().unwrap();
        (
            books.verify.unwrap_or(Verify::Normal),
            books.payments.get(&reference).cloned(),
        )
    };
    match mode {
        Verify::Down => {
            return (StatusCode::BAD_GATEWAY, "<html>502 Bad Gateway</html>").into_response();
        }
        Verify::Garbage => return "not json".into_response(),
        Verify::Slow(delay) => tokio::time::sleep(delay).await,
        Verify::Normal => {}
    }
    match payment {
        Some(payment) => ok("Verification successful", payment),
        None => refused(StatusCode::BAD_REQUEST, "Transaction reference not found"),
    }
}

async fn list(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if !authorized(&headers) {
        return refused(StatusCode::UNAUTHORIZED, "Invalid key");
    }
    let books = books.lock().unwrap();
    let per_page: usize = query
        .get("perPage")
        .and_then(|p| p.parse().ok())
        .unwrap_or(50);
    let page: usize = query
        .get("page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1);
    let wanted = query.get("status").map(String::as_str);
    let all: Vec<Value> = books
        .order
        .iter()
        .rev()
        .map(|r| books.payments[r].clone())
        .filter(|p| wanted.is_none_or(|s| p["status"] == s))
        .collect();
    let data: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .cloned()
        .collect();
    Json(json!({"status": true, "message": "Transactions retrieved", "data": data,
        "meta": {"total": all.len(), "perPage": per_page, "page": page, "pageCount": all.len().div_ceil(per_page)}}))
        .into_response()
}
