//! Monnify (monnify.com) reserved accounts, as a [`Gateway`].
//!
//! Written from Monnify's public API reference: log in with HTTP Basic
//! (`apiKey:secretKey`) for a bearer token that lasts `expiresIn` seconds
//! (cached until shortly before then); reserve with
//! `POST /api/v2/bank-transfer/reserved-accounts`; verify a payment with
//! `GET /api/v2/transactions/{transactionReference}` (the `|` in a reference
//! sent as `%7C`); list a reserved account's payments with
//! `GET /api/v1/bank-transfer/reserved-accounts/transactions`. Every answer is
//! the envelope `{requestSuccessful, responseMessage, responseCode, responseBody}`.
//! Webhooks are signed with `monnify-signature` (see [`crate::signature`]).
//! Its BVN and NIN checks (`IdentityCheck`) are in `identity.rs`.

mod identity;
mod mapping;
mod registration;
mod settings;

pub use identity::{BvnMatchBody, MatchStatus, NinDetailsBody, NinRecord};
pub use mapping::*;
pub use registration::REGISTRATION;
pub use settings::{LIVE_URL, MonnifySettings};

use crate::*;
use base64::Engine;
use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::Instant;

/// The signature header of Monnify's webhooks.
pub const SIGNATURE_HEADER: &str = "monnify-signature";
/// Payments listed per page when reconciling, and pages at most per account.
const PAGE_SIZE: usize = 50;
const MAX_PAGES: usize = 10;

pub struct MonnifyGateway {
    base_url: String,
    api_key: String,
    secret_key: String,
    contract_code: String,
    http: reqwest::Client,
    /// The bearer token and when to stop using it.
    token: Mutex<Option<(String, Instant)>>,
}

impl MonnifyGateway {
    /// The client for these settings; refused while a credential is missing.
    pub fn from_settings(settings: &MonnifySettings) -> Result<Self, GatewayError> {
        let missing = settings.missing();
        if !missing.is_empty() {
            let missing = missing.join(", ");
            return Err(GatewayError::Refused(format!("Monnify needs {missing}")));
        }
        let [api_key, secret_key, contract_code] = settings
            .credentials()
            .map(|c| c.1.unwrap_or_default().to_owned());
        Ok(Self {
            base_url: base_url(&settings.base_url),
            api_key,
            secret_key,
            contract_code,
            http: http_client(Duration::from_millis(settings.timeout_ms.max(1)))?,
            token: Mutex::new(None),
        })
    }

    /// A valid access token: the cached one, else a new login.
    async fn token(&self) -> Result<String, GatewayError> {
        if let Some((token, until)) = self.token.lock().expect("token lock").clone()
            && Instant::now() < until
        {
            return Ok(token);
        }
        let basic = base64::engine::general_purpose::STANDARD
            .encode(format!("{}:{}", self.api_key, self.secret_key));
        let request = self
            .http
            .post(format!("{}/api/v1/auth/login", self.base_url))
            .header("Authorization", format!("Basic {basic}"));
        let body = envelope(send(request).await?)?;
        let (token, lifetime) = login_token(&body)?;
        // A minute early, so a call never starts with a token about to lapse.
        let until = Instant::now() + lifetime.saturating_sub(Duration::from_secs(60));
        *self.token.lock().expect("token lock") = Some((token.clone(), until));
        Ok(token)
    }

    /// A call with the bearer token; a 401 forgets the token (the next call logs in).
    async fn call(&self, request: reqwest::RequestBuilder) -> Result<Value, GatewayError> {
        let answer = send(request.bearer_auth(self.token().await?)).await;
        if matches!(&answer, Err(Answer::Status(401, _))) {
            *self.token.lock().expect("token lock") = None;
        }
        envelope(answer?)
    }

    async fn list_page(&self, account_ref: &str, page: usize) -> Result<Value, GatewayError> {
        let url = format!(
            "{}/api/v1/bank-transfer/reserved-accounts/transactions",
            self.base_url
        );
        let page = page.to_string();
        let size = PAGE_SIZE.to_string();
        let query = [
            ("accountReference", account_ref),
            ("page", &page),
            ("size", &size),
        ];
        self.call(self.http.get(url).query(&query)).await
    }
}

