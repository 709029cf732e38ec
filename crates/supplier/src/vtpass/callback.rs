//! VTpass's transaction-update callback: `{"type": "transaction-update",
//! "data": {"requestId": …, …}}`, unsigned. Only its `requestId` is read: it
//! names our purchase (the request id is derived from our reference code), and
//! the requery's answer is what counts. VTpass expects `{"response":"success"}`.

use super::reference_code;
use crate::callback::{CallbackRequest, Callbacks, Notice};
use serde_json::{Value, json};

pub struct VtpassCallbacks;

impl Callbacks for VtpassCallbacks {
    fn name(&self) -> &'static str {
        "vtpass"
    }

    fn read(&self, request: &CallbackRequest) -> Notice {
        let body: Value = serde_json::from_slice(request.body).unwrap_or(Value::Null);
        let data = &body["data"];
        let request_id = data["requestId"]
            .as_str()
            .or(data["request_id"].as_str())
            .unwrap_or_default();
        match reference_code(request_id) {
            Some(reference_code) => Notice::Recheck { reference_code },
            None => Notice::Ignore(format!(
                "request_id {request_id:?} names no purchase of ours"
            )),
        }
    }

    fn answer(&self) -> Value {
        json!({ "response": "success" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Notice {
        let headers = reqwest::header::HeaderMap::new();
        VtpassCallbacks.read(&CallbackRequest {
            headers: &headers,
            body: body.as_bytes(),
            query: "",
        })
    }

    #[test]
    fn a_request_id_of_ours_names_the_purchase_to_recheck() {
        let code = "BP1795312282123ABCDEF012345";
        let request_id = super::super::request_id(code).unwrap();
        for key in ["requestId", "request_id"] {
            let body = json!({ "type": "transaction-update", "data": { key: request_id } });
            assert_eq!(
                read(&body.to_string()),
                Notice::Recheck {
                    reference_code: code.into()
                }
            );
        }
    }

    #[test]
    fn anything_else_is_ignored() {
        for body in [
            "",
            "not json",
            "[]",
            r#"{"data": {"requestId": 7}}"#,
            r#"{"data": {"requestId": "202601010000nope"}}"#,
        ] {
            assert!(matches!(read(body), Notice::Ignore(_)), "{body}");
        }
    }
}
