//! A fake Monnify, written from Monnify's public API reference
//! (developers.monnify.com): `POST /api/v1/auth/login` (HTTP Basic
//! `apiKey:secretKey` → a bearer token with `expiresIn`), `POST
//! /api/v2/bank-transfer/reserved-accounts`, `GET /api/v2/transactions/{ref}`
//! (the reference URL-encoded, `|` as `%7C`), `GET
//! /api/v1/bank-transfer/reserved-accounts/transactions`, every answer in
//! the `{requestSuccessful, responseMessage, responseCode, responseBody}`
//! envelope; and its webhooks, signed like Monnify's (hex HMAC-SHA512 of the
//! compact body under the secret key — [`sign`] reproduces Monnify's
//! published test vector, checked below).
//!
//! Its identity checks, written from ../shared/design/integrations.md
//! ("Monnify identity checks (KYC)"), not from billpay's adapter: `POST
//! /api/v1/vas/bvn-details-match` (`{bvn, name, dateOfBirth: dd-MMM-yyyy,
//! mobileNo}` → `name.matchStatus` `FULL_MATCH` when every name given is on
//! the BVN, `PARTIAL_MATCH` for at least two, else `NO_MATCH`; `dateOfBirth`
//! and `mobileNo` exact) and `POST /api/v1/vas/nin-details` (`{nin}` → the
//! record), bearer token from the login, an unknown number `responseCode
//! "99"`. The people it knows are [`BVN_PERSON`], [`BVN_OTHER`],
//! [`NIN_PERSON`] and [`NIN_PHONE_NUMBER`] (the last answers `phoneNumber`
//! instead of `mobileNumber`).
//!
//! Its verify endpoint can be made slow, down (503) or to answer garbage
//! ([`Verify`]); a webhook's body can claim another amount than the one
//! Monnify holds ([`FakeMonnify::webhook_claiming`]).

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha512;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const API_KEY: &str = "MK_TEST_FAKE0123";
pub const SECRET_KEY: &str = "FAKESECRETKEY0123456789ABCDEFGHI";
pub const CONTRACT_CODE: &str = "7059707855";

/// How `GET /api/v2/transactions/{ref}` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    Normal,
    /// Answers after this long (billpay's client gives up first).
    Slow(Duration),
    /// 503 with an HTML page.
    Down,
    /// 200 with a body that is not Monnify's.
    Garbage,
}

#[derive(Default)]
struct Books {
    tokens: Vec<String>,
    logins: usize,
    reserve_calls: usize,
    /// accountReference → (customer name, its accounts).
    reservations: HashMap<String, Vec<Value>>,
    /// transactionReference → the transaction as Monnify holds it.
    payments: HashMap<String, Value>,
    /// In the order they were made.
    order: Vec<String>,
    verify: Option<Verify>,
    verify_calls: usize,
    /// Identity checks answered (BVN, NIN).
    bvn_checks: usize,
    nin_checks: usize,
    next: u64,
}

/// Integrations.md's sample BVN and the person on it.
pub const BVN_PERSON: &str = "22222222226";
pub const BVN_PERSON_NAME: &str = "OLATUNDE JOSIAH OGUNBOYEJO";
pub const BVN_PERSON_BIRTH: &str = "27-Apr-1993";
pub const BVN_PERSON_PHONE: &str = "08142223149";
/// Another BVN, of ADA NGOZI OKAFOR born 01-Jan-1990, phone 08031234567.
pub const BVN_OTHER: &str = "22233344455";
/// A NIN of the same person as [`BVN_PERSON`] (born 1993-04-27).
pub const NIN_PERSON: &str = "70123456789";
/// A NIN whose record gives `phoneNumber` (ADA NGOZI OKAFOR, 1990-01-01).
pub const NIN_PHONE_NUMBER: &str = "70123456790";

/// (name, date of birth as the BVN check takes it, phone) of a BVN.
fn bvn_record(bvn: &str) -> Option<(&'static str, &'static str, &'static str)> {
    match bvn {
        BVN_PERSON => Some((BVN_PERSON_NAME, BVN_PERSON_BIRTH, BVN_PERSON_PHONE)),
        BVN_OTHER => Some(("ADA NGOZI OKAFOR", "01-Jan-1990", "08031234567")),
        _ => None,
    }
}

