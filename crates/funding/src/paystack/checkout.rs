//! Paystack Checkout: a customer pays now by card, USSD or bank on
//! Paystack's hosted page. Written from Paystack's public docs:
//! `POST /transaction/initialize` with `{email, amount (kobo, an integer),
//! reference, callback_url, currency}` answers `data: {authorization_url,
//! access_code, reference}`; the customer is sent to `authorization_url`
//! (one use) and comes back to `callback_url?trxref=…&reference=…`, which
//! proves nothing: the payment is verified with
//! `GET /transaction/verify/{reference}` ([`Gateway::verify`]) and its
//! `charge.success` webhook is signed like every Paystack webhook.

use super::PaystackGateway;
use crate::*;
use serde::Deserialize;
use serde_json::json;

/// `data` of `POST /transaction/initialize`, as Paystack answers it.
#[derive(Debug, Deserialize)]
pub struct InitializeData {
    pub authorization_url: String,
    pub access_code: String,
    pub reference: String,
}

impl From<InitializeData> for CheckoutStarted {
    fn from(data: InitializeData) -> Self {
        CheckoutStarted {
            authorization_url: data.authorization_url,
            access_code: data.access_code,
            reference: data.reference,
        }
    }
}

/// Paystack's rule for a reference: alphanumerics and `-`, `.`, `=`.
pub fn reference_is_valid(reference: &str) -> bool {
    !reference.is_empty()
        && reference.len() <= 100
        && reference
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'='))
}

#[async_trait]
impl HostedCheckout for PaystackGateway {
    async fn initialize(&self, request: &CheckoutRequest) -> Result<CheckoutStarted, GatewayError> {
        if !reference_is_valid(&request.reference) {
            let why = format!("{} is not a reference Paystack takes", request.reference);
            return Err(GatewayError::Refused(why));
        }
        let body = json!({
            "email": request.email,
            "amount": request.amount.0,
            "currency": "NGN",
            "reference": request.reference,
            "callback_url": request.callback_url,
            "metadata": {"billpay_account": request.account},
        });
        let url = self.url("/transaction/initialize");
        let data = self.call(self.http.post(url).json(&body)).await?;
        let data: InitializeData = serde_json::from_value(data).map_err(|e| {
            GatewayError::Unavailable(format!("an initialize answer Paystack does not give: {e}"))
        })?;
        if data.reference != request.reference {
            return Err(GatewayError::Unavailable(format!(
                "Paystack initialized {} for {}",
                data.reference, request.reference
            )));
        }
        Ok(data.into())
    }

    fn page_origins(&self) -> Vec<String> {
        vec![CHECKOUT_ORIGIN.to_owned(), origin_of(&self.base_url)]
    }
}

/// Where Paystack's hosted payment pages are.
pub const CHECKOUT_ORIGIN: &str = "https://checkout.paystack.com";

/// `scheme://host[:port]` of a URL (the configured API base).
fn origin_of(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    format!("{scheme}://{authority}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_scheme_and_authority() {
        assert_eq!(
            origin_of("https://api.paystack.co"),
            "https://api.paystack.co"
        );
        assert_eq!(origin_of("http://127.0.0.1:9/x/y"), "http://127.0.0.1:9");
    }

    #[test]
    fn references_are_paystacks_characters_only() {
        assert!(reference_is_valid("BPC-20261125-ab12.x="));
        assert!(!reference_is_valid("a b"));
        assert!(!reference_is_valid("a|b"));
        assert!(!reference_is_valid(""));
    }

    #[test]
    fn an_initialize_answer_is_read_into_a_started_checkout() {
        let data: InitializeData = serde_json::from_value(serde_json::json!({
            "authorization_url": "https://checkout.paystack.com/0peioxfhpn",
            "access_code": "0peioxfhpn", "reference": "BPC-1"}))
        .unwrap();
        let started = CheckoutStarted::from(data);
        assert_eq!(started.access_code, "0peioxfhpn");
        assert_eq!(started.reference, "BPC-1");
    }
}
