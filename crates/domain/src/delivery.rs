//! What a successful purchase delivered (a transaction's `result`): an
//! electricity token and its units, exam pins, or recharge e-pins. Suppliers
//! build it; the status endpoint, the e-pin batch, the webhook and the
//! dashboard read it. Stored as JSON (sealed at rest by the store).

use serde::{Deserialize, Serialize};

/// A transaction's result. Empty until delivered; while a purchase waits on
/// its supplier only `last_note` may be set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// Electricity token, or the exam pins joined with commas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    /// Electricity: kWh of the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<f64>,
    /// Exam pins (codes) or recharge e-pins (cards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<Pin>,
    /// The supplier's last word while the purchase was retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_note: Option<String>,
}

/// One delivered pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Pin {
    /// A recharge e-pin: its serial, the pin, the last day it can be loaded.
    Card(EpinCard),
    /// An exam result-checker pin.
    Code(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpinCard {
    pub serial: String,
    pub pin: String,
    /// YYYY-MM-DD.
    pub expires_on: String,
}

impl Delivery {
    /// An electricity token.
    pub fn token(token: String, units: Option<f64>) -> Delivery {
        Delivery {
            pin: Some(token),
            units,
            ..Delivery::default()
        }
    }

    /// Exam pins: each one, and all of them joined with commas in `pin`.
    pub fn exam_pins(pins: Vec<String>) -> Delivery {
        Delivery {
            pin: Some(pins.join(",")),
            pins: pins.into_iter().map(Pin::Code).collect(),
            ..Delivery::default()
        }
    }

    /// A batch of recharge e-pins.
    pub fn epins(cards: Vec<EpinCard>) -> Delivery {
        Delivery {
            pins: cards.into_iter().map(Pin::Card).collect(),
            ..Delivery::default()
        }
    }

    /// The e-pin cards of a batch (exam codes are not cards).
    pub fn cards(&self) -> impl Iterator<Item = &EpinCard> {
        self.pins.iter().filter_map(|pin| match pin {
            Pin::Card(card) => Some(card),
            Pin::Code(_) => None,
        })
    }
}

impl Pin {
    /// The pin itself, whatever its kind.
    pub fn code(&self) -> &str {
        match self {
            Pin::Card(card) => &card.pin,
            Pin::Code(code) => code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_json_is_what_suppliers_wrote_before_this_type() {
        let token = Delivery::token("1234-5678".into(), Some(79.9));
        assert_eq!(
            serde_json::to_string(&token).unwrap(),
            r#"{"pin":"1234-5678","units":79.9}"#
        );
        let exams = Delivery::exam_pins(vec!["111".into(), "222".into()]);
        assert_eq!(
            serde_json::to_string(&exams).unwrap(),
            r#"{"pin":"111,222","pins":["111","222"]}"#
        );
        let card = EpinCard {
            serial: "SN1".into(),
            pin: "9".into(),
            expires_on: "2027-01-01".into(),
        };
        let epins = Delivery::epins(vec![card.clone()]);
        let json = r#"{"pins":[{"serial":"SN1","pin":"9","expires_on":"2027-01-01"}]}"#;
        assert_eq!(serde_json::to_string(&epins).unwrap(), json);
        assert_eq!(serde_json::from_str::<Delivery>(json).unwrap(), epins);
        assert_eq!(epins.cards().collect::<Vec<_>>(), [&card]);
        assert_eq!(serde_json::to_string(&Delivery::default()).unwrap(), "{}");
    }

    #[test]
    fn a_processing_result_holds_only_the_last_note() {
        let note: Delivery = serde_json::from_str(r#"{"last_note":"pending"}"#).unwrap();
        assert_eq!(note.last_note.as_deref(), Some("pending"));
        assert_eq!(note.pin, None);
    }
}