#[async_trait]
impl Gateway for MonnifyGateway {
    fn name(&self) -> &'static str {
        "monnify"
    }

    fn needs_identity(&self) -> bool {
        true
    }

    fn identity(&self) -> Option<&dyn crate::identity::IdentityCheck> {
        Some(self)
    }

    async fn reserve(&self, customer: &Customer) -> Result<Reservation, GatewayError> {
        let mut body = json!({
            "accountReference": customer.reference,
            "accountName": customer.name,
            "currencyCode": "NGN",
            "contractCode": self.contract_code,
            "customerEmail": customer.email,
            "customerName": customer.name,
            "getAllAvailableBanks": true,
        });
        match (&customer.bvn, &customer.nin) {
            (Some(bvn), _) => body["bvn"] = json!(bvn.expose()),
            (None, Some(nin)) => body["nin"] = json!(nin.expose()),
            (None, None) => return Err(GatewayError::Refused("Monnify needs a BVN or NIN".into())),
        }
        let url = format!("{}/api/v2/bank-transfer/reserved-accounts", self.base_url);
        let answer = self.call(self.http.post(url).json(&body)).await?;
        reservation(&answer, &customer.reference)
    }

    async fn verify(&self, reference: &str) -> Result<Payment, GatewayError> {
        let url = format!(
            "{}/api/v2/transactions/{}",
            self.base_url,
            path_segment(reference)
        );
        let answer = self.call(self.http.get(url)).await?;
        payment(&answer).ok_or_else(|| unreadable(&answer))
    }

    async fn payments_since(
        &self,
        since: OffsetDateTime,
        customer_refs: &[String],
    ) -> Result<Vec<Payment>, GatewayError> {
        let mut found = Vec::new();
        for account_ref in customer_refs {
            for page in 0..MAX_PAGES {
                let answer = self.list_page(account_ref, page).await?;
                let listed = listed_payments(&answer, account_ref, since);
                found.extend(listed.payments);
                if listed.last_page {
                    break;
                }
            }
        }
        Ok(found)
    }

    fn read_webhook(&self, headers: &HeaderMap, body: &[u8]) -> Result<Webhook, WebhookError> {
        signature::check(headers, SIGNATURE_HEADER, self.secret_key.as_bytes(), body)?;
        Ok(read_event(body))
    }
}

/// How an HTTP exchange ended, before the envelope is read.
enum Answer {
    /// No answer: timeout, connection refused or dropped.
    Transport(String),
    /// A status other than 2xx, with the body.
    Status(u16, Value),
}

impl From<Answer> for GatewayError {
    fn from(answer: Answer) -> Self {
        match answer {
            Answer::Transport(e) => GatewayError::Unavailable(e),
            // A 4xx is Monnify refusing (bad request, credentials); a 5xx says nothing.
            Answer::Status(status @ 400..=499, body) if status != 404 && status != 429 => {
                GatewayError::Refused(format!("HTTP {status}: {}", message(&body)))
            }
            Answer::Status(status, body) => {
                GatewayError::Unavailable(format!("HTTP {status}: {}", message(&body)))
            }
        }
    }
}

async fn send(request: reqwest::RequestBuilder) -> Result<Value, Answer> {
    let response = request
        .send()
        .await
        .map_err(|e| Answer::Transport(e.to_string()))?;
    let status = response.status().as_u16();
    let text = response
        .text()
        .await
        .map_err(|e| Answer::Transport(e.to_string()))?;
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        return Err(Answer::Status(status, body));
    }
    Ok(body)
}

/// The `responseBody` of a successful answer.
fn envelope(body: Value) -> Result<Value, GatewayError> {
    match body["requestSuccessful"].as_bool() {
        Some(true) => Ok(body["responseBody"].clone()),
        Some(false) => Err(GatewayError::Refused(message(&body))),
        None => Err(unreadable(&body)),
    }
}

fn message(body: &Value) -> String {
    let message = body["responseMessage"].as_str().unwrap_or("no message");
    message.chars().take(200).collect()
}

fn unreadable(body: &Value) -> GatewayError {
    let excerpt: String = body.to_string().chars().take(120).collect();
    GatewayError::Unavailable(format!("an answer Monnify does not give: {excerpt}"))
}

/// A transaction reference as one URL path segment (`MNFY|…` → `MNFY%7C…`).
fn path_segment(reference: &str) -> String {
    use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
    utf8_percent_encode(reference, NON_ALPHANUMERIC).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipe_of_a_reference_is_encoded() {
        assert_eq!(
            path_segment("MNFY|04|20211117112842|000170"),
            "MNFY%7C04%7C20211117112842%7C000170"
        );
    }
}