fn nin_record(nin: &str) -> Option<Value> {
    match nin {
        NIN_PERSON => Some(json!({
            "nin": nin, "firstName": "OLATUNDE", "middleName": "JOSIAH", "lastName": "OGUNBOYEJO",
            "dateOfBirth": "1993-04-27", "gender": "M", "mobileNumber": BVN_PERSON_PHONE
        })),
        NIN_PHONE_NUMBER => Some(json!({
            "nin": nin, "firstName": "ADA", "middleName": "NGOZI", "lastName": "OKAFOR",
            "dateOfBirth": "1990-01-01", "gender": "F", "phoneNumber": "08031234567"
        })),
        _ => None,
    }
}

#[derive(Clone)]
pub struct FakeMonnify {
    pub base: String,
    books: Arc<Mutex<Books>>,
}

/// Monnify's signature of a webhook body.
pub fn sign(key: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha512>::new_from_slice(key.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

impl FakeMonnify {
    pub async fn start() -> FakeMonnify {
        let books = Arc::new(Mutex::new(Books::default()));
        let app = Router::new()
            .route("/api/v1/auth/login", post(login))
            .route("/api/v2/bank-transfer/reserved-accounts", post(reserve))
            .route("/api/v2/transactions/{reference}", get(verify))
            .route(
                "/api/v1/bank-transfer/reserved-accounts/transactions",
                get(list),
            )
            .route("/api/v1/vas/bvn-details-match", post(bvn_details_match))
            .route("/api/v1/vas/nin-details", post(nin_details))
            .with_state(books.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        FakeMonnify { base, books }
    }

    /// The environment that turns Monnify on in `billpay` (a trailing `/`
    /// on the base URL, as an operator may write it).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("BILLPAY_MONNIFY_BASE_URL", format!("{}/", self.base)),
            ("BILLPAY_MONNIFY_API_KEY", API_KEY.into()),
            ("BILLPAY_MONNIFY_SECRET_KEY", SECRET_KEY.into()),
            ("BILLPAY_MONNIFY_CONTRACT_CODE", CONTRACT_CODE.into()),
        ]
    }

    pub fn set_verify(&self, verify: Verify) {
        self.books.lock().unwrap().verify = Some(verify);
    }

    pub fn logins(&self) -> usize {
        self.books.lock().unwrap().logins
    }

    pub fn reserve_calls(&self) -> usize {
        self.books.lock().unwrap().reserve_calls
    }

    pub fn verify_calls(&self) -> usize {
        self.books.lock().unwrap().verify_calls
    }

    /// Identity checks answered: (BVN, NIN).
    pub fn identity_checks(&self) -> (usize, usize) {
        let books = self.books.lock().unwrap();
        (books.bvn_checks, books.nin_checks)
    }

    /// The first account number reserved under `account_ref`.
    pub fn account_number(&self, account_ref: &str) -> String {
        let books = self.books.lock().unwrap();
        books.reservations[account_ref][0]["accountNumber"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// A customer transfers `naira` to the reserved account of
    /// `account_ref` (or, with `None`, to an account number Monnify knows
    /// but billpay does not); returns its transactionReference.
    pub fn transfer(&self, account_ref: Option<&str>, naira: f64) -> String {
        let mut books = self.books.lock().unwrap();
        books.next += 1;
        let reference = format!("MNFY|04|20261124093000|{:06}", books.next);
        let (product_ref, number) = match account_ref {
            Some(r) => {
                let number = books.reservations[r][0]["accountNumber"].clone();
                (json!(r), number)
            }
            None => (
                json!(format!("unknown-{}", books.next)),
                json!("5000000001"),
            ),
        };
        let now = lagos_now();
        let payment = json!({
            "transactionReference": reference,
            "paymentReference": format!("MNFY|PAYREF|{}", books.next),
            "amountPaid": naira, "totalPayable": naira,
            "settlementAmount": format!("{:.2}", naira - 10.75),
            "paidOn": now, "completedOn": now,
            "paymentStatus": "PAID", "paymentDescription": "Test Co",
            "paymentMethod": "ACCOUNT_TRANSFER", "currency": "NGN",
            "product": {"type": "RESERVED_ACCOUNT", "reference": product_ref},
            "destinationAccountInformation": {"bankCode": "035", "bankName": "Wema bank", "accountNumber": number},
            "paymentSourceInformation": [{"bankCode": "058", "amountPaid": naira, "accountName": "ADA OKAFOR", "accountNumber": "0123456789", "sessionId": "090405"}],
            "customer": {"name": "Test Co", "email": "test@example.com"},
            "metaData": {}
        });
        books.payments.insert(reference.clone(), payment);
        books.order.push(reference.clone());
        reference
    }

    /// Monnify changes what it holds about a payment (e.g. `PENDING`).
    pub fn set_status(&self, reference: &str, status: &str) {
        let mut books = self.books.lock().unwrap();
        books.payments.get_mut(reference).unwrap()["paymentStatus"] = json!(status);
    }

    /// Only `naira` of a payment arrived, less than its `totalPayable`:
    /// Monnify reports it `PARTIALLY_PAID` with `amountPaid` what arrived
    /// (and settles that, less its fee).
    pub fn pay_part(&self, reference: &str, naira: f64) {
        let mut books = self.books.lock().unwrap();
        let payment = books.payments.get_mut(reference).unwrap();
        payment["paymentStatus"] = json!("PARTIALLY_PAID");
        payment["amountPaid"] = json!(naira);
        payment["settlementAmount"] = json!(format!("{:.2}", naira - 10.75));
        payment["paymentSourceInformation"][0]["amountPaid"] = json!(naira);
    }

    /// The signed webhook Monnify sends for a payment: (body, signature).
    pub fn webhook(&self, reference: &str) -> (Vec<u8>, String) {
        let payment = self.books.lock().unwrap().payments[reference].clone();
        signed(json!({"eventType": "SUCCESSFUL_TRANSACTION", "eventData": payment}))
    }

    /// The webhook of a payment whose body claims `naira` instead.
    pub fn webhook_claiming(&self, reference: &str, naira: f64) -> (Vec<u8>, String) {
        let mut payment = self.books.lock().unwrap().payments[reference].clone();
        payment["amountPaid"] = json!(naira);
        signed(json!({"eventType": "SUCCESSFUL_TRANSACTION", "eventData": payment}))
    }

    /// An event that is not a payment (a settlement).
    pub fn settlement_webhook(&self) -> (Vec<u8>, String) {
        signed(
            json!({"eventType": "SETTLEMENT", "eventData": {"amount": "1000.00", "settlementReference": "SETT1"}}),
        )
    }
}

fn signed(event: Value) -> (Vec<u8>, String) {
    let body = serde_json::to_vec(&event).unwrap();
    let signature = sign(SECRET_KEY, &body);
    (body, signature)
}

/// Monnify's time format, Lagos time.
fn lagos_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let (days, secs) = (now / 86_400, now % 86_400);
    let (y, m, d) = civil(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.000",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Days since 1970-01-01 → (year, month, day) (H. Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn envelope(body: Value) -> Response {
    Json(json!({"requestSuccessful": true, "responseMessage": "success", "responseCode": "0", "responseBody": body})).into_response()
}

fn refused(status: StatusCode, code: &str, message: &str) -> Response {
    let body =
        json!({"requestSuccessful": false, "responseMessage": message, "responseCode": code});
    (status, Json(body)).into_response()
}

fn bearer_ok(books: &Books, headers: &HeaderMap) -> bool {
    let given = headers.get("authorization").and_then(|v| v.to_str().ok());
    let token = given.and_then(|v| v.strip_prefix("Bearer "));
    token.is_some_and(|t| books.tokens.iter().any(|k| k == t))
}

async fn login(State(books): State<Arc<Mutex<Books>>>, headers: HeaderMap) -> Response {
    let expected =
        base64::engine::general_purpose::STANDARD.encode(format!("{API_KEY}:{SECRET_KEY}"));
    let given = headers.get("authorization").and_then(|v| v.to_str().ok());
    if given != Some(&format!("Basic {expected}")) {
        return refused(StatusCode::UNAUTHORIZED, "99", "Invalid client credentials");
    }
    let mut books = books.lock().unwrap();
    books.logins += 1;
    let token = format!("token-{}", books.logins);
    books.tokens.push(token.clone());
    envelope(json!({"accessToken": token, "expiresIn": 3599}))
}

async fn reserve(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let mut books = books.lock().unwrap();
    if !bearer_ok(&books, &headers) {
        return refused(StatusCode::UNAUTHORIZED, "99", "Unauthorized");
    }
    books.reserve_calls += 1;
    let eleven = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.len() == 11 && s.bytes().all(|b| b.is_ascii_digit()))
    };
    if body["contractCode"] != CONTRACT_CODE || !(eleven(&body["bvn"]) || eleven(&body["nin"])) {
        return refused(
            StatusCode::BAD_REQUEST,
            "99",
            "Invalid contract code, BVN or NIN",
        );
    }
    let reference = body["accountReference"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if books.reservations.contains_key(&reference) {
        return refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "R42",
            "There is an existing reserved account with this reference",
        );
    }
    books.next += 1;
    let name = body["accountName"].as_str().unwrap_or("Customer");
    let accounts = vec![
        json!({"bankCode": "035", "bankName": "Wema bank", "accountNumber": format!("{:010}", 5_100_000_000u64 + books.next), "accountName": name}),
        json!({"bankCode": "50515", "bankName": "Moniepoint Microfinance Bank", "accountNumber": format!("{:010}", 6_100_000_000u64 + books.next), "accountName": name}),
    ];
    books
        .reservations
        .insert(reference.clone(), accounts.clone());
    envelope(json!({
        "contractCode": CONTRACT_CODE, "accountReference": reference, "accountName": name,
        "currencyCode": "NGN", "customerEmail": body["customerEmail"], "customerName": body["customerName"],
        "accounts": accounts, "collectionChannel": "RESERVED_ACCOUNT",
        "reservationReference": format!("RSV{}", books.next), "reservedAccountType": "GENERAL",
        "status": "ACTIVE", "createdOn": lagos_now(), "bvn": body["bvn"], "restrictPaymentSource": false
    }))
}

async fn verify(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Path(reference): Path<String>,
) -> Response {
    let (mode, payment) = {
        let mut books = books.lock().unwrap();
        if !bearer_ok(&books, &headers) {
            return refused(StatusCode::UNAUTHORIZED, "99", "Unauthorized");
        }
        books.verify_calls += 1;
        (
            books.verify.unwrap_or(Verify::Normal),
            books.payments.get(&reference).cloned(),
        )
    };
    match mode {
        Verify::Down => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                "<html>503 Service Temporarily Unavailable</html>",
            )
                .into_response();
        }
        Verify::Garbage => return "<html>maintenance</html>".into_response(),
        Verify::Slow(delay) => tokio::time::sleep(delay).await,
        Verify::Normal => {}
    }
    match payment {
        Some(payment) => envelope(payment),
        None => refused(
            StatusCode::NOT_FOUND,
            "99",
            "Could not find transaction with the specified transaction reference",
        ),
    }
}

