//! What a purchase answers: the accepted transaction (live) or what it would
//! have deducted (test twin).

use billpay_domain::{Kobo, Product, PurchaseDetails};
use billpay_store::Transaction;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// `data` of a purchase: accepted (live) or checked (test twin).
#[derive(Serialize)]
#[serde(untagged)]
pub enum PurchaseOut {
    Accepted(Box<PurchaseAcceptedOut>),
    Test(TestPurchaseOut),
}

/// The accepted response: the spec's electricity result, generalised.
pub fn accepted(tx: Transaction) -> PurchaseAcceptedOut {
    PurchaseAcceptedOut {
        label: ProductLabel::new(tx.product, tx.label),
        status: true,
        message: "Transaction is processing",
        reference_code: tx.code,
        reference: tx.reference,
        balance_before: tx.balance_before,
        balance_after: tx.balance_after,
        amount: tx.amount,
        face_value: tx.face_value,
        recipient: tx.recipient,
        details: tx.details,
    }
}

/// What was bought: `plan` for data and cable, `item` for the other products.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProductLabel {
    /// Data and cable purchases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Other purchases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
}

impl ProductLabel {
    pub fn new(product: Product, label: String) -> ProductLabel {
        match product.has_plan() {
            true => ProductLabel {
                plan: Some(label),
                item: None,
            },
            false => ProductLabel {
                plan: None,
                item: Some(label),
            },
        }
    }
}

/// Accepted live purchase (`data` of the envelope). Test calls answer `TestPurchaseOut`.
#[derive(Serialize, ToSchema)]
pub struct PurchaseAcceptedOut {
    pub status: bool,
    #[schema(example = "Transaction is processing")]
    pub message: &'static str,
    pub reference_code: String,
    pub reference: String,
    #[schema(value_type = f64)]
    pub balance_before: Kobo,
    #[schema(value_type = f64)]
    pub balance_after: Kobo,
    /// What was charged (Naira): `balance_before − balance_after`, the
    /// account's price.
    #[schema(value_type = f64)]
    pub amount: Kobo,
    /// What the recipient gets (Naira): the airtime, token, pin or wallet
    /// value, or the plan's list price. Differs from `amount` when the
    /// account's price tier discounts it or adds a fee.
    #[schema(value_type = f64)]
    pub face_value: Kobo,
    #[serde(flatten)]
    pub label: ProductLabel,
    pub recipient: String,
    #[serde(flatten)]
    pub details: PurchaseDetails,
}

/// `data` of a test twin's purchase: what a live call would have deducted.
#[derive(Serialize, ToSchema)]
pub struct TestPurchaseOut {
    pub test_mode: bool,
    pub message: &'static str,
    /// The request body, echoed.
    pub request: Value,
    /// What a live call would charge: the account's price.
    #[schema(value_type = f64)]
    pub would_deduct: Kobo,
    /// What the recipient would get.
    #[schema(value_type = f64)]
    pub face_value: Kobo,
    #[schema(value_type = f64)]
    pub balance: Kobo,
}
