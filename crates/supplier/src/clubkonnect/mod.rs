//! ClubKonnect (Nellobytes Systems, nellobytesystems.com), the aggregator
//! that sells what VTpass does not for us (betting, e-pins, JAMB, SME data),
//! as a [`Supplier`].
//!
//! Its rules that matter here (from public clients; its docs are not public):
//! - Every call is a GET to `<base>/<Endpoint>.asp` with `UserID` and
//!   `APIKey` in the query; answers are JSON (an HTML page on 503).
//! - Every purchase carries our `RequestID`: our reference code itself, so
//!   a retry never buys twice and the operator finds the order in
//!   ClubKonnect's books by the code the customer sees.
//! - `APIQueryV1.asp?RequestID=` tells what became of a purchase.
//!
//! The outcome table is docs/suppliers.md's ([`mapping::read`],
//! [`mapping::outcome`]): only a definite refusal or cancellation refunds;
//! anything unclear is requeried, never refunded on a guess.

mod callback;
mod mapping;
mod registration;
mod settings;

pub use callback::ClubkonnectCallbacks;
pub use mapping::*;
pub use registration::REGISTRATION;
pub use settings::ClubkonnectSettings;

use crate::*;
use serde_json::Value;
use std::time::Duration;

/// ClubKonnect's API (there is no public sandbox).
pub const LIVE_URL: &str = "https://www.nellobytesystems.com";

#[derive(Clone)]
pub struct ClubkonnectConfig {
    pub base_url: String,
    pub user_id: String,
    pub api_key: String,
    /// The whole call may take at most this long; longer is an unknown outcome.
    pub timeout: Duration,
    /// Sent as `CallBackURL` on purchases, when set.
    pub callback_url: Option<String>,
}

