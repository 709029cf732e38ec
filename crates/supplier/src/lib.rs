//! The supplier boundary: who actually delivers airtime, tokens and pins.
//! [`Supplier`] is what the fulfilment worker and the verification endpoints
//! call; [`sandbox::SandboxSupplier`] is the built-in simulator that is the
//! default; [`vtpass::VtpassSupplier`] sells through VTpass.

pub mod callback;
pub mod routing;
pub mod sandbox;
pub mod vtpass;

use async_trait::async_trait;
use billpay_domain::{Delivery, Kobo, Product, PurchaseDetails};

/// One purchase as the supplier sees it. `reference_code` is the idempotency
/// key at the supplier: asking twice for one code never delivers twice.
#[derive(Debug, Clone)]
pub struct Order {
    pub reference_code: String,
    pub product: Product,
    pub provider: String,
    pub recipient: String,
    pub amount: Kobo,
    /// Product fields: meter_type, quantity, denomination…
    pub details: PurchaseDetails,
    /// VTpass's codes the catalogue names for this provider and plan
    /// (`vtpass_service_id`, `vtpass_variation_code`); `None`: the defaults.
    pub vtpass_codes: VtpassCodes,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct VtpassCodes {
    pub service_id: Option<String>,
    pub variation_code: Option<String>,
}

/// The supplier's answer about an order.
#[derive(Debug, Clone, PartialEq)]
pub enum SupplierStatus {
    /// Delivered; `result` carries what was delivered (token, pins…).
    Delivered { result: Delivery },
    /// Definitely not delivered and never will be: safe to refund.
    Failed { reason: String },
    /// Accepted but not final yet: ask again later.
    Pending,
    /// (requery only) The supplier never received this order.
    Unknown,
}

#[derive(Debug, Clone)]
pub struct VerifyRequest {
    pub product: Product,
    pub provider: String,
    pub number: String,
    pub meter_type: Option<u8>,
    /// The catalogue's `vtpass_service_id` of the provider, if it names one.
    pub vtpass_service_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verification {
    Found {
        customer_name: String,
        address: Option<String>,
    },
    NotFound,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SupplierError {
    /// The outcome is unknown (timeout, connection dropped): never refund on this.
    #[error("supplier unavailable: {0}")]
    Unavailable(String),
}

#[async_trait]
pub trait Supplier: Send + Sync + 'static {
    /// Recorded on each transaction it is sent to (`sandbox`, `vtpass`).
    fn name(&self) -> &'static str;
    /// The order's reference at this supplier, known before it is sent
    /// (recorded with the transaction, to find it in the supplier's books).
    fn reference(&self, _order: &Order) -> Option<String> {
        None
    }
    /// Whether this supplier sells `product` from `provider` at all; a
    /// purchase it does not sell is refused before any money moves.
    fn sells(&self, _product: Product, _provider: &str) -> bool {
        true
    }
    async fn verify(&self, request: &VerifyRequest) -> Result<Verification, SupplierError>;
    async fn purchase(&self, order: &Order) -> Result<SupplierStatus, SupplierError>;
    /// Status check of an order placed earlier (or possibly never received).
    async fn requery(&self, order: &Order) -> Result<SupplierStatus, SupplierError>;
}
