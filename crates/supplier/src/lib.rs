//! The supplier boundary: who actually delivers airtime, tokens and pins.
//! [`Supplier`] is what the fulfilment worker and the verification endpoints
//! call, through [`routing::Routes`]. Each adapter is one folder:
//! [`sandbox::SandboxSupplier`] is the built-in simulator that is the
//! default; [`vtpass::VtpassSupplier`] sells through VTpass and
//! [`clubkonnect::ClubkonnectSupplier`] through ClubKonnect (Nellobytes).
//! Nothing outside an adapter's folder knows its codes or its API; what the
//! real ones repeat (HTTP client, answer logging) is [`shared`], their
//! start-up check [`health`].

pub mod callback;
pub mod clubkonnect;
pub mod health;
pub mod registry;
pub mod routing;
pub mod sandbox;
pub mod shared;
pub mod smedata;
pub mod vtpass;

use async_trait::async_trait;
pub use billpay_domain::catalogue::SupplierCodes;
use billpay_domain::{Delivery, Kobo, Product, PurchaseDetails};
use std::time::Duration;

/// One purchase as the supplier sees it. `reference_code` is the idempotency
/// key at the supplier: asking twice for one code never delivers twice.
#[derive(Debug, Clone)]
pub struct Order {
    pub reference_code: String,
    pub product: Product,
    pub provider: String,
    pub recipient: String,
    /// The face value: what the recipient gets (never the customer's tier
    /// price, which is ours alone).
    pub amount: Kobo,
    /// Product fields: meter_type, quantity, denomination…
    pub details: PurchaseDetails,
    /// The codes the catalogue names for this provider and plan at the
    /// supplier the order goes to (empty: the adapter's defaults).
    pub codes: SupplierCodes,
    /// Its reference at the supplier it goes to, as recorded so far (a
    /// requery's: the one known before sending, or the supplier's own id
    /// once an answer gave it; `None` for a first purchase).
    pub supplier_reference: Option<String>,
    /// When the purchase was placed (RFC 3339): a supplier that must look
    /// for a lost order in its listing looks after this.
    pub placed_at: Option<String>,
}

/// An answer with the supplier's own id of the order when it gave one
/// ([`Supplier::purchase_answered`]): recorded as the transaction's supplier
/// reference, so later requeries ask by it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    pub status: SupplierStatus,
    pub reference: Option<String>,
}

impl From<SupplierStatus> for Answered {
    fn from(status: SupplierStatus) -> Answered {
        Answered {
            status,
            reference: None,
        }
    }
}

/// The supplier's answer about an order.
#[derive(Debug, Clone, PartialEq)]
pub enum SupplierStatus {
    /// Delivered; `result` carries what was delivered (token, pins…) and
    /// `cost` what the supplier charged us for it, when its answer says
    /// (`None`: unknown, never guessed). Build it with [`SupplierStatus::delivered`]
    /// and, when the answer states a price, [`SupplierStatus::at_cost`].
    Delivered {
        result: Delivery,
        cost: Option<Kobo>,
    },
    /// Definitely not delivered and never will be: safe to refund.
    Failed { reason: String },
    /// Accepted but not final yet: ask again later.
    Pending,
    /// (requery only) The supplier never received this order.
    Unknown,
}

impl SupplierStatus {
    /// Delivered, at a cost the answer does not state.
    pub fn delivered(result: Delivery) -> SupplierStatus {
        SupplierStatus::Delivered { result, cost: None }
    }

    /// The same answer with the supplier's stated cost (a delivery only).
    pub fn at_cost(self, stated: Option<Kobo>) -> SupplierStatus {
        match self {
            SupplierStatus::Delivered { result, .. } => SupplierStatus::Delivered {
                result,
                cost: stated,
            },
            other => other,
        }
    }

    /// The outcome by name, for logs and metrics.
    pub fn name(&self) -> &'static str {
        match self {
            SupplierStatus::Delivered { .. } => "delivered",
            SupplierStatus::Failed { .. } => "failed",
            SupplierStatus::Pending => "pending",
            SupplierStatus::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone)]
