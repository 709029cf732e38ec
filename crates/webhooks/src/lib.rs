//! Outbound webhooks for billpay.
//!
//! The service POSTs a JSON body to the URL configured on an API key. Only a
//! `2xx` answer within the timeout (10 s by default) counts as delivered.
//!
//! When signing is enabled on the key, every webhook carries two headers:
//!
//! * [`TIMESTAMP_HEADER`] (`X-Service-Timestamp`): Unix seconds when sent;
//! * [`SIGNATURE_HEADER`] (`X-Service-Signature`): lowercase hex
//!   HMAC-SHA256 keyed with the webhook secret's UTF-8 bytes over
//!   `timestamp + "." + raw body bytes` (see [`sign`]).
//!
//! When signing is disabled both headers are absent.
//!
//! This crate provides:
//!
//! * [`WebhookPayload`]: the body of every webhook;
//! * [`sign`]: the signature recipe;
//! * [`validate_url`]: checks a webhook URL when a customer configures it;
//! * [`DeliveryClient`]: one HTTP attempt, with a private-address (SSRF) guard
//!   that is applied after DNS resolution (see [`forbidden_reason`]);
//! * [`RETRY_SCHEDULE`] / [`retry_delay`]: when to try again after a failure.

mod delivery;
mod guard;
mod payload;
mod retry;
mod signature;
mod webhook_url;

pub use delivery::{DeliveryClient, DeliveryConfig, DeliveryOutcome, DeliveryRequest, USER_AGENT};
pub use guard::forbidden_reason;
pub use payload::{BatchCompleted, Purchase, WebhookPayload};
pub use retry::{RETRY_SCHEDULE, retry_delay};
pub use signature::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
pub use webhook_url::{MAX_URL_LEN, UrlError, validate_url};
