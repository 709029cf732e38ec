//! A fake Paystack, written from Paystack's public API reference
//! (paystack.com/docs): every call with `Authorization: Bearer <secret
//! key>`, answers `{status, message, data}`; `POST /customer`, `POST
//! /dedicated_account` (answers the account at once), `GET
//! /transaction/verify/{reference}` (amounts in kobo), `GET
//! /transaction?status=success&from=…&perPage=…&page=…`; and its webhooks
//! (`charge.success` with `channel: dedicated_nuban`,
//! `dedicatedaccount.assign.success`), signed with `x-paystack-signature`:
//! hex HMAC-SHA512 of the body under the secret key.
//!
//! Paystack Checkout too: `POST /transaction/initialize` (`amount` an
//! integer in kobo, `reference` unique, `callback_url`) answers
//! `{authorization_url, access_code, reference}`; the initialized
//! transaction verifies `abandoned` until paid. The hosted page
//! (`GET /checkout/{access_code}`, a "Pay" button) marks it `success` by card,
//! sends the signed `charge.success` to the webhook URL when one is set
//! (Paystack sends it whether or not the customer comes back), and sends the
//! browser to `callback_url?trxref=…&reference=…`.

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
    /// access_code → (reference, callback_url) of an initialized checkout.
    checkouts: HashMap<String, (String, String)>,
    /// Every `POST /transaction/initialize` body.
    initialized: Vec<Value>,
    /// Where the hosted page's payments send `charge.success`.
    webhook_url: Option<String>,
    /// The statuses billpay answered those webhooks with.
    delivered: Vec<u16>,
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
            .route("/transaction/initialize", post(initialize))
            .route("/checkout/{code}", get(hosted_page))
            .route("/checkout/{code}/pay", post(hosted_pay))
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

    /// Payments on the hosted page send `charge.success` to `url`.
    pub fn send_webhooks_to(&self, url: &str) {
        self.books.lock().unwrap().webhook_url = Some(url.to_owned());
    }

    /// The statuses billpay answered the hosted page's webhooks with.
    pub fn delivered(&self) -> Vec<u16> {
        self.books.lock().unwrap().delivered.clone()
    }

    /// Every `POST /transaction/initialize` body so far.
    pub fn initialized(&self) -> Vec<Value> {
        self.books.lock().unwrap().initialized.clone()
    }

    /// The customer pays an initialized checkout by card (the hosted page's
    /// button, without a browser); no webhook is sent.
    pub fn pay(&self, reference: &str) {
        mark_paid(&mut self.books.lock().unwrap(), reference);
    }

    /// A `charge.success` for a checkout, signed with another key (forged).
    pub fn forged_webhook(&self, reference: &str) -> (Vec<u8>, String) {
        let mut payment = self.books.lock().unwrap().payments[reference].clone();
        payment["status"] = json!("success");
        let body = json!({"event": "charge.success", "data": payment});
        let body = serde_json::to_vec(&body).unwrap();
        let signature = sign("sk_test_not_the_merchants_key", &body);
        (body, signature)
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

async fn initialize(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorized(&headers) {
        return refused(StatusCode::UNAUTHORIZED, "Invalid key");
    }
    let Some(amount) = body["amount"].as_i64().filter(|a| *a > 0) else {
        return refused(StatusCode::BAD_REQUEST, "Invalid Amount Sent");
    };
    let (Some(email), Some(reference)) = (body["email"].as_str(), body["reference"].as_str())
    else {
        return refused(StatusCode::BAD_REQUEST, "Email and reference are required");
    };
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-.=".contains(c);
    if !reference.chars().all(allowed) {
        return refused(StatusCode::BAD_REQUEST, "Invalid reference");
    }
    let callback = body["callback_url"].as_str().unwrap_or_default().to_owned();
    let base = headers["host"].to_str().unwrap().to_owned();
    let mut books = books.lock().unwrap();
    books.initialized.push(body.clone());
    if books.payments.contains_key(reference) {
        return refused(StatusCode::BAD_REQUEST, "Duplicate Transaction Reference");
    }
    books.next += 1;
    let code = format!("acc{:010}", books.next);
    let payment = json!({
        "id": 4_000_000 + books.next, "domain": "test", "status": "abandoned", "reference": reference,
        "amount": amount, "currency": body["currency"].as_str().unwrap_or("NGN"), "channel": "card",
        "gateway_response": "The transaction was not completed", "paid_at": null, "fees": null,
        "metadata": body["metadata"], "customer": {"id": 7, "customer_code": "CUS_card0001", "email": email},
        "authorization": {}
    });
    books.payments.insert(reference.to_owned(), payment);
    books.order.push(reference.to_owned());
    books
        .checkouts
        .insert(code.clone(), (reference.to_owned(), callback));
    ok(
        "Authorization URL created",
        json!({"authorization_url": format!("http://{base}/checkout/{code}"), "access_code": code,
            "reference": reference}),
    )
}

/// A card payment of an initialized checkout: `success`, with Paystack's fee.
fn mark_paid(books: &mut Books, reference: &str) {
    let payment = books.payments.get_mut(reference).unwrap();
    let amount = payment["amount"].as_i64().unwrap();
    payment["status"] = json!("success");
    payment["gateway_response"] = json!("Successful");
    payment["paid_at"] = json!("2026-11-25T22:00:00.000Z");
    payment["fees"] = json!((amount * 15 / 1000).min(200_000));
    payment["authorization"] = json!({"authorization_code": "AUTH_fake", "bin": "408408",
        "last4": "4081", "exp_month": "12", "exp_year": "2030", "channel": "card",
        "card_type": "visa ", "bank": "TEST BANK", "country_code": "NG", "brand": "visa",
        "reusable": true});
}

async fn hosted_page(State(books): State<Arc<Mutex<Books>>>, Path(code): Path<String>) -> Response {
    let books = books.lock().unwrap();
    let Some((reference, _)) = books.checkouts.get(&code) else {
        return (StatusCode::NOT_FOUND, "no such checkout").into_response();
    };
    let amount = books.payments[reference]["amount"].as_i64().unwrap();
    let page = format!(
        "<!doctype html><html><head><meta name=viewport content='width=device-width'>\
         <title>Paystack Checkout (fake)</title></head><body><h1>Pay NGN <span id=amount>{}.{:02}</span></h1>\
         <p id=reference>{reference}</p><form method=post action=/checkout/{code}/pay>\
         <button id=pay-card type=submit>Pay with card</button></form></body></html>",
        amount / 100,
        amount % 100
    );
    axum::response::Html(page).into_response()
}

async fn hosted_pay(State(books): State<Arc<Mutex<Books>>>, Path(code): Path<String>) -> Response {
    let (reference, callback, webhook) = {
        let mut books = books.lock().unwrap();
        let Some((reference, callback)) = books.checkouts.get(&code).cloned() else {
            return (StatusCode::NOT_FOUND, "no such checkout").into_response();
        };
        mark_paid(&mut books, &reference);
        let body = json!({"event": "charge.success", "data": books.payments[&reference]});
        let webhook = books.webhook_url.clone().map(|url| (url, signed(body)));
        (reference, callback, webhook)
    };
    if let Some((url, (body, signature))) = webhook {
        tokio::spawn(async move {
            let answer = reqwest::Client::new()
                .post(url)
                .header("x-paystack-signature", signature)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await;
            let status = answer.map_or(0, |a| a.status().as_u16());
            books.lock().unwrap().delivered.push(status);
        });
    }
    let back = format!("{callback}?trxref={reference}&reference={reference}");
    (StatusCode::FOUND, [("location", back)]).into_response()
}
