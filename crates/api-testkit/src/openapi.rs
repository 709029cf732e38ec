//! Every reply the test kit sees is checked against the committed OpenAPI
//! document (docs/openapi.json, itself checked against the code by
//! `crates/api/tests/openapi_snapshot.rs`): a status the operation does not
//! document, or a body outside its schema, fails the test that received it.

use jsonschema::Validator;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

static DOCUMENT: LazyLock<Value> = LazyLock::new(|| {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
});

/// Compiled once per (path template, method, status).
type Validators = HashMap<(String, String, u16), Arc<Validator>>;
static VALIDATORS: LazyLock<Mutex<Validators>> = LazyLock::new(Default::default);

/// Panics when `path` is a documented path and its answer is not documented.
/// Paths the document does not describe (dashboard, /health, unknown ones)
/// and 405 (a method the path does not have) are not checked. A path with
/// several methods (`GET` and `POST /v1/schedules`): the reply must be one
/// that one of them documents (the kit sees the reply, not the request).
pub fn assert_documented(path: &str, status: u16, body: &Value) {
    let Some((template, operations)) = operations_for(path) else {
        return;
    };
    if status == 405 {
        return;
    }
    let documenting: Vec<_> = operations
        .into_iter()
        .filter(|(_, operation)| operation["responses"][status.to_string()].is_object())
        .collect();
    assert!(
        !documenting.is_empty(),
        "{template} answered {status}, which its OpenAPI operation does not document"
    );
    let mut problems = Vec::new();
    for (method, operation) in documenting {
        let key = (template.clone(), method, status);
        let cached = VALIDATORS.lock().unwrap().get(&key).cloned();
        let validator = cached.unwrap_or_else(|| {
            let built = Arc::new(validator(operation, status));
            VALIDATORS.lock().unwrap().insert(key, built.clone());
            built
        });
        let found: Vec<String> = validator
            .iter_errors(body)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if found.is_empty() {
            return;
        }
        problems.extend(found);
    }
    panic!("{path} answered {status} outside its OpenAPI schema: {problems:?}\nbody: {body}");
}

/// The operations of a path, by method.
fn operations_for(path: &str) -> Option<(String, Vec<(String, &'static Value)>)> {
    let paths = DOCUMENT["paths"].as_object().unwrap();
    let (template, item) = paths.iter().find(|(template, _)| matches(template, path))?;
    let operations = item.as_object()?.iter().map(|(m, o)| (m.clone(), o));
    Some((template.clone(), operations.collect()))
}

/// `/v1/providers/{service}` matches `/v1/providers/airtime`.
fn matches(template: &str, path: &str) -> bool {
    let (template, path): (Vec<_>, Vec<_>) =
        (template.split('/').collect(), path.split('/').collect());
    template.len() == path.len()
        && template
            .iter()
            .zip(&path)
            .all(|(t, p)| t == p || (t.starts_with('{') && !p.is_empty()))
}

/// Whether `body` is inside the request-body schema of `path`'s operation
/// that takes a JSON body (a documented path with one: panics otherwise).
pub fn request_documented(path: &str, body: &Value) -> bool {
    let (template, operations) =
        operations_for(path).unwrap_or_else(|| panic!("{path} is not in the document"));
    let json = |o: &Value| o["requestBody"]["content"]["application/json"]["schema"].clone();
    let request = operations
        .iter()
        .map(|(_, o)| json(o))
        .find(Value::is_object);
    let mut schema = request.unwrap_or_else(|| panic!("{template} takes no JSON body"));
    schema["components"] = DOCUMENT["components"].clone();
    jsonschema::draft202012::new(&schema)
        .unwrap()
        .is_valid(body)
}

fn validator(operation: &Value, status: u16) -> Validator {
    let response = &operation["responses"][status.to_string()];
    // The response schema with the document's components beside it, so its
    // `#/components/schemas/…` references resolve.
    let mut schema = response["content"]["application/json"]["schema"].clone();
    schema["components"] = DOCUMENT["components"].clone();
    jsonschema::draft202012::new(&schema).unwrap()
}

#[cfg(test)]
mod tests {
    use super::assert_documented;
    use serde_json::{Value, json};

    /// The kit's OpenAPI check (every reply of these suites passes through it)
    /// refuses a body outside the schema and a status the operation lacks.
    #[test]
    fn the_kit_checks_replies_against_the_openapi_document() {
        let balance =
            json!({"code": 200, "status": "success", "data": {"balance": 10.5, "currency": "NGN"}});
        assert_documented("/v1/wallet/balance", 200, &balance);
        let refused = |path: &'static str, status: u16, body: Value| {
            std::panic::catch_unwind(|| assert_documented(path, status, &body)).is_err()
        };
        let bare_list = json!([{"slug": "mtn"}]);
        assert!(
            refused("/v1/providers", 200, bare_list),
            "a list outside the envelope"
        );
        let text_balance = json!({"code": 200, "status": "success", "data": {"balance": "10.5", "currency": "NGN"}});
        assert!(
            refused("/v1/wallet/balance", 200, text_balance),
            "a balance as text"
        );
        let error = json!({"code": 404, "status": "error", "message": "m", "error": "not_found"});
        assert!(
            refused("/v1/wallet/balance", 404, error.clone()),
            "an undocumented status"
        );
        assert_documented("/v1/providers/nosuch", 404, &error);
        // a path with two methods: what either documents (POST's 422)
        let invalid =
            json!({"code": 422, "status": "error", "message": "m", "error": "validation_error"});
        assert_documented("/v1/schedules", 422, &invalid);
        let listed = json!({"code": 200, "status": "success", "data": {"schedules": []}});
        assert_documented("/v1/schedules", 200, &listed);
        assert!(refused(
            "/v1/schedules",
            200,
            json!({"code": 200, "status": "success", "data": {}})
        ));
    }
}
