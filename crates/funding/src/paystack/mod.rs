//! Paystack (paystack.com) dedicated virtual accounts, as a [`Gateway`].
//!
//! Written from Paystack's public API reference: every call carries
//! `Authorization: Bearer <secret key>` and answers `{status, message, data}`.
//! Reserving is two calls, `POST /customer` then `POST /dedicated_account`
//! (which answers the account at once, or later as a
//! `dedicatedaccount.assign.success` webhook); a payment is verified with
//! `GET /transaction/verify/{reference}` (amounts in kobo); reconciliation
//! lists `GET /transaction?status=success&from=…`. Webhooks are signed with
//! `x-paystack-signature` under the secret key. Paystack Checkout (pay now
//! by card, USSD or bank) is in `checkout.rs`.

mod checkout;
mod mapping;
mod registration;
mod settings;

pub use checkout::{InitializeData, reference_is_valid};
pub use mapping::*;
pub use registration::REGISTRATION;
pub use settings::{LIVE_URL, PaystackSettings};

use crate::*;
use serde_json::{Value, json};

/// The signature header of Paystack's webhooks.
pub const SIGNATURE_HEADER: &str = "x-paystack-signature";
const PER_PAGE: usize = 100;
const MAX_PAGES: usize = 10;

pub struct PaystackGateway {
    base_url: String,
    secret_key: String,
    preferred_bank: String,
    http: reqwest::Client,
}

impl PaystackGateway {
    /// The client for these settings; refused while the key is missing.
    pub fn from_settings(settings: &PaystackSettings) -> Result<Self, GatewayError> {
        let missing = settings.missing();
        if !missing.is_empty() {
            let missing = missing.join(", ");
            return Err(GatewayError::Refused(format!("Paystack needs {missing}")));
        }
        Ok(Self {
            base_url: base_url(&settings.base_url),
            secret_key: secret(&settings.secret_key).unwrap_or_default().to_owned(),
            preferred_bank: settings.preferred_bank.trim().to_owned(),
            http: http_client(Duration::from_millis(settings.timeout_ms.max(1)))?,
        })
    }

    async fn call(&self, request: reqwest::RequestBuilder) -> Result<Value, GatewayError> {
        let response = request
            .bearer_auth(&self.secret_key)
            .send()
            .await
            .map_err(|e| GatewayError::Unavailable(e.to_string()))?;
        let status = response.status().as_u16();
        let text = response
            .text()
            .await
            .map_err(|e| GatewayError::Unavailable(e.to_string()))?;
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let message: String = body["message"]
            .as_str()
            .unwrap_or("no message")
            .chars()
            .take(200)
            .collect();
        match (status, body["status"].as_bool()) {
            (200..=299, Some(true)) => Ok(body["data"].clone()),
            (400..=499, _) if status != 404 && status != 429 => {
                Err(GatewayError::Refused(format!("HTTP {status}: {message}")))
            }
            (200..=299, Some(false)) => Err(GatewayError::Refused(message)),
            _ => Err(GatewayError::Unavailable(format!(
                "HTTP {status}: {message}"
            ))),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }
}

#[async_trait]
impl Gateway for PaystackGateway {
    fn name(&self) -> &'static str {
        "paystack"
    }

    async fn reserve(&self, customer: &Customer) -> Result<Reservation, GatewayError> {
        let (first_name, last_name) = split_name(&customer.name);
        let created = json!({
            "email": customer.email, "first_name": first_name, "last_name": last_name,
            "metadata": {"billpay_account": customer.reference},
        });
        let created = self
            .call(self.http.post(self.url("/customer")).json(&created))
            .await?;
        let customer_code = text(&created["customer_code"])
            .ok_or_else(|| GatewayError::Unavailable("Paystack gave no customer_code".into()))?;
        let dedicated = json!({"customer": customer_code, "preferred_bank": self.preferred_bank});
        let request = self
            .http
            .post(self.url("/dedicated_account"))
            .json(&dedicated);
        let answer = self.call(request).await?;
        Ok(Reservation {
            customer_ref: customer_code,
            accounts: dedicated_account(&answer).into_iter().collect(),
        })
    }

    async fn verify(&self, reference: &str) -> Result<Payment, GatewayError> {
        use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
        let reference = utf8_percent_encode(reference, NON_ALPHANUMERIC);
        let url = self.url(&format!("/transaction/verify/{reference}"));
        let answer = self.call(self.http.get(url)).await?;
        payment(&answer).ok_or_else(|| {
            let excerpt: String = answer.to_string().chars().take(120).collect();
            GatewayError::Unavailable(format!("an answer Paystack does not give: {excerpt}"))
        })
    }

    async fn payments_since(
        &self,
        since: OffsetDateTime,
        _customer_refs: &[String],
    ) -> Result<Vec<Payment>, GatewayError> {
        let from = since
            .format(&time::format_description::well_known::Rfc3339)
            .map_err(|e| GatewayError::Unavailable(e.to_string()))?;
        let mut found = Vec::new();
        for page in 1..=MAX_PAGES {
            let query = [
                ("status", "success".to_owned()),
                ("from", from.clone()),
                ("perPage", PER_PAGE.to_string()),
                ("page", page.to_string()),
            ];
            let request = self.http.get(self.url("/transaction")).query(&query);
            let listed = self.call(request).await?;
            let items = listed.as_array().cloned().unwrap_or_default();
            found.extend(items.iter().filter(|t| is_transfer(t)).filter_map(payment));
            if items.len() < PER_PAGE {
                break;
            }
        }
        Ok(found)
    }

    fn read_webhook(&self, headers: &HeaderMap, body: &[u8]) -> Result<Webhook, WebhookError> {
        signature::check(headers, SIGNATURE_HEADER, self.secret_key.as_bytes(), body)?;
        Ok(read_event(body))
    }

    fn checkout(&self) -> Option<&dyn HostedCheckout> {
        Some(self)
    }
}

/// Paystack wants a first and a last name: the last word is the last name.
fn split_name(name: &str) -> (String, String) {
    let name = name.trim();
    match name.rsplit_once(' ') {
        Some((first, last)) => (first.trim().to_owned(), last.to_owned()),
        None => (name.to_owned(), name.to_owned()),
    }
}
