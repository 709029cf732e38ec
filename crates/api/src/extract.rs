//! Request extractors that answer in the contract's envelope: JSON bodies
//! (415, 413, 400, 422 with the field named) and the authenticated caller.

use crate::error::ApiError;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use billpay_domain::{AccountId, KeyId};
use billpay_operations::purchases::Buyer;
use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer};

/// Bodies over this are refused with 413.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A JSON body parsed into `T`, keeping the raw value (test mode echoes it).
pub struct ApiJson<T> {
    pub value: T,
    pub raw: serde_json::Value,
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        parse_body(&json_bytes(req, BODY_LIMIT).await?)
    }
}

/// A JSON body's bytes: refused unless its type is JSON (415) and it is at
/// most `limit` bytes (413), it arrived in time (408) and whole (400).
pub(crate) async fn json_bytes(req: Request, limit: usize) -> Result<axum::body::Bytes, ApiError> {
    let is_json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(ApiError::UnsupportedMediaType);
    }
    axum::body::to_bytes(req.into_body(), limit)
        .await
        .map_err(|e| body_error(e, limit))
}

/// A JSON object into `T`. A number with more than two decimals is refused
/// only in a field `T` reads: extra fields are ignored, whatever they hold.
pub(crate) fn parse_body<T: DeserializeOwned>(bytes: &[u8]) -> Result<ApiJson<T>, ApiError> {
    let body = crate::body::read_json(bytes)?;
    if !body.value.is_object() {
        return Err(ApiError::Validation("body must be a JSON object".into()));
    }
    let mut ignored = Vec::new();
    let mut note_ignored = |path: serde_ignored::Path| {
        if let serde_ignored::Path::Map {
            parent: serde_ignored::Path::Root,
            key,
        } = path
        {
            ignored.push(key);
        }
    };
    let reader = serde_ignored::Deserializer::new(&body.value, &mut note_ignored);
    let value = serde_path_to_error::deserialize(reader).map_err(field_error)?;
    if let Some(field) = body.imprecise.iter().find(|key| !ignored.contains(key)) {
        return Err(ApiError::Validation(format!(
            "{field}: must have at most 2 decimal places"
        )));
    }
    Ok(ApiJson {
        value,
        raw: body.value,
    })
}

/// A JSON object already read into `T`, a field that breaks its rule a 422
/// naming it (a schedule's purchase fields, read by the purchase's own body).
pub fn from_object<T: DeserializeOwned>(object: serde_json::Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(object).map_err(field_error)
}

/// A body's field out of its rules, named: 422.
fn field_error<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> ApiError {
    let field = e.path().to_string();
    ApiError::Validation(describe(&field, &e.into_inner().to_string()))
}

/// Over the limit is 413; a body that stalled past the server's body timeout,
/// or was not complete by its deadline (an `io::Error` of kind `TimedOut`), is
/// 408; a body the client sent broken (a malformed chunk, a connection cut
/// mid-body) is 400.
fn body_error(error: axum::Error, limit: usize) -> ApiError {
    let inner = error.into_inner();
    let mut causes =
        std::iter::successors(Some(&*inner as &(dyn std::error::Error + 'static)), |e| {
            e.source()
        });
    match causes.find_map(|e| {
        if e.is::<http_body_util::LengthLimitError>() {
            Some(ApiError::PayloadTooLarge { kib: limit / 1024 })
        } else if e.is::<tower_http::timeout::TimeoutError>()
            || e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::TimedOut)
        {
            Some(ApiError::RequestTimeout)
        } else {
            None
        }
    }) {
        Some(error) => error,
        None => ApiError::InvalidJson("the request body could not be read".into()),
    }
}

/// `amount: must have at most 2 decimal places`, `phone: missing`, …
fn describe(field: &str, serde_message: &str) -> String {
    if let Some(name) = serde_message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        return format!("{name}: is required");
    }
    let message = serde_message
        .split(" at line ")
        .next()
        .unwrap_or(serde_message);
    let message = in_api_words(message);
    if field == "." {
        message
    } else {
        format!("{field}: {message}")
    }
}