async fn list(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let books = books.lock().unwrap();
    if !bearer_ok(&books, &headers) {
        return refused(StatusCode::UNAUTHORIZED, "99", "Unauthorized");
    }
    let account = query.get("accountReference").cloned().unwrap_or_default();
    let page: usize = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(0);
    let size: usize = query.get("size").and_then(|p| p.parse().ok()).unwrap_or(10);
    let mine: Vec<Value> = books
        .order
        .iter()
        .rev()
        .map(|r| books.payments[r].clone())
        .filter(|p| p["product"]["reference"] == account.as_str())
        .collect();
    let content: Vec<Value> = mine.iter().skip(page * size).take(size).cloned().collect();
    let last = (page + 1) * size >= mine.len();
    envelope(
        json!({"content": content, "pageable": {"pageNumber": page, "pageSize": size}, "totalElements": mine.len(), "last": last, "first": page == 0}),
    )
}

/// `{"bvn", "name", "dateOfBirth", "mobileNo"}` → each field's match.
async fn bvn_details_match(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let mut books = books.lock().unwrap();
    if !bearer_ok(&books, &headers) {
        return refused(StatusCode::UNAUTHORIZED, "99", "Unauthorized");
    }
    let text = |field: &str| body[field].as_str().unwrap_or_default().to_owned();
    let (bvn, name, birth, mobile) = (
        text("bvn"),
        text("name"),
        text("dateOfBirth"),
        text("mobileNo"),
    );
    let digits = |s: &str, range: std::ops::RangeInclusive<usize>| {
        range.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
    };
    // dd-MMM-yyyy
    let birth_ok = birth.len() == 11
        && birth.as_bytes()[2] == b'-'
        && birth.as_bytes()[6] == b'-'
        && birth[3..6].bytes().all(|b| b.is_ascii_alphabetic());
    if !digits(&bvn, 11..=11) || name.trim().is_empty() || !birth_ok || !digits(&mobile, 11..=13) {
        return refused(
            StatusCode::BAD_REQUEST,
            "99",
            "Unable to process request. Invalid request",
        );
    }
    let Some((on_bvn, bvn_birth, bvn_phone)) = bvn_record(&bvn) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "99",
            "Unable to process request. Invalid BVN provided",
        );
    };
    books.bvn_checks += 1;
    let on_bvn: Vec<&str> = on_bvn.split(' ').collect();
    let given: Vec<String> = name.split_whitespace().map(str::to_uppercase).collect();
    let matched = given
        .iter()
        .filter(|g| on_bvn.contains(&g.as_str()))
        .count();
    let (status, percent) = if matched == given.len() && matched >= 2 {
        ("FULL_MATCH", 100)
    } else if matched >= 2 {
        ("PARTIAL_MATCH", matched * 100 / given.len())
    } else {
        ("NO_MATCH", matched * 100 / given.len().max(1))
    };
    let exact = |a: &str, b: &str| {
        if a.eq_ignore_ascii_case(b) {
            "FULL_MATCH"
        } else {
            "NO_MATCH"
        }
    };
    envelope(json!({
        "bvn": bvn,
        "name": {"matchStatus": status, "matchPercentage": percent},
        "dateOfBirth": exact(&birth, bvn_birth),
        "mobileNo": exact(&mobile, bvn_phone),
    }))
}

