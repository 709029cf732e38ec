//! A JSON reply, checked against the OpenAPI document, and the envelope
//! assertions. The integration tests get it over HTTP, the in-process
//! validation tests from the router.

use crate::openapi;
use http::HeaderMap;
use serde_json::Value;

pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    /// Parses `text` (it must be JSON) and checks it against the OpenAPI
    /// operation of `path`.
    pub fn checked(path: &str, status: u16, headers: HeaderMap, text: &str) -> Reply {
        let body =
            serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON ({status}): {text:?}"));
        openapi::assert_documented(path, status, &body);
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn data(&self) -> &Value {
        &self.body["data"]
    }

    /// Asserts the contract's error envelope and slug.
    pub fn assert_error(&self, status: u16, slug: &str) {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(self.body["code"], status, "body: {}", self.body);
        assert_eq!(self.body["status"], "error", "body: {}", self.body);
        assert_eq!(self.body["error"], slug, "body: {}", self.body);
        assert!(
            self.body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "body: {}",
            self.body
        );
    }

    /// A 422 with `slug`; a `validation_error` must name `field` in its
    /// message. `sent` (the request) is shown when it does not.
    pub fn assert_refusal(&self, slug: &str, field: &str, sent: &str) {
        self.assert_error(422, slug);
        if slug == "validation_error" {
            let message = self.body["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(field),
                "message names `{field}`: {} (sent {sent})",
                self.body
            );
        }
    }

    pub fn assert_ok(&self) -> &Value {
        assert_eq!(self.status, 200, "body: {}", self.body);
        assert_eq!(self.body["code"], 200);
        assert_eq!(self.body["status"], "success");
        self.data()
    }
}
