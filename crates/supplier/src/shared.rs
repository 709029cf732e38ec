//! What every real supplier's client repeats, written once: the HTTP client
//! with its timeouts, the base URL as operators write it, amounts and
//! tokens as suppliers write them, the log line of each answer (its outcome
//! by name), and the error-level report of an answer that means "billpay is
//! misconfigured" rather than "the order is pending".

use crate::{Kobo, SupplierError, SupplierStatus};
use std::time::Duration;

/// The reqwest client of a real supplier (`billpay_outbound`'s policy): the
/// whole call at most `timeout`; longer is an unknown outcome (requeried,
/// never refunded). No redirects: a supplier's API does not redirect, and a
/// redirect is an answer "not like that supplier".
pub fn http_client(timeout: Duration) -> Result<reqwest::Client, SupplierError> {
    billpay_outbound::http_client(timeout)
        .map_err(|e| SupplierError::Unavailable(format!("HTTP client: {e}")))
}

/// A base URL as operators write it, without trailing slashes and without
/// an `/api` suffix: the paths billpay calls carry their own (VTpass's docs
/// write `https://sandbox.vtpass.com/api/`, and `…/api` + `/api/pay` would
/// call `/api/api/pay`).
pub fn base_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    let url = url.strip_suffix("/api").unwrap_or(url);
    url.trim_end_matches('/').to_owned()
}

/// A supplier's amount of Naira — a JSON number (`1234.5`) or text
/// (`"1,234.50"`) — as kobo, read exactly from its decimal digits (a
/// number through its shortest form, as JSON wrote it) and rounded half-up
/// to the kobo when it has more than two decimals (`96.995` → 9700 kobo:
/// suppliers compute costs to more places than they charge). `None` when it
/// is no amount (text, negative, too large); never through a float.
pub fn amount(value: &serde_json::Value) -> Option<Kobo> {
    let text = match value {
        serde_json::Value::Number(number) => number.to_string(),
        serde_json::Value::String(text) => text.replace(',', ""),
        _ => return None,
    };
    Kobo::parse_naira_half_up(&text).ok()
}

/// The 20-digit token in `"Token : 1234 5678 …"`-style text, grouped by four.
pub fn token_digits(text: &str) -> Option<String> {
    let after_label = text
        .rsplit(':')
        .find(|part| part.chars().filter(char::is_ascii_digit).count() >= 16)?;
    let digits: Vec<char> = after_label.chars().filter(char::is_ascii_digit).collect();
    Some(
        digits
            .chunks(4)
            .map(|group| group.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("-"),
    )
}

/// `79.9`, `"79.9"` or `"79.9 kWh"` as a number.
pub fn leading_number(value: &serde_json::Value) -> Option<f64> {
    value.as_f64().or_else(|| {
        let text = value.as_str()?.trim();
        let end = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        text[..end].parse().ok()
    })
}

/// One supplier answer as logged: who, which call, what came back, and what
/// billpay made of it (the outcome by name, and how the answer was read).
pub struct AnswerLog<'a> {
    pub supplier: &'a str,
    pub call: &'a str,
    pub http_status: u16,
    /// The supplier's own code (`000`, `200`…), `none` without one.
    pub code: &'a str,
    /// The supplier's status or description text.
    pub description: &'a str,
    /// How the answer was read: delivered, pending, refused, cancelled,
    /// unknown, misconfigured…
    pub reading: &'a str,
}

impl AnswerLog<'_> {
    /// Logs the answer (the caller's span names the transaction, e.g. the
    /// worker's `fulfil{code=…}`); an answer that means misconfiguration is
    /// reported at error level and counted (see [`misconfigured`]).
    pub fn log(&self, outcome: &SupplierStatus) {
        let outcome = outcome.name();
        let (supplier, call, http_status, code) =
            (self.supplier, self.call, self.http_status, self.code);
        let (description, reading) = (self.description, self.reading);
        if reading == "misconfigured" {
            misconfigured(
                supplier,
                call,
                &format!("HTTP {http_status}, code {code} {description}"),
            );
        }
        tracing::info!(
            supplier,
            call,
            http_status,
            code,
            description,
            reading,
            outcome,
            "supplier answered"
        );
    }
}

/// An answer that says billpay is set up wrong (credentials refused, a base
/// URL that answers unlike the supplier): never a reason to refund, but the
/// operator must know at once, so it is an error and a metric
/// (`billpay_supplier_misconfigured_total{supplier}`), not an info line.
pub fn misconfigured(supplier: &str, call: &str, what: &str) {
    metrics::counter!("billpay_supplier_misconfigured_total", "supplier" => supplier.to_owned())
        .increment(1);
    tracing::error!(
        supplier,
        call,
        what,
        "the supplier's answer means billpay is misconfigured (credentials or base URL): \
         purchases stay processing until it is fixed"
    );
}

/// An HTTP status that means the URL or the credentials are wrong, not that
/// the supplier is busy: 401, 403, 404, 405 and redirects.
pub fn misconfigured_status(http_status: u16) -> bool {
    matches!(http_status, 300..=399 | 401 | 403 | 404 | 405)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base_urls_are_taken_with_or_without_api() {
        for url in [
            "https://sandbox.vtpass.com",
            "https://sandbox.vtpass.com/",
            "https://sandbox.vtpass.com/api",
            "https://sandbox.vtpass.com/api/",
            " https://sandbox.vtpass.com/api// ",
        ] {
            assert_eq!(base_url(url), "https://sandbox.vtpass.com", "{url:?}");
        }
        assert_eq!(
            base_url("http://127.0.0.1:9/apix"),
            "http://127.0.0.1:9/apix"
        );
    }

    #[test]
    fn amounts_tokens_and_units() {
        assert_eq!(amount(&json!("1,234.50")), Some(Kobo(123_450)));
        assert_eq!(amount(&json!(99.99)), Some(Kobo(9_999)));
        assert_eq!(amount(&json!("n/a")), None);
        // Exactly, from the digits, half-up to the kobo past two decimals.
        assert_eq!(amount(&json!(1.005)), Some(Kobo(101)));
        assert_eq!(amount(&json!("1,000.005")), Some(Kobo(100_001)));
        assert_eq!(amount(&json!("97.5")), Some(Kobo(9_750)));
        assert_eq!(amount(&json!(0.284)), Some(Kobo(28)));
        assert_eq!(amount(&json!(92_233_720_368_547_758.0)), None);
        assert_eq!(amount(&json!(-5)), None);
        assert_eq!(
            token_digits("Token : 42167939603201733524").as_deref(),
            Some("4216-7939-6032-0173-3524")
        );
        assert_eq!(token_digits("no token"), None);
        assert_eq!(leading_number(&json!("79.9 kWh")), Some(79.9));
    }

    #[test]
    fn misconfiguration_is_told_by_status() {
        for status in [301, 401, 403, 404, 405] {
            assert!(misconfigured_status(status), "{status}");
        }
        for status in [200, 500, 502, 503, 504, 429] {
            assert!(!misconfigured_status(status), "{status}");
        }
    }
}
