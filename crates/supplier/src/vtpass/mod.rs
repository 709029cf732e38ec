//! VTpass (vtpass.com), the Nigerian bill-payment aggregator, as a [`Supplier`].
//!
//! Written from VTpass's public API documentation. Its rules that matter here:
//! - POST calls carry the `api-key` and `secret-key` headers, GET calls
//!   `api-key` and `public-key`.
//! - Every purchase has our `request_id`: it starts with the time as
//!   `YYYYMMDDHHII` in Africa/Lagos and is unique. We derive it from our
//!   reference code (which embeds its creation time), so a retry of one
//!   purchase always sends the same `request_id` and VTpass never sells it
//!   twice (a second `/api/pay` answers `014`, request id already used).
//! - `/api/requery {request_id}` tells what became of a purchase; `015` there
//!   means VTpass never received it.
//!
//! The outcome mapping (docs/suppliers.md has the table): only a definite
//! failure refunds; anything unclear stays pending and is requeried, as the
//! VTpass docs ask ("take any response that differs from the guidelines as
//! pending"). See [`pay_outcome`] and [`requery_outcome`].

mod callback;
mod mapping;
mod registration;
mod settings;

pub use callback::VtpassCallbacks;
pub use mapping::*;
pub use registration::REGISTRATION;
pub use settings::VtpassSettings;

use crate::*;
use serde_json::{Value, json};
use std::time::Duration;

/// VTpass's live API.
pub const LIVE_URL: &str = "https://vtpass.com";
/// VTpass's sandbox (test credentials from sandbox.vtpass.com).
pub const SANDBOX_URL: &str = "https://sandbox.vtpass.com";

#[derive(Clone)]
pub struct VtpassConfig {
    /// Without a trailing slash, e.g. [`LIVE_URL`].
    pub base_url: String,
    pub api_key: String,
    pub secret_key: String,
    pub public_key: String,
    /// The whole call may take at most this long (connecting at most 10 s);
    /// longer is an unknown outcome (requeried, never refunded).
    pub timeout: Duration,
}

