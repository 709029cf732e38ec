//! The JSON body of every webhook (docs/webhooks.md): a purchase's final
//! status, the dashboard's test event, or a batch's completion
//! ([`BatchCompleted`], docs/bulk.md).

use billpay_domain::{Delivery, Kobo, Product, TxStatus};
use serde::Serialize;

/// One webhook body. Fields are declared in alphabetical order so the bytes
/// sent match docs/webhooks.md's examples (and every body sent before this
/// type existed); receivers must not rely on the order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WebhookPayload {
    /// Naira.
    pub amount: Kobo,
    /// E-pin purchases: fetch the pins with `GET /v1/epin/batch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// RFC 3339, milliseconds, UTC.
    pub completed_at: String,
    /// `<product>.purchase`, or `test.webhook`.
    pub event: &'static str,
    /// What the recipient got (Naira), when it differs from `amount` (what
    /// was charged: the account's price tier).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub face_value: Option<Kobo>,
    /// What was bought, for products without a plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    pub message: String,
    /// Electricity token or exam pin, when delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    /// The plan bought, for data and cable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    pub recipient: String,
    pub reference: String,
    pub reference_code: String,
    pub status: TxStatus,
    /// Electricity: the kWh of the token, when the supplier said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<f64>,
}

/// The fields a purchase's webhook takes from its transaction.
pub struct Purchase<'a> {
    pub product: Product,
    pub label: &'a str,
    pub reference: &'a str,
    pub reference_code: &'a str,
    pub recipient: &'a str,
    /// Charged.
    pub amount: Kobo,
    /// What the recipient gets.
    pub face_value: Kobo,
    pub batch_id: Option<&'a str>,
}

impl WebhookPayload {
    /// A purchase's final event. The result's `pin` is kept only for the
    /// products that deliver one in the webhook (electricity, education), its
    /// `units` for electricity.
    pub fn purchase(
        purchase: Purchase<'_>,
        status: TxStatus,
        message: &str,
        result: &Delivery,
        completed_at: String,
    ) -> WebhookPayload {
        let label = Some(purchase.label.to_owned());
        let has_plan = purchase.product.has_plan();
        WebhookPayload {
            amount: purchase.amount,
            batch_id: purchase.batch_id.map(str::to_owned),
            completed_at,
            event: purchase.product.event(),
            face_value: (purchase.face_value != purchase.amount).then_some(purchase.face_value),
            item: if has_plan { None } else { label.clone() },
            message: message.to_owned(),
            pin: result
                .pin
                .clone()
                .filter(|_| purchase.product.delivers_pin()),
            plan: if has_plan { label } else { None },
            recipient: purchase.recipient.to_owned(),
            reference: purchase.reference.to_owned(),
            reference_code: purchase.reference_code.to_owned(),
            status,
            units: result
                .units
                .filter(|_| purchase.product == Product::Electricity),
        }
    }

    /// The event the dashboard's "Send test event" delivers.
    pub fn test_event(reference_code: String, completed_at: String) -> WebhookPayload {
        WebhookPayload {
            amount: Kobo::default(),
            batch_id: None,
            completed_at,
            event: "test.webhook",
            face_value: None,
            item: Some("Test event".into()),
            message: "This is a test event sent from the billpay dashboard".into(),
            pin: None,
            plan: None,
            recipient: "08000000000".into(),
            reference: "dashboard-test".into(),
            reference_code,
            status: TxStatus::Successful,
            units: None,
        }
    }

    /// The exact bytes sent (and signed).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a webhook payload is plain JSON")
    }
}

/// `batch.completed`: every item of a batch has its final outcome (each
/// placed item's purchase has had its own webhook too). Fields in
/// alphabetical order, like [`WebhookPayload`]'s.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BatchCompleted {
    pub batch_id: String,
    /// What the batch's purchases charged, failed ones refunded (Naira).
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub charged: Kobo,
    /// RFC 3339, milliseconds, UTC.
    pub completed_at: String,
    /// `batch.completed`.
    #[cfg_attr(feature = "openapi", schema(example = "batch.completed"))]
    pub event: &'static str,
    /// Placed, failed at the supplier and refunded.
    pub failed: u32,
    pub items: u32,
    /// The batch's own reference.
    pub reference: String,
    /// Never placed (balance, a limit, a used reference…): nothing charged.
    pub refused: u32,
    pub successful: u32,
}

impl BatchCompleted {
    pub const EVENT: &'static str = "batch.completed";

    /// The exact bytes sent (and signed).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a webhook payload is plain JSON")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn electricity(status: TxStatus, result: &Delivery) -> WebhookPayload {
        let purchase = Purchase {
            product: Product::Electricity,
            label: "Ikeja Electric",
            reference: "order-0001",
            reference_code: "BP1780308902478F05853",
            recipient: "12345678901",
            amount: Kobo::from_naira(1500),
            face_value: Kobo::from_naira(1500),
            batch_id: None,
        };
        let at = "2026-06-01T10:15:02.481+00:00".to_owned();
        WebhookPayload::purchase(purchase, status, "Transaction successful", result, at)
    }

    #[test]
    fn the_bytes_are_the_documented_example() {
        let token = Delivery::token("9079-2542-3300-0641-3942".into(), Some(23.87));
        let payload = electricity(TxStatus::Successful, &token);
        let documented = r#"{"amount":1500.0,"completed_at":"2026-06-01T10:15:02.481+00:00","event":"electricity.purchase","item":"Ikeja Electric","message":"Transaction successful","pin":"9079-2542-3300-0641-3942","recipient":"12345678901","reference":"order-0001","reference_code":"BP1780308902478F05853","status":"successful","units":23.87}"#;
        assert_eq!(payload.to_json(), documented);
    }

    /// docs/webhooks.md shows receivers the bytes sent: the electricity
    /// example (with its `units`) and the dashboard's `test.webhook`.
    #[test]
    fn docs_webhooks_shows_the_bytes_sent() {
        let doc = include_str!("../../../docs/webhooks.md");
        let token = Delivery::token("9079-2542-3300-0641-3942".into(), Some(23.87));
        let electricity = electricity(TxStatus::Successful, &token).to_json();
        assert!(doc.contains(&electricity), "{electricity}");
        let test = WebhookPayload::test_event(
            "TEST1780309200000".into(),
            "2026-06-01T10:20:00.000+00:00".into(),
        )
        .to_json();
        assert!(doc.contains(&test), "{test}");
        assert!(doc.contains("### The test event"));
    }

    #[test]
    fn plans_and_pins_follow_the_product() {
        let data = WebhookPayload::purchase(
            Purchase {
                product: Product::Data,
                label: "MTN 1GB",
                reference: "order-0002",
                reference_code: "BP2",
                recipient: "08031234567",
                amount: Kobo::from_naira(294),
                face_value: Kobo::from_naira(300),
                batch_id: None,
            },
            TxStatus::Successful,
            "ok",
            &Delivery::token("not-for-data".into(), Some(1.5)),
            "t".into(),
        );
        assert_eq!(data.plan.as_deref(), Some("MTN 1GB"));
        // Charged at a tier's price: what the recipient got is said too.
        assert!(data.to_json().contains(r#""amount":294.0,"#));
        assert!(data.to_json().contains(r#""face_value":300.0,"#));
        assert_eq!((data.item, data.pin, data.units), (None, None, None));
    }
}
