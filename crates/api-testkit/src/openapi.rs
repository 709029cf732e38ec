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

/// Compiled once per (path template, status): one per operation of the
/// path that documents the status.
type Validators = HashMap<(String, u16), Arc<Vec<Validator>>>;
static VALIDATORS: LazyLock<Mutex<Validators>> = LazyLock::new(Default::default);

/// Panics when `path` is a documented path and its answer is not documented
/// by one of its operations (most paths have one method; `/v1/batches` has
/// a `GET` and a `POST`, told apart by what they answer).
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
    let key = (template, status);
    let cached = VALIDATORS.lock().unwrap().get(&key).cloned();
    // Built outside the lock: an undocumented status panics here.
    let validators = cached.unwrap_or_else(|| {
        let built = Arc::new(validators(&key.0, &operations, status));
        VALIDATORS.lock().unwrap().insert(key, built.clone());
        built
    });
    if validators.iter().any(|v| v.is_valid(body)) {
        return;
    }
    let problems: Vec<String> = validators[0]
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    panic!("{path} answered {status} outside its OpenAPI schema: {problems:?}\nbody: {body}");
}

/// The operations of a path.
fn operations_for(path: &str) -> Option<(String, Vec<&'static Value>)> {
    let paths = DOCUMENT["paths"].as_object().unwrap();
    let (template, item) = paths.iter().find(|(template, _)| matches(template, path))?;
    let operations = item.as_object()?.values().collect();
    Some((template.clone(), operations))
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
    let with_body = operations.iter().find(|o| o["requestBody"].is_object());
    let request = &with_body.map_or(&Value::Null, |o| &o["requestBody"])["content"]["application/json"]
        ["schema"];
    assert!(request.is_object(), "{template} takes no JSON body");
    let mut schema = request.clone();
    schema["components"] = DOCUMENT["components"].clone();
    jsonschema::draft202012::new(&schema)
        .unwrap()
        .is_valid(body)
}

fn validators(template: &str, operations: &[&Value], status: u16) -> Vec<Validator> {
    let responses = operations
        .iter()
        .map(|operation| &operation["responses"][status.to_string()])
        .filter(|response| response.is_object());
    let validators: Vec<Validator> = responses
        .map(|response| {
            // The response schema with the document's components beside it,
            // so its `#/components/schemas/…` references resolve.
            let mut schema = response["content"]["application/json"]["schema"].clone();
            schema["components"] = DOCUMENT["components"].clone();
            jsonschema::draft202012::new(&schema).unwrap()
        })
        .collect();
    assert!(
        !validators.is_empty(),
        "{template} answered {status}, which its OpenAPI operation does not document"
    );
    validators
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
