//! ClubKonnect's callback: an unsigned GET to our `CallBackURL` with
//! `orderid`, `statuscode`, `orderstatus`, `orderremark` and `requestid` in
//! the query. Only `requestid` is read: it is our reference code, and the
//! query's answer is what counts (anyone can call this URL).

use super::reference_code;
use crate::callback::{CallbackRequest, Callbacks, Notice};
use serde_json::{Value, json};

pub struct ClubkonnectCallbacks;

impl Callbacks for ClubkonnectCallbacks {
    fn name(&self) -> &'static str {
        "clubkonnect"
    }

    fn read(&self, request: &CallbackRequest) -> Notice {
        let request_id = request_id(request.query).unwrap_or_default();
        match reference_code(&request_id) {
            Some(reference_code) => Notice::Recheck { reference_code },
            None => Notice::Ignore(format!(
                "requestid {request_id:?} names no purchase of ours"
            )),
        }
    }

    fn answer(&self) -> Value {
        json!({ "status": "received" })
    }
}

/// `requestid` (any case) of a query string, percent-decoded.
fn request_id(query: &str) -> Option<String> {
    let pair = query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        name.eq_ignore_ascii_case("requestid").then_some(value)
    })?;
    Some(percent_decode(pair))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(query: &str) -> Notice {
        let headers = reqwest::header::HeaderMap::new();
        ClubkonnectCallbacks.read(&CallbackRequest {
            headers: &headers,
            body: b"",
            query,
        })
    }

    #[test]
    fn a_request_id_of_ours_names_the_purchase_to_recheck() {
        let code = "BP1795312282123ABCDEF012345";
        for query in [
            format!("orderid=789&statuscode=200&orderstatus=ORDER_COMPLETED&requestid={code}"),
            format!("RequestID={code}&orderremark=Success%20ok"),
        ] {
            assert_eq!(
                read(&query),
                Notice::Recheck {
                    reference_code: code.into()
                },
                "{query}"
            );
        }
    }

    #[test]
    fn anything_else_is_ignored() {
        for query in [
            "",
            "orderid=789",
            "requestid=nope",
            "requestid=BP%00",
            "requestid=BP1795312282123ABCDEF01234%3C",
        ] {
            assert!(matches!(read(query), Notice::Ignore(_)), "{query}");
        }
    }
}