impl std::fmt::Debug for VtpassConfig {
    /// Never prints the keys.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VtpassConfig")
            .field("base_url", &self.base_url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

pub struct VtpassSupplier {
    config: VtpassConfig,
    http: reqwest::Client,
}

impl VtpassSupplier {
    /// The base URL may be written as VTpass's docs write it, with `/api`.
    pub fn new(mut config: VtpassConfig) -> Result<Self, SupplierError> {
        config.base_url = crate::shared::base_url(&config.base_url);
        let http = crate::shared::http_client(config.timeout)?;
        Ok(Self { config, http })
    }

    /// The base URL called (normalized).
    pub fn base_url(&self) -> &str {
        &self.config.base_url
    }

    /// The float left in our VTpass wallet, in kobo (`GET /api/balance`).
    async fn wallet_balance(&self) -> Result<Kobo, SupplierError> {
        let body = self.get("/api/balance").await?;
        crate::shared::amount(&body["contents"]["balance"])
            .ok_or_else(|| unexpected("balance", &body))
    }

    /// The plans VTpass sells for a `serviceID` (`GET /api/service-variations`):
    /// `variation_code`, name, price.
    async fn variations(&self, service_id: &str) -> Result<Vec<SupplierPlan>, SupplierError> {
        let body = self
            .get(&format!("/api/service-variations?serviceID={service_id}"))
            .await?;
        // VTpass spells the list "varations" (sic); accept the right spelling too.
        let content = &body["content"];
        let list = content["varations"]
            .as_array()
            .or(content["variations"].as_array())
            .ok_or_else(|| unexpected("service-variations", &body))?;
        Ok(list
            .iter()
            .filter_map(|v| {
                Some(SupplierPlan {
                    code: v["variation_code"].as_str()?.to_owned(),
                    name: v["name"].as_str().unwrap_or_default().to_owned(),
                    price: crate::shared::amount(&v["variation_amount"])?,
                    traits: None,
                })
            })
            .collect())
    }

    async fn post(&self, path: &str, body: Value) -> Result<(u16, Value), SupplierError> {
        let response = self
            .http
            .post(format!("{}{path}", self.config.base_url))
            .header("api-key", &self.config.api_key)
            .header("secret-key", &self.config.secret_key)
            .json(&body)
            .send()
            .await
            .map_err(|e| unreachable_error(path, &e))?;
        let status = response.status().as_u16();
        // A body that is not JSON (an HTML error page, a cut-off answer) is
        // read as `null`: an unknown outcome.
        let text = response
            .text()
            .await
            .map_err(|e| unreachable_error(path, &e))?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    async fn get(&self, path: &str) -> Result<Value, SupplierError> {
        let response = self
            .http
            .get(format!("{}{path}", self.config.base_url))
            .header("api-key", &self.config.api_key)
            .header("public-key", &self.config.public_key)
            .send()
            .await
            .map_err(|e| unreachable_error(path, &e))?;
        let status = response.status().as_u16();
        let text = response
            .text()
            .await
            .map_err(|e| unreachable_error(path, &e))?;
        read_get_answer(path, status, &text)
    }
}

#[async_trait]
impl Supplier for VtpassSupplier {
    fn name(&self) -> &str {
        "vtpass"
    }

    /// Our `request_id`, which VTpass's dashboard and requery know it by.
    fn reference(&self, order: &Order) -> Option<String> {
        request_id(&order.reference_code).ok()
    }

    fn sells(&self, product: Product, provider: &str) -> bool {
        service_id(product, provider).is_some()
    }

    /// A `delivered` may later be `reversed` (VTpass calls back, but a
    /// callback can be lost). Requeried 5 and 30 min, 2, 6 and 24 h after
    /// the success (docs/suppliers.md).
    fn reversal_watch(&self) -> &'static [Duration] {
        const WATCH: [Duration; 5] = [
            Duration::from_secs(5 * 60),
            Duration::from_secs(30 * 60),
            Duration::from_secs(2 * 3600),
            Duration::from_secs(6 * 3600),
            Duration::from_secs(24 * 3600),
        ];
        &WATCH
    }

    /// The catalogue's `variation_code`, else the plan id.
    fn plan_code(&self, plan_id: &str, codes: &SupplierCodes) -> String {
        variation_code(plan_id, codes)
    }

    async fn balance(&self) -> Option<Result<Kobo, SupplierError>> {
        Some(self.wallet_balance().await)
    }

    async fn plans(
        &self,
        product: Product,
        provider: &str,
        codes: &SupplierCodes,
    ) -> Option<Result<Vec<SupplierPlan>, SupplierError>> {
        if !matches!(product, Product::Data | Product::Cable) {
            return None;
        }
        let service = service_for(product, provider, codes)?;
        Some(self.variations(&service).await)
    }

    async fn verify(&self, request: &VerifyRequest) -> Result<Verification, SupplierError> {
        let Some(service) = service_for(request.product, &request.provider, &request.codes) else {
            return Ok(Verification::NotFound);
        };
        let mut body = json!({ "billersCode": request.number, "serviceID": service });
        if let Some(meter_type) = request.meter_type {
            body["type"] = json!(meter_variation(meter_type));
        }
        let (status, answer) = self.post("/api/merchant-verify", body).await?;
        verification(status, &answer)
    }

    async fn purchase(&self, order: &Order) -> Result<SupplierStatus, SupplierError> {
        let body = pay_request(order)?;
        let (status, answer) = self.post("/api/pay", body).await?;
        let outcome = pay_outcome(order, status, &answer);
        answer_log("pay", status, &answer).log(&outcome);
        Ok(outcome)
    }

    async fn requery(&self, order: &Order) -> Result<SupplierStatus, SupplierError> {
        let body = json!({ "request_id": request_id(&order.reference_code)? });
        let (status, answer) = self.post("/api/requery", body).await?;
        let outcome = requery_outcome(order, status, &answer);
        answer_log("requery", status, &answer).log(&outcome);
        Ok(outcome)
    }
}