/// `{"nin"}` → the NIN's record.
async fn nin_details(
    State(books): State<Arc<Mutex<Books>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let mut books = books.lock().unwrap();
    if !bearer_ok(&books, &headers) {
        return refused(StatusCode::UNAUTHORIZED, "99", "Unauthorized");
    }
    match nin_record(body["nin"].as_str().unwrap_or_default()) {
        Some(record) => {
            books.nin_checks += 1;
            envelope(record)
        }
        None => refused(StatusCode::BAD_REQUEST, "99", "Invalid NIN"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn signs_like_monnifys_published_example() {
        let body = r#"{"eventData":{"product":{"reference":"111222333","type":"OFFLINE_PAYMENT_AGENT"},"transactionReference":"MNFY|76|20211117154810|000001","paymentReference":"0.01462001097368737","paidOn":"17/11/2021 3:48:10 PM","paymentDescription":"Mockaroo Jesse","metaData":{},"destinationAccountInformation":{},"paymentSourceInformation":{},"amountPaid":78000,"totalPayable":78000,"offlineProductInformation":{"code":"41470","type":"DYNAMIC"},"cardDetails":{},"paymentMethod":"CASH","currency":"NGN","settlementAmount":77600,"paymentStatus":"PAID","customer":{"name":"Mockaroo Jesse","email":"111222333@ZZAMZ4WT4Y3E.monnify"}},"eventType":"SUCCESSFUL_TRANSACTION"}"#;
        assert_eq!(
            super::sign("91MUDL9N6U3BQRXBQ2PJ9M0PW4J22M1Y", body.as_bytes()),
            "f04fb635e04d71648bd3cc7999003da6861483342c856d05ddfa9b2dafacb873b0de1d0f8f67405d0010b4348b721c49fa171d317972618debba6b638aedcd3c"
        );
    }
}