impl std::fmt::Debug for ClubkonnectConfig {
    /// Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClubkonnectConfig")
            .field("base_url", &self.base_url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

pub struct ClubkonnectSupplier {
    config: ClubkonnectConfig,
    http: reqwest::Client,
}

impl ClubkonnectSupplier {
    pub fn new(mut config: ClubkonnectConfig) -> Result<Self, SupplierError> {
        config.base_url = crate::shared::base_url(&config.base_url);
        let http = crate::shared::http_client(config.timeout)?;
        Ok(Self { config, http })
    }

    /// The base URL called (normalized).
    pub fn base_url(&self) -> &str {
        &self.config.base_url
    }

    /// One GET: the HTTP status and the JSON answer (`null` when the body
    /// is not JSON: an HTML page, a cut-off answer). An error only when no
    /// answer came (timeout, connection refused or dropped).
    async fn get(&self, call: &Call) -> Result<(u16, Value), SupplierError> {
        let mut query: Vec<(&str, &str)> = vec![
            ("UserID", &self.config.user_id),
            ("APIKey", &self.config.api_key),
        ];
        query.extend(call.params.iter().map(|(n, v)| (*n, v.as_str())));
        let url = format!("{}/{}", self.config.base_url, call.endpoint);
        let unreachable = |e: reqwest::Error| {
            // Without the URL: its query holds the API key.
            SupplierError::Unavailable(format!(
                "ClubKonnect {}: {}",
                call.endpoint,
                e.without_url()
            ))
        };
        let response = self
            .http
            .get(url)
            .query(&query)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(unreachable)?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// A purchase or query call, read and logged.
    async fn order_call(
        &self,
        name: &str,
        order: &Order,
        call: Call,
        query: bool,
    ) -> Result<SupplierStatus, SupplierError> {
        let (status, body) = self.get(&call).await?;
        let reading = read(status, &body);
        let outcome = outcome(order, reading, &body, query);
        let code = code_text(&body);
        answer_log(name, status, &body, &code, reading).log(&outcome);
        Ok(outcome)
    }

    /// JAMB: the profile ID is checked before the pin is bought (a pin for
    /// a wrong profile is lost money for the candidate).
    async fn jamb_profile_found(&self, order: &Order) -> Result<bool, SupplierError> {
        let Some(profile_id) = order.details.profile_id.clone() else {
            return Ok(false);
        };
        let request = VerifyRequest {
            product: Product::Education,
            provider: order.provider.clone(),
            number: profile_id,
            meter_type: None,
            codes: order.codes.clone(),
        };
        Ok(matches!(
            self.verify(&request).await?,
            Verification::Found { .. }
        ))
    }
}

#[async_trait]
impl Supplier for ClubkonnectSupplier {
    fn name(&self) -> &str {
        "clubkonnect"
    }

    /// Our `RequestID` there: the reference code itself.
    fn reference(&self, order: &Order) -> Option<String> {
        Some(order.reference_code.clone())
    }

    fn sells(&self, product: Product, provider: &str) -> bool {
        mapping::sells(product, provider)
    }

    /// A `200` may still turn into `602` ("credited back") or a `5xx`: its
    /// network retries for an hour before cancelling (docs/suppliers.md).
    /// Requeried 1, 5, 15, 30 min, 1, 2, 6 and 24 h after the success.
    fn reversal_watch(&self) -> &'static [Duration] {
        const WATCH: [Duration; 8] = [
            Duration::from_secs(60),
            Duration::from_secs(5 * 60),
            Duration::from_secs(15 * 60),
            Duration::from_secs(30 * 60),
            Duration::from_secs(3600),
            Duration::from_secs(2 * 3600),
            Duration::from_secs(6 * 3600),
            Duration::from_secs(24 * 3600),
        ];
        &WATCH
    }

    /// The catalogue's `codes.clubkonnect.plan`, else the plan id.
    fn plan_code(&self, plan_id: &str, codes: &SupplierCodes) -> String {
        mapping::plan_code(plan_id, codes)
    }

    async fn balance(&self) -> Option<Result<Kobo, SupplierError>> {
        let answer = self.get(&Call::new("APIWalletBalanceV1.asp")).await;
        Some(answer.and_then(|(status, body)| mapping::balance(status, &body)))
    }

    async fn plans(
        &self,
        product: Product,
        provider: &str,
        codes: &SupplierCodes,
    ) -> Option<Result<Vec<SupplierPlan>, SupplierError>> {
        let (endpoint, id) = match product {
            Product::Data => ("APIDatabundlePlansV2.asp", network(provider, codes)?),
            Product::Cable if mapping::sells(product, provider) => (
                "APICableTVPackagesV2.asp",
                codes
                    .get("cable_tv")
                    .cloned()
                    .unwrap_or_else(|| provider.to_owned()),
            ),
            _ => return None,
        };
        let answer = self.get(&Call::new(endpoint)).await;
        Some(answer.and_then(|(status, body)| {
            match body.is_object() && (200..300).contains(&status) {
                true => Ok(plan_list(&body, &id)),
                false => Err(SupplierError::Unavailable(format!(
                    "ClubKonnect {endpoint}: HTTP {status}"
                ))),
            }
        }))
    }

    async fn verify(&self, request: &VerifyRequest) -> Result<Verification, SupplierError> {
        let Some(call) = verify_call(request) else {
            return Ok(Verification::NotFound);
        };
        let (status, body) = self.get(&call).await?;
        verification(status, &body)
    }

    async fn purchase(&self, order: &Order) -> Result<SupplierStatus, SupplierError> {
        let mut call = match purchase_call(order) {
            Ok(call) => call,
            // Nothing was sent: not charged, may go to the next supplier.
            Err(reason) => return Ok(SupplierStatus::Failed { reason }),
        };
        if order.product == Product::Education
            && order.provider == "jamb"
            && !self.jamb_profile_found(order).await?
        {
            return Ok(SupplierStatus::Failed {
                reason: "JAMB does not know this profile_id".into(),
            });
        }
        if let Some(url) = &self.config.callback_url {
            call = call.with("CallBackURL", url);
        }
        self.order_call("purchase", order, call, false).await
    }

    async fn requery(&self, order: &Order) -> Result<SupplierStatus, SupplierError> {
        let call = Call::new("APIQueryV1.asp").with("RequestID", &order.reference_code);
        self.order_call("query", order, call, true).await
    }
}
