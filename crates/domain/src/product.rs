//! The seven products, their service names and webhook event names, and the
//! purchase state machine: processing → successful | failed, nothing else.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Product {
    Airtime,
    Data,
    Epin,
    Cable,
    Electricity,
    Education,
    Betting,
}

impl Product {
    pub const ALL: [Product; 7] = [
        Product::Airtime,
        Product::Data,
        Product::Epin,
        Product::Cable,
        Product::Electricity,
        Product::Education,
        Product::Betting,
    ];

    /// The service name used in provider records and `GET /providers/{type}`.
    pub fn service(self) -> &'static str {
        match self {
            Product::Airtime => "airtime",
            Product::Data => "data",
            Product::Epin => "epin",
            Product::Cable => "cable",
            Product::Electricity => "electricity",
            Product::Education => "education",
            Product::Betting => "betting",
        }
    }

    /// The webhook event name, e.g. `electricity.purchase`.
    pub fn event(self) -> &'static str {
        match self {
            Product::Airtime => "airtime.purchase",
            Product::Data => "data.purchase",
            Product::Epin => "epin.purchase",
            Product::Cable => "cable.purchase",
            Product::Electricity => "electricity.purchase",
            Product::Education => "education.purchase",
            Product::Betting => "bet.purchase",
        }
    }

    /// Data and cable purchases name a `plan`; the others an `item`.
    pub fn has_plan(self) -> bool {
        matches!(self, Product::Data | Product::Cable)
    }

    /// The JSON field that carries the plan or item name: `plan` or `item`.
    pub fn label_field(self) -> &'static str {
        if self.has_plan() { "plan" } else { "item" }
    }

    /// Products whose delivery is a `pin` in the webhook (token or exam pin).
    pub fn delivers_pin(self) -> bool {
        matches!(self, Product::Electricity | Product::Education)
    }
}

impl fmt::Display for Product {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.service())
    }
}

impl FromStr for Product {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Product::ALL
            .into_iter()
            .find(|p| p.service() == s)
            .ok_or(UnknownValue)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown value")]
pub struct UnknownValue;

/// Status of a purchase. Only `Processing` may change, and only to a final one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TxStatus {
    Processing,
    Successful,
    Failed,
}

impl TxStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TxStatus::Processing => "processing",
            TxStatus::Successful => "successful",
            TxStatus::Failed => "failed",
        }
    }

    pub fn is_final(self) -> bool {
        self != TxStatus::Processing
    }

    /// The state machine: the only allowed moves are out of `Processing`.
    pub fn can_become(self, next: TxStatus) -> bool {
        self == TxStatus::Processing && next.is_final()
    }
}

impl fmt::Display for TxStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TxStatus {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "processing" => Ok(TxStatus::Processing),
            "successful" => Ok(TxStatus::Successful),
            "failed" => Ok(TxStatus::Failed),
            _ => Err(UnknownValue),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Product::ALL {
            assert_eq!(p.service().parse::<Product>(), Ok(p));
        }
        assert_eq!(Product::Betting.event(), "bet.purchase");
        assert!("tv".parse::<Product>().is_err());
    }

    #[test]
    fn only_processing_moves() {
        use TxStatus::*;
        assert!(Processing.can_become(Successful));
        assert!(Processing.can_become(Failed));
        assert!(!Processing.can_become(Processing));
        assert!(!Successful.can_become(Failed));
        assert!(!Failed.can_become(Successful));
    }
}