/// serde names Rust types (`expected u32`, `floating point`); clients read JSON words.
fn in_api_words(serde_message: &str) -> String {
    const WHOLE: [&str; 10] = [
        "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize",
    ];
    let mut message = serde_message
        .replace("floating point", "number")
        .replace("invalid type: integer", "invalid type: number")
        .replace("invalid value: integer", "invalid value: number");
    for name in WHOLE {
        message = message.replace(&format!("expected {name}"), "expected a whole number");
    }
    for name in ["f32", "f64"] {
        message = message.replace(&format!("expected {name}"), "expected a number");
    }
    message
}

/// Integer fields take any integral JSON number, `2` or `2.0`, as the
/// schema's `integer` type does.
pub fn whole_number<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<u64>,
{
    let number = serde_json::Number::deserialize(deserializer)?;
    let integral = |f: f64| f.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(&f);
    number
        .as_u64()
        .or_else(|| number.as_f64().filter(|f| integral(*f)).map(|f| f as u64))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| de::Error::custom("must be a whole number in range"))
}

/// The authenticated API key and its account: the buyer the auth
/// middleware admitted (`Purchasing::admit`).
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub account_id: AccountId,
    pub key_id: KeyId,
}

impl Caller {
    /// The caller as the purchase operation's buyer.
    pub fn buyer(self) -> Buyer {
        Buyer {
            account_id: self.account_id,
            key_id: self.key_id,
        }
    }
}

impl From<Buyer> for Caller {
    fn from(buyer: Buyer) -> Self {
        Caller {
            account_id: buyer.account_id,
            key_id: buyer.key_id,
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Caller>()
            .copied()
            .ok_or(ApiError::MissingApiKey)
    }
}

/// Query strings parsed into `T`; a bad one is a 422 naming the problem.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| ApiQuery(q.0))
            .map_err(|e| {
                ApiError::Validation(
                    e.body_text()
                        .replace("Failed to deserialize query string: ", "query: "),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct AmountIn {
        amount: f64,
        quantity: Option<u32>,
    }

    fn refusal(body: &str) -> String {
        match parse_body::<AmountIn>(body.as_bytes()) {
            Err(ApiError::Validation(message)) => message,
            other => panic!(
                "{body}: expected a validation error, got {:?}",
                other.map(|b| b.value)
            ),
        }
    }

    #[test]
    fn more_than_two_decimals_are_refused_in_fields_the_request_reads() {
        assert_eq!(
            refusal(r#"{"amount":50.0000000000000001}"#),
            "amount: must have at most 2 decimal places"
        );
        assert_eq!(
            refusal(r#"{"amount":50,"quantity":1.000}"#),
            "quantity: must have at most 2 decimal places"
        );
    }

    #[test]
    fn extra_fields_are_ignored_whatever_numbers_they_hold() {
        let body = parse_body::<AmountIn>(
            br#"{"amount":50.25,"quantity":2.0,"extra":1.23456,"nested":{"x":[0.001]}}"#,
        )
        .unwrap();
        assert_eq!(body.value.amount, 50.25);
        assert_eq!(body.value.quantity, Some(2));
    }

    #[test]
    fn messages_name_no_rust_types() {
        let cases = [
            (
                "quantity",
                "invalid type: floating point `1.5`, expected u32 at line 1 column 9",
            ),
            ("quantity", "invalid value: integer `-1`, expected u64"),
            ("x", "invalid type: string \"a\", expected f64"),
        ];
        for (field, serde_message) in cases {
            let message = describe(field, serde_message);
            for rust in ["u32", "u64", "f64", "floating point", "integer"] {
                assert!(!message.contains(rust), "{message}");
            }
        }
        assert_eq!(
            describe(
                "quantity",
                "invalid type: floating point `1.5`, expected u32"
            ),
            "quantity: invalid type: number `1.5`, expected a whole number"
        );
    }

    #[derive(serde::Deserialize)]
    struct Count {
        #[serde(deserialize_with = "super::whole_number")]
        n: u8,
    }

    fn count(json_number: &str) -> Result<u8, serde_json::Error> {
        serde_json::from_str::<Count>(&format!("{{\"n\": {json_number}}}")).map(|c| c.n)
    }

    #[test]
    fn whole_numbers_in_any_json_form() {
        for two in ["2", "2.0", "2e0", "0.2e1"] {
            assert_eq!(count(two).unwrap(), 2, "{two}");
        }
        for refused in ["2.5", "-1", "-1.0", "256", "1e300", "\"2\"", "null"] {
            assert!(count(refused).is_err(), "{refused}");
        }
    }
}
