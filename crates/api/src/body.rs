//! Reads a JSON body from its literal text, refusing what a plain parse would
//! silently decide for the client: a key given twice (serde_json keeps the
//! last), and noting the top-level fields whose number has more than two
//! decimals (an f64 would round `50.0000000000000001` to `50`) so that the
//! extractor refuses them when the request type reads them. A number written
//! with a point but no fraction (`1.0`) becomes an integer, so integer fields
//! take it. Nesting is bounded before anything parses (the walk below
//! recurses once per level).

use crate::error::ApiError;
use billpay_domain::json::{MAX_NESTING, check_nesting};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashSet;
use std::fmt;

/// A body read from its text.
#[derive(Debug)]
pub struct JsonBody {
    pub value: Value,
    /// Top-level keys whose value is a number with more than two decimals.
    /// Only top-level fields matter: every request type is a flat object,
    /// and extra fields (nested or not) are ignored, whatever they hold.
    pub imprecise: Vec<String>,
}

/// Parses `bytes`: 400 when it is not JSON or nests deeper than
/// [`MAX_NESTING`], 422 naming the field when it is ambiguous.
pub fn read_json(bytes: &[u8]) -> Result<JsonBody, ApiError> {
    check_nesting(bytes, MAX_NESTING).map_err(|e| ApiError::InvalidJson(e.to_string()))?;
    let raw: &RawValue = serde_json::from_slice(bytes).map_err(invalid_json)?;
    let imprecise = match raw.get().as_bytes().first() {
        Some(b'{') => {
            let Entries(entries) = serde_json::from_str(raw.get()).map_err(invalid_json)?;
            entries
                .into_iter()
                .filter(|(_, value)| has_more_than_two_decimals(value.get()))
                .map(|(key, _)| key)
                .collect()
        }
        _ => Vec::new(),
    };
    Ok(JsonBody {
        value: node(raw, "")?,
        imprecise,
    })
}

fn invalid_json(e: serde_json::Error) -> ApiError {
    ApiError::InvalidJson(e.to_string())
}

fn node(raw: &RawValue, path: &str) -> Result<Value, ApiError> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'{') => object(text, path),
        Some(b'[') => array(text, path),
        Some(b'-' | b'0'..=b'9') => number(text),
        _ => serde_json::from_str(text).map_err(invalid_json),
    }
}

fn object(text: &str, path: &str) -> Result<Value, ApiError> {
    let Entries(entries) = serde_json::from_str(text).map_err(invalid_json)?;
    let mut seen = HashSet::new();
    let mut object = serde_json::Map::new();
    for (key, raw) in entries {
        let field = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        if !seen.insert(key.clone()) {
            return Err(ApiError::Validation(format!(
                "{field}: is given more than once"
            )));
        }
        object.insert(key, node(raw, &field)?);
    }
    Ok(Value::Object(object))
}

fn array(text: &str, path: &str) -> Result<Value, ApiError> {
    let items: Vec<&RawValue> = serde_json::from_str(text).map_err(invalid_json)?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, raw)| node(raw, &format!("{path}[{i}]")))
        .collect()
}

/// Whether a JSON value's text is a number whose exact value, as written, has
/// more than two decimals: `50.000`, `50.0000000000000001`, and in exponent
/// notation `500000000000000001e-16` or `5000.001e-1` too (the mantissa's
/// decimals plus the exponent's shift), whatever its digits.
fn has_more_than_two_decimals(text: &str) -> bool {
    matches!(text.as_bytes().first(), Some(b'-' | b'0'..=b'9')) && decimal_places(text) > 2
}

/// The decimal places of a number literal: `12.50` → 2, `1.5e3` → 0,
/// `125e-2` → 2, `5e-99999999999999999999` → `u64::MAX`.
fn decimal_places(text: &str) -> u64 {
    let (_, fraction) = split_number(text);
    let fraction = fraction.len() as i128;
    let shift = match text.split_once(['e', 'E']) {
        None => 0,
        // An exponent too long for i128 shifts by more than any fraction:
        // its sign alone decides.
        Some((_, exponent)) => exponent
            .parse::<i128>()
            .unwrap_or(if exponent.starts_with('-') {
                i128::MIN / 2
            } else {
                i128::MAX / 2
            }),
    };
    u64::try_from((fraction - shift).max(0)).unwrap_or(u64::MAX)
}