pub struct VerifyRequest {
    pub product: Product,
    pub provider: String,
    pub number: String,
    pub meter_type: Option<u8>,
    /// The codes the catalogue names for the provider at the supplier asked.
    pub codes: SupplierCodes,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verification {
    Found {
        customer_name: String,
        address: Option<String>,
        /// Cable: the subscriber's bouquet now, when the supplier says it.
        current: Option<CurrentPlan>,
    },
    NotFound,
}

/// A cable subscriber's bouquet as the supplier's verification says it
/// (VTpass: `Current_Bouquet`, `Current_Bouquet_Code`, `Renewal_Amount`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CurrentPlan {
    /// As the supplier writes it ("DStv Compact N12400 + ExtraView Access N5000").
    pub name: String,
    /// The supplier's codes for it (VTpass may list several, comma-separated:
    /// the bouquet, then add-ons); empty when it gives none.
    pub codes: Vec<String>,
    /// What renewing it costs at the supplier (add-ons included).
    pub renewal: Option<Kobo>,
}

/// A plan a supplier sells for one provider: its code there, name and price.
#[derive(Debug, Clone, PartialEq)]
pub struct SupplierPlan {
    pub code: String,
    pub name: String,
    pub price: Kobo,
    /// What the plan is, when the list says it (an SME-data site's type,
    /// size and validity): a catalogue plan without this supplier's code is
    /// matched to it by these (`catalogue sync`). `None`: by code only.
    pub traits: Option<PlanTraits>,
}

/// A data plan's type, size and validity, as a sync compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanTraits {
    /// `sme`, `gifting`, `corporate-gifting` (the catalogue's categories).
    pub category: String,
    pub megabytes: u64,
    /// `None`: the list does not say (then it matches no plan of ours).
    pub days: Option<u32>,
}

impl PlanTraits {
    /// A category as a list writes it: `SME`, `SME2` → `sme`; `CORPORATE
    /// GIFTING`, `CG` → `corporate-gifting`; `GIFTING` → `gifting`.
    pub fn category(text: &str) -> String {
        let text = text.trim().to_ascii_lowercase().replace([' ', '_'], "-");
        match text.as_str() {
            t if t.starts_with("sme") => "sme".into(),
            "cg" | "corporate" | "corporate-gifting" => "corporate-gifting".into(),
            t if t.starts_with("gifting") => "gifting".into(),
            _ => text,
        }
    }

    /// `1.0GB`, `500MB`, `1.5 GB`, `mtn-sme-1gb` → megabytes (1 GB = 1000 MB,
    /// as the networks sell them; 1024 is read as 1 GB too).
    pub fn megabytes(text: &str) -> Option<u64> {
        let lower = text.to_ascii_lowercase();
        let (at, unit) = ["gb", "mb", "tb"]
            .iter()
            .filter_map(|u| lower.find(u).map(|at| (at, *u)))
            .min()?;
        let number: String = lower[..at]
            .trim_end()
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let value: f64 = number.parse().ok()?;
        let mb = match unit {
            "tb" => value * 1_000_000.0,
            "gb" => value * 1000.0,
            _ if value == 1024.0 => 1000.0,
            _ => value,
        };
        Some(mb.round() as u64)
    }

