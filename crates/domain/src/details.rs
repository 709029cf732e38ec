//! A purchase's own fields: what the client asked for beyond provider, amount
//! and recipient (plan, meter, smartcard, quantity, e-pin batch…).

use crate::Kobo;
use serde::{Deserialize, Serialize};

/// The fields of an order that belong to its product (all optional here; each
/// product sets its own). Stored as the transaction's `details` and echoed in
/// the accepted response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = OrderDetails))]
pub struct PurchaseDetails {
    /// Airtime, data; cable and education when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// Data and cable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<String>,
    /// Data: validity in days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<u32>,
    /// E-pins: fetch the pins with `GET /v1/epin/batch?batch_id=…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// E-pins: Naira.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    pub denomination: Option<Kobo>,
    /// E-pins and education.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smartcard_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_type: Option<u8>,
    /// Electricity (as given, else "Unknown Customer"); cable: the
    /// subscriber's name as verified in the shop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient_name: Option<String>,
    /// Electricity: the meter's address as verified in the shop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<String>,
    /// Education, JAMB: the candidate's profile ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_id: Option<String>,
}

impl PurchaseDetails {
    /// The stored text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("purchase details are plain JSON")
    }

    /// The fields that are set, as (JSON name, shown value: a meter type as
    /// a word), by name.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let text = |v: &Option<String>| v.clone();
        let number = |v: Option<i64>| v.map(|n| n.to_string());
        let all = [
            ("batch_id", text(&self.batch_id)),
            ("customer_id", text(&self.customer_id)),
            ("denomination", self.denomination.map(|k| k.to_string())),
            ("duration", number(self.duration.map(i64::from))),
            ("meter_number", text(&self.meter_number)),
            ("meter_type", self.meter_type.map(meter_type)),
            ("phone", text(&self.phone)),
            ("plan_id", text(&self.plan_id)),
            ("profile_id", text(&self.profile_id)),
            ("quantity", number(self.quantity)),
            ("recipient_address", text(&self.recipient_address)),
            ("recipient_name", text(&self.recipient_name)),
            ("smartcard_number", text(&self.smartcard_number)),
        ];
        all.into_iter()
            .filter_map(|(name, value)| value.map(|v| (name, v)))
            .collect()
    }
}

/// A stored meter type as a word (`Prepaid`), its number if it is no type.
fn meter_type(code: u8) -> String {
    crate::MeterType::parse(code).map_or_else(|_| code.to_string(), |t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_products_own_fields_are_stored_and_shown() {
        let details = PurchaseDetails {
            meter_number: Some("45012345678".into()),
            meter_type: Some(1),
            recipient_name: Some("Ada Obi".into()),
            ..PurchaseDetails::default()
        };
        let json = r#"{"meter_number":"45012345678","meter_type":1,"recipient_name":"Ada Obi"}"#;
        assert_eq!(serde_json::to_string(&details).unwrap(), json);
        assert_eq!(
            serde_json::from_str::<PurchaseDetails>(json).unwrap(),
            details
        );
        let shown: Vec<_> = details.fields().into_iter().map(|(name, _)| name).collect();
        assert_eq!(shown, ["meter_number", "meter_type", "recipient_name"]);
        // a person reads the meter type as a word, not the wire's number
        assert_eq!(details.fields()[1], ("meter_type", "Prepaid".to_owned()));
    }
}
