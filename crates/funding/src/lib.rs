//! Money in: the payment gateways through which customers fund their wallets
//! by bank transfer (Monnify reserved accounts, Paystack dedicated virtual
//! accounts). Each gateway is a folder (`monnify/`, `paystack/`): the client
//! in `mod.rs`, the reading of its answers and webhooks in `mapping.rs`, its
//! settings section in `settings.rs`. The rest of billpay sees the
//! [`Gateway`] trait only, so a third gateway is a new folder, not a change
//! to these.
//!
//! Nothing here trusts a webhook's word about money: [`Gateway::read_webhook`]
//! checks the signature over the raw bytes and names the payment; the amount
//! credited is what [`Gateway::verify`] reports. No database, no axum: the
//! worker's `funding` module records what these answer.

pub mod fee;
pub mod identity;
pub mod monnify;
pub mod paystack;
pub mod registry;
pub mod signature;

pub use fee::{FeeRule, FundingFlags, FundingSettings};

use async_trait::async_trait;
use billpay_domain::Kobo;
use reqwest::header::HeaderMap;
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;

/// The customer a bank account is reserved for.
#[derive(Debug, Clone)]
pub struct Customer {
    /// Our account id: the gateway's reference for the customer where it
    /// takes one (Monnify's `accountReference`).
    pub reference: String,
    pub name: String,
    pub email: String,
    /// Monnify requires one of BVN or NIN; `Debug` shows their last 4 digits only.
    pub bvn: Option<identity::IdNumber>,
    pub nin: Option<identity::IdNumber>,
}

/// A bank account customers transfer to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BankAccount {
    pub bank_name: String,
    pub account_number: String,
    pub account_name: String,
}

/// What a gateway reserved for a customer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// How the gateway names the customer in its payments (Monnify
    /// `product.reference`, Paystack `customer.customer_code`).
    pub customer_ref: String,
    /// Empty while the gateway is still assigning them (Paystack's
    /// asynchronous assignment: they come later in a webhook).
    pub accounts: Vec<BankAccount>,
}

/// Whether the gateway holds the money.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaidStatus {
    Paid,
    /// Anything else, with the gateway's word for it (`PENDING`, `failed`…).
    NotPaid(String),
}

/// A payment as the gateway reports it (verify, or its list of payments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    /// The gateway's transaction reference: credited once.
    pub reference: String,
    pub status: PaidStatus,
    /// What was paid, exactly.
    pub amount: Kobo,
    pub currency: String,
    /// Who it is for: the reservation's `customer_ref`…
    pub customer_ref: Option<String>,
    /// …or the account number it was paid into.
    pub account_number: Option<String>,
    /// The sender, for the operator (name and bank, as the gateway gives).
    pub payer: Option<String>,
}

impl Payment {
    /// Paid, in Naira: the only payments that credit a wallet.
    pub fn creditable(&self) -> Result<(), NotCreditable> {
        match &self.status {
            PaidStatus::NotPaid(status) => Err(NotCreditable::NotPaid(status.clone())),
            PaidStatus::Paid if self.currency != "NGN" => {
                Err(NotCreditable::Currency(self.currency.clone()))
            }
            PaidStatus::Paid if self.amount <= Kobo::ZERO => Err(NotCreditable::Nothing),
            PaidStatus::Paid => Ok(()),
        }
    }
}

/// Why a payment credits nothing (it is recorded rejected, with this).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotCreditable {
    #[error("not paid (gateway status {0})")]
    NotPaid(String),
    #[error("paid in {0}, not NGN")]
    Currency(String),
    #[error("paid nothing")]
    Nothing,
}

/// A signed webhook's payment, to be verified before anything is credited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentNotice {
    pub reference: String,
    /// The body's amount: compared with the verified one, never credited.
    pub claimed_amount: Option<Kobo>,
    pub customer_ref: Option<String>,
    pub account_number: Option<String>,
}

/// What a webhook with a good signature says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Webhook {
    Payment(PaymentNotice),
    /// Accounts assigned later (Paystack's `dedicatedaccount.assign.success`).
    Assigned(Reservation),
    /// A hosted checkout's payment (Paystack Checkout's `charge.success` by
    /// card, USSD or bank): credited only when billpay initialized its
    /// reference, and only as verified.
    Checkout(PaymentNotice),
    /// Not a payment (settlements, refunds…): answered 200, why logged.
    Ignore(String),
}

/// A webhook refused: answered 401, nothing recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    #[error("the signature header is missing")]
    Unsigned,
    #[error("the signature does not match the body")]
    BadSignature,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum GatewayError {
    /// No definite answer (timeout, 5xx, an answer we cannot read): ask again later.
    #[error("the gateway did not answer clearly: {0}")]
    Unavailable(String),
    /// The gateway refused the request (bad credentials, invalid BVN…).
    #[error("the gateway refused: {0}")]
    Refused(String),
}