    /// `30 days`, `1 Month`, `7 Days`, `2 weeks`, `1 day` → days.
    pub fn days(text: &str) -> Option<u32> {
        let lower = text.trim().to_ascii_lowercase();
        let number: String = lower.chars().take_while(char::is_ascii_digit).collect();
        let n: u32 = number.parse().ok()?;
        let unit = lower[number.len()..].trim();
        Some(match unit {
            u if u.starts_with("day") => n,
            u if u.starts_with("week") => n * 7,
            u if u.starts_with("month") => n * 30,
            u if u.starts_with("year") => n * 365,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SupplierError {
    /// The outcome is unknown (timeout, connection dropped): never refund on this.
    #[error("supplier unavailable: {0}")]
    Unavailable(String),
    /// The supplier answered, but its books cannot say what became of the
    /// purchase (an SME-data site whose listing shows no order, or several
    /// that match, for a purchase whose answer was lost): a person must
    /// decide, with the evidence this says. For money exactly like
    /// [`SupplierError::Unavailable`] — never refunded, never sent to
    /// another supplier, never sent again; still requeried (a listing can
    /// lag) — but the purchase needs the operator's review at once, not
    /// only when it is old (docs/suppliers.md).
    #[error("needs the operator's review: {0}")]
    NeedsReview(String),
    /// The supplier refused our credentials (a harmless call, e.g. the balance).
    #[error("the supplier refused the credentials: {0}")]
    Refused(String),
    /// The base URL answered, but not like this supplier (a 404, an HTML
    /// page, a redirect): it points somewhere else.
    #[error("the base URL does not answer like the supplier: {0}")]
    NotThisSupplier(String),
}

#[async_trait]
pub trait Supplier: Send + Sync + 'static {
    /// Recorded on each transaction it is sent to (`sandbox`, `vtpass`, a
    /// configured SME-data site's name).
    fn name(&self) -> &str;
    /// The order's reference at this supplier, known before it is sent
    /// (recorded with the transaction, to find it in the supplier's books).
    fn reference(&self, _order: &Order) -> Option<String> {
        None
    }
    /// When a successful purchase is requeried again for a reversal the
    /// supplier may still make, as times after its success (ascending; the
    /// last is how long it is watched; docs/suppliers.md). Default: never
    /// (a supplier that never reverses a success).
    fn reversal_watch(&self) -> &'static [Duration] {
        &[]
    }
    /// Whether this supplier sells `product` from `provider` at all; a
    /// purchase it does not sell is refused before any money moves.
    fn sells(&self, _product: Product, _provider: &str) -> bool {
        true
    }
    /// The code a catalogue plan is known by at this supplier, given the
    /// codes the catalogue names for it there (default: the `plan` code,
    /// else the plan id). The plan list's codes are matched against it.
    fn plan_code(&self, plan_id: &str, codes: &SupplierCodes) -> String {
        codes
            .get("plan")
            .cloned()
            .unwrap_or_else(|| plan_id.to_owned())
    }
    /// Whether its plan list's prices are what a plan costs us (an SME-data
    /// site's `plan_amount`), not prices to sell at: a sync records them as
    /// the plan's expected cost there (`codes.<name>.cost`), never as our
    /// price, and a plan it does not list is only not routed there.
    fn lists_costs(&self) -> bool {
        false
    }
    /// The float left in our account there; `None`: it keeps none (the sandbox).
    async fn balance(&self) -> Option<Result<Kobo, SupplierError>> {
        None
    }
    /// The data or cable plans it sells for `provider` (given the provider's
    /// codes there); `None`: it publishes no such list for it.
    async fn plans(
        &self,
        _product: Product,
        _provider: &str,
        _codes: &SupplierCodes,
    ) -> Option<Result<Vec<SupplierPlan>, SupplierError>> {
        None
    }
    async fn verify(&self, request: &VerifyRequest) -> Result<Verification, SupplierError>;
    async fn purchase(&self, order: &Order) -> Result<SupplierStatus, SupplierError>;
    /// Status check of an order placed earlier (or possibly never received).
    async fn requery(&self, order: &Order) -> Result<SupplierStatus, SupplierError>;
    /// [`Supplier::purchase`] with the supplier's own id of the order when
    /// its answer gives one (a supplier that takes no reference of ours:
    /// the id is what later requeries ask by). Default: no id.
    async fn purchase_answered(&self, order: &Order) -> Result<Answered, SupplierError> {
        Ok(self.purchase(order).await?.into())
    }
    /// [`Supplier::requery`] likewise (an order found by a search, its id).
    async fn requery_answered(&self, order: &Order) -> Result<Answered, SupplierError> {
        Ok(self.requery(order).await?.into())
    }
}
