//! A fake Termii, written from Termii's public messaging docs
//! (developer.termii.com/messaging-api; the older copy of its docs):
//! `POST /api/sms/send` with JSON `{api_key, to, from, sms, type, channel}`,
//! `to` a number (international, no `+`) or an array of them; the key is in
//! the body, never a header. It answers 200 `{"message_id": "…", "message":
//! "Successfully Sent", "balance": …, "user": …}` (the docs' form) or, told
//! to, the form some answers take (`"code": "ok"` and a numeric
//! `message_id`); a wrong key 401, an unknown sender ID 404 with Termii's
//! words, and on demand any status for the next N sends. It records every
//! request it received.

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const API_KEY: &str = "TLfakeTermiiKey0123456789";
pub const SENDER_ID: &str = "TestShop";

/// How a 200 answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnswerForm {
    /// `message_id` a string (the messaging docs).
    #[default]
    Documented,
    /// `"code": "ok"` and `message_id` a JSON number (bulk answers, one client).
    Numeric,
}

#[derive(Default)]
struct Books {
    requests: Vec<Value>,
    /// (status, body, how many more sends get it).
    fail_next: Option<(u16, Value, usize)>,
    form: AnswerForm,
    next_id: u64,
}

#[derive(Clone)]
pub struct FakeTermii {
    pub base: String,
    books: Arc<Mutex<Books>>,
}

impl FakeTermii {
    pub async fn start() -> FakeTermii {
        let books = Arc::new(Mutex::new(Books::default()));
        let app = Router::new()
            .route("/api/sms/send", post(send))
            .route("/api/get-balance", get(balance))
            .with_state(books.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        FakeTermii { base, books }
    }

    /// The environment that sends billpay's SMS here.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("BILLPAY_TERMII_BASE_URL", self.base.clone()),
            ("BILLPAY_TERMII_API_KEY", API_KEY.into()),
            ("BILLPAY_TERMII_SENDER_ID", SENDER_ID.into()),
        ]
    }

    /// Every `POST /api/sms/send` body received.
    pub fn requests(&self) -> Vec<Value> {
        self.books.lock().unwrap().requests.clone()
    }

    pub fn answer_in(&self, form: AnswerForm) {
        self.books.lock().unwrap().form = form;
    }

    /// The next `count` sends are answered `status` with `body`.
    pub fn fail_next(&self, count: usize, status: u16, body: Value) {
        self.books.lock().unwrap().fail_next = Some((status, body, count));
    }

    /// Waits until at least `count` sends arrived (panics after `timeout`).
    pub async fn wait_for(&self, count: usize, timeout: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let requests = self.requests();
            if requests.len() >= count {
                return requests;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "fake Termii got {} sends, not {count}, within {timeout:?}",
                requests.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn send(
    State(books): State<Arc<Mutex<Books>>>,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let mut books = books.lock().unwrap();
    books.requests.push(body.clone());
    if let Some((status, answer, left)) = &mut books.fail_next
        && *left > 0
    {
        *left -= 1;
        return (StatusCode::from_u16(*status).unwrap(), Json(answer.clone()));
    }
    if body["api_key"] != API_KEY {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"message": "Unauthenticated"})),
        );
    }
    let sender = body["from"].as_str().unwrap_or_default();
    if sender != SENDER_ID {
        let words = format!(
            "ApplicationSenderId not found for applicationId: 53060 and senderName: {sender}"
        );
        return (StatusCode::NOT_FOUND, Json(json!({"message": words})));
    }
    let to_ok = |n: &Value| {
        n.as_str()
            .is_some_and(|n| n.len() == 13 && n.starts_with("234"))
    };
    let numbers_ok = match &body["to"] {
        Value::Array(numbers) => {
            !numbers.is_empty() && numbers.len() <= 100 && numbers.iter().all(to_ok)
        }
        one => to_ok(one),
    };
    let channel_ok = matches!(
        body["channel"].as_str(),
        Some("dnd" | "generic" | "whatsapp")
    );
    if !numbers_ok || !channel_ok || body["sms"].as_str().is_none_or(str::is_empty) {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"message": "Invalid request: check to, channel and sms"})),
        );
    }
    books.next_id += 1;
    let id = 9_122_821_270_554_876_000 + books.next_id;
    let answer = match books.form {
        AnswerForm::Documented => {
            json!({"message_id": id.to_string(), "message": "Successfully Sent", "balance": 9, "user": "Test Shop"})
        }
        AnswerForm::Numeric => {
            json!({"code": "ok", "message_id": id, "message": "Successfully Sent", "balance": 77.5, "user": "Test Shop"})
        }
    };
    (StatusCode::OK, Json(answer))
}

async fn balance(State(_): State<Arc<Mutex<Books>>>) -> Json<Value> {
    Json(json!({"user": "Test Shop", "balance": 9, "currency": "NGN"}))
}