/// A funding gateway.
#[async_trait]
pub trait Gateway: Send + Sync + 'static {
    /// `monnify`, `paystack`: its `/callbacks/{name}` and its name in the records.
    fn name(&self) -> &'static str;
    /// Reserves bank accounts for a customer.
    async fn reserve(&self, customer: &Customer) -> Result<Reservation, GatewayError>;
    /// The gateway's own account of one payment, by its reference.
    async fn verify(&self, reference: &str) -> Result<Payment, GatewayError>;
    /// Payments into reserved accounts since `since` (for reconciliation);
    /// `customer_refs` are the reservations billpay holds with this gateway.
    async fn payments_since(
        &self,
        since: OffsetDateTime,
        customer_refs: &[String],
    ) -> Result<Vec<Payment>, GatewayError>;
    /// Checks the signature over the raw body, then reads the event.
    fn read_webhook(&self, headers: &HeaderMap, body: &[u8]) -> Result<Webhook, WebhookError>;
    /// Whether reserving needs the customer's BVN or NIN (Monnify's does).
    fn needs_identity(&self) -> bool {
        false
    }
    /// Its hosted checkout, where the customer pays now (card, USSD, bank).
    fn checkout(&self) -> Option<&dyn HostedCheckout> {
        None
    }
    /// Its identity checks (BVN, NIN), where it offers them (Monnify's).
    fn identity(&self) -> Option<&dyn identity::IdentityCheck> {
        None
    }
}

/// A payment to start on a gateway's hosted page.
#[derive(Debug, Clone)]
pub struct CheckoutRequest {
    /// Ours, unique: the gateway's reference of the payment too.
    pub reference: String,
    pub email: String,
    /// What the customer pays, exactly.
    pub amount: Kobo,
    /// Where the gateway sends the customer back (absolute URL).
    pub callback_url: String,
    /// Our account id, for the gateway's records.
    pub account: String,
}

/// A checkout the gateway initialized: send the customer to `authorization_url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutStarted {
    pub authorization_url: String,
    pub access_code: String,
    pub reference: String,
}

/// A gateway's hosted checkout (Paystack Checkout). Its payments are
/// verified with [`Gateway::verify`] like any other.
#[async_trait]
pub trait HostedCheckout: Send + Sync {
    async fn initialize(&self, request: &CheckoutRequest) -> Result<CheckoutStarted, GatewayError>;
    /// The origins its payment pages are on (`scheme://host[:port]`): a
    /// form that is redirected there must be allowed to (CSP `form-action`).
    fn page_origins(&self) -> Vec<String>;
}

pub type SharedGateway = Arc<dyn Gateway>;

/// A gateway's HTTP client (`billpay_outbound`'s policy: connect and total
/// timeouts, no redirects: an answer elsewhere is not the gateway's).
pub(crate) fn http_client(timeout: Duration) -> Result<reqwest::Client, GatewayError> {
    billpay_outbound::http_client(timeout)
        .map_err(|e| GatewayError::Unavailable(format!("HTTP client: {e}")))
}

/// A gateway's base URL as configured: scheme and host, a trailing `/` tolerated.
pub(crate) fn base_url(configured: &str) -> String {
    configured.trim().trim_end_matches('/').to_owned()
}

/// An amount in Naira as a JSON number or string (`1500`, `1500.5`, `"1500.50"`).
pub(crate) fn naira(value: &serde_json::Value) -> Option<Kobo> {
    match value {
        serde_json::Value::Number(n) => Kobo::parse_naira(&n.to_string()).ok(),
        serde_json::Value::String(s) => Kobo::parse_naira(s).ok(),
        _ => None,
    }
}

/// An amount in kobo as a JSON integer or string (Paystack's `amount`).
pub(crate) fn kobo(value: &serde_json::Value) -> Option<Kobo> {
    match value {
        serde_json::Value::Number(n) => n.as_i64().map(Kobo),
        serde_json::Value::String(s) => s.trim().parse().ok().map(Kobo),
        _ => None,
    }
    .filter(|k| k.0 >= 0)
}

/// A string field, `None` when absent or blank.
pub(crate) fn text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A secret setting, `None` when unset or blank.
pub(crate) fn secret(value: &Option<secrecy::SecretString>) -> Option<&str> {
    use secrecy::ExposeSecret;
    let value = value.as_ref()?.expose_secret().trim();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn amounts_are_read_exactly_in_either_form() {
        assert_eq!(naira(&json!(78000)), Some(Kobo(7_800_000)));
        assert_eq!(naira(&json!(4500.5)), Some(Kobo(450_050)));
        assert_eq!(naira(&json!("4477.50")), Some(Kobo(447_750)));
        assert_eq!(naira(&json!(0.001)), None);
        assert_eq!(kobo(&json!(150000)), Some(Kobo(150_000)));
        assert_eq!(kobo(&json!("150000")), Some(Kobo(150_000)));
        assert_eq!(kobo(&json!(-1)), None);
    }

    #[test]
    fn only_paid_naira_is_creditable() {
        let paid = Payment {
            reference: "r".into(),
            status: PaidStatus::Paid,
            amount: Kobo(100),
            currency: "NGN".into(),
            customer_ref: None,
            account_number: None,
            payer: None,
        };
        assert!(paid.creditable().is_ok());
        let usd = Payment {
            currency: "USD".into(),
            ..paid.clone()
        };
        assert!(usd.creditable().unwrap_err().to_string().contains("USD"));
        let pending = Payment {
            status: PaidStatus::NotPaid("PENDING".into()),
            ..paid
        };
        assert!(
            pending
                .creditable()
                .unwrap_err()
                .to_string()
                .contains("PENDING")
        );
    }

    #[test]
    fn a_customer_printed_shows_only_the_last_4_digits_of_its_bvn_or_nin() {
        let customer = Customer {
            reference: "acct".into(),
            name: "Ada".into(),
            email: "ada@example.com".into(),
            bvn: Some(identity::IdNumber::parse("22222222226").unwrap()),
            nin: Some(identity::IdNumber::parse("12345678901").unwrap()),
        };
        let printed = format!("{customer:?}");
        assert!(!printed.contains("22222222226") && !printed.contains("12345678901"));
        assert!(
            printed.contains("2226") && printed.contains("8901"),
            "{printed}"
        );
    }
}