/// `-12.50e3` → (`-12`, `50`).
fn split_number(text: &str) -> (&str, &str) {
    let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
    mantissa.split_once('.').unwrap_or((mantissa, ""))
}

fn number(text: &str) -> Result<Value, ApiError> {
    let (whole, fraction) = split_number(text);
    let exponent = text.contains(['e', 'E']);
    let integral = !exponent && fraction.bytes().all(|b| b == b'0');
    if integral && let Ok(n) = whole.parse::<i64>() {
        return Ok(Value::from(n));
    }
    serde_json::from_str(text).map_err(invalid_json)
}

/// An object's entries in the order written, duplicates kept.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'de>, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(body: &str) -> String {
        match read_json(body.as_bytes()).map(|body| body.value) {
            Err(ApiError::Validation(message)) => message,
            other => panic!("{body}: expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn duplicate_keys_are_refused_by_name() {
        assert_eq!(
            refusal(r#"{"amount":50,"phone":"1","amount":50000}"#),
            "amount: is given more than once"
        );
        assert_eq!(
            refusal(r#"{"a":{"b":1,"b":2}}"#),
            "a.b: is given more than once"
        );
        assert_eq!(
            refusal(r#"{"a":[{"b":1,"b":1}]}"#),
            "a[0].b: is given more than once"
        );
    }

    #[test]
    fn top_level_numbers_with_more_than_two_decimals_are_noted() {
        let body = read_json(
            br#"{"amount":50.0000000000000001,"q":50.000,"ok":50.25,"e":1.5e3,"x":{"y":1.234},"s":"1.234"}"#,
        )
        .unwrap();
        assert_eq!(body.imprecise, ["amount", "q"]);
        assert_eq!(body.value["amount"].as_f64(), Some(50.0));
    }

    #[test]
    fn exponent_notation_cannot_hide_decimals() {
        let body = read_json(
            br#"{"a":500000000000000001e-16,"b":5000000000000000.1e-14,"c":50000000000000000001e-18,"d":5e-99999999999999999999,"ok1":125e-2,"ok2":1.5e3,"ok3":0.5E+1,"ok4":5e99999999999999999999}"#,
        );
        // d's and ok4's exponents are out of f64's range: serde refuses the
        // body as a whole, so read the decimal counts directly too.
        assert!(body.is_err());
        let body = read_json(
            br#"{"a":500000000000000001e-16,"b":5000000000000000.1e-14,"c":50000000000000000001e-18,"ok1":125e-2,"ok2":1.5e3,"ok3":0.5E+1}"#,
        )
        .unwrap();
        assert_eq!(body.imprecise, ["a", "b", "c"]);
        assert_eq!(decimal_places("5e-99999999999999999999"), u64::MAX);
        assert_eq!(decimal_places("5e99999999999999999999"), 0);
        assert_eq!(decimal_places("5000.001e-1"), 4);
    }

    #[test]
    fn nesting_past_the_limit_is_invalid_json_not_a_crash() {
        for depth in [33, 2_000, 100_000] {
            let body = "[".repeat(depth) + &"]".repeat(depth);
            let object = format!(r#"{{"amount":{body}}}"#);
            for text in [body, object] {
                match read_json(text.as_bytes()) {
                    Err(ApiError::InvalidJson(message)) => {
                        assert_eq!(message, "JSON nested deeper than 32 levels")
                    }
                    other => panic!("depth {depth}: {other:?}"),
                }
            }
        }
        assert!(read_json(("[".repeat(32) + &"]".repeat(32)).as_bytes()).is_ok());
    }

    #[test]
    fn numbers_are_read_from_their_text() {
        let body = read_json(br#"{"amount":1500.25,"quantity":1.0,"n":-2,"big":1e3}"#)
            .unwrap()
            .value;
        assert_eq!(body["amount"].as_f64(), Some(1500.25));
        assert_eq!(body["quantity"].as_u64(), Some(1));
        assert_eq!(body["n"].as_i64(), Some(-2));
        assert_eq!(body["big"].as_f64(), Some(1000.0));
    }

    #[test]
    fn malformed_json_is_invalid_json() {
        for body in ["{", "{\"a\":}", "", "{\"a\":1}x"] {
            assert!(
                matches!(read_json(body.as_bytes()), Err(ApiError::InvalidJson(_))),
                "{body}"
            );
        }
    }
}
