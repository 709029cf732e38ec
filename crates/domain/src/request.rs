//! A purchase request whose fields have passed their rules (account numbers,
//! quantities), and the amount limits of the products whose amount the client
//! chooses. Pricing it (provider, plan, denomination, then the amount limits:
//! docs/decisions.md's order of checks) is the catalogue's job, after this.

use crate::recipient::{
    CustomerId, FieldError, MeterNumber, MeterType, ProfileId, SmartcardNumber,
};
use crate::{Kobo, Phone, Product, Reference};

/// What the client asked for, per product. Stored as JSON tagged by its
/// `product` (`airtime`, `data`, … as `Product::service`) where it is bought
/// again later (a schedule's runs), each field read back through its rule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "product", rename_all = "lowercase")]
pub enum Item {
    Airtime {
        phone: Phone,
        amount: Kobo,
        /// The client says the number moved to the provider's network
        /// (`network::check` is skipped).
        ported: bool,
    },
    Data {
        phone: Phone,
        plan_id: String,
        ported: bool,
    },
    Epin {
        denomination: Kobo,
        quantity: u32,
    },
    Cable {
        smartcard: SmartcardNumber,
        plan_id: String,
        phone: Option<Phone>,
        /// The subscriber's name as the supplier's verification said it (the
        /// shop's, kept for the receipt); `None` from the API.
        recipient_name: Option<String>,
    },
    Electricity {
        meter: MeterNumber,
        meter_type: MeterType,
        amount: Kobo,
        /// "Unknown Customer" when the client gave none.
        recipient_name: String,
        /// The meter's address as the supplier's verification said it (the
        /// shop's, kept for the receipt); `None` from the API.
        address: Option<String>,
    },
    Education {
        quantity: u32,
        phone: Option<Phone>,
        /// JAMB: the candidate's profile ID (required there, refused elsewhere).
        profile_id: Option<ProfileId>,
    },
    Betting {
        customer: CustomerId,
        amount: Kobo,
    },
}

/// A checked request: `item` obeys its product's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurchaseRequest {
    /// The client's idempotency key.
    pub reference: Reference,
    /// A provider's slug or UUID, looked up in the catalogue next.
    pub provider_id: String,
    pub item: Item,
}

/// An amount outside its product's limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    #[error("Minimum amount is {0} Naira")]
    BelowMinimum(i64),
    #[error("Maximum amount is {0} Naira")]
    AboveMaximum(i64),
}

/// The Naira range a client-chosen amount must fall in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmountLimits {
    pub min_naira: i64,
    pub max_naira: i64,
}

impl AmountLimits {
    pub fn check(self, amount: Kobo) -> Result<Kobo, AmountError> {
        if amount < Kobo::from_naira(self.min_naira) {
            return Err(AmountError::BelowMinimum(self.min_naira));
        }
        if amount > Kobo::from_naira(self.max_naira) {
            return Err(AmountError::AboveMaximum(self.max_naira));
        }
        Ok(amount)
    }
}

impl Product {
    /// Limits of the products whose amount the client chooses; the others
    /// are priced by the catalogue.
    pub fn amount_limits(self) -> Option<AmountLimits> {
        let (min_naira, max_naira) = match self {
            Product::Airtime => (50, 50_000),
            Product::Electricity => (1_000, 500_000),
            Product::Betting => (100, 500_000),
            _ => return None,
        };
        Some(AmountLimits {
            min_naira,
            max_naira,
        })
    }

    /// The most pins one purchase may buy, for the products sold by count.
    pub fn max_quantity(self) -> Option<u32> {
        match self {
            Product::Epin => Some(100),
            Product::Education => Some(10),
            _ => None,
        }
    }
}

impl Item {
    pub fn product(&self) -> Product {
        match self {
            Item::Airtime { .. } => Product::Airtime,
            Item::Data { .. } => Product::Data,
            Item::Epin { .. } => Product::Epin,
            Item::Cable { .. } => Product::Cable,
            Item::Electricity { .. } => Product::Electricity,
            Item::Education { .. } => Product::Education,
            Item::Betting { .. } => Product::Betting,
        }
    }

    fn quantity(&self) -> Option<u32> {
        match self {
            Item::Epin { quantity, .. } | Item::Education { quantity, .. } => Some(*quantity),
            _ => None,
        }
    }
}

impl PurchaseRequest {
    /// Checks the item's quantity against its product's maximum.
    pub fn new(
        reference: Reference,
        provider_id: String,
        item: Item,
    ) -> Result<PurchaseRequest, FieldError> {
        let product = item.product();
        if let (Some(quantity), Some(max)) = (item.quantity(), product.max_quantity())
            && !(1..=max).contains(&quantity)
        {
            return Err(FieldError::new("quantity", format!("must be 1 to {max}")));
        }
        Ok(PurchaseRequest {
            reference,
            provider_id,
            item,
        })
    }

    pub fn product(&self) -> Product {
        self.item.product()
    }
}

/// The name an electricity purchase is made out to: the client's, if it has
/// any letters, else "Unknown Customer".
pub fn recipient_name(given: Option<String>) -> String {
    given
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "Unknown Customer".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> Reference {
        Reference::parse("order-0001").unwrap()
    }

    #[test]
    fn amounts_are_held_to_their_products_limits() {
        let airtime = |naira| {
            let limits = Product::Airtime.amount_limits().unwrap();
            limits.check(Kobo::from_naira(naira))
        };
        assert!(airtime(50).is_ok());
        assert!(airtime(50_000).is_ok());
        assert_eq!(airtime(49), Err(AmountError::BelowMinimum(50)));
        assert_eq!(
            airtime(50_001).unwrap_err().to_string(),
            "Maximum amount is 50000 Naira"
        );
        assert_eq!(Product::Data.amount_limits(), None);
    }

    #[test]
    fn quantities_are_held_to_their_products_maximum() {
        let epins = |quantity| {
            let denomination = Kobo::from_naira(100);
            PurchaseRequest::new(
                reference(),
                "mtn".into(),
                Item::Epin {
                    denomination,
                    quantity,
                },
            )
        };
        assert!(epins(100).is_ok());
        assert_eq!(
            epins(101).unwrap_err().to_string(),
            "quantity: must be 1 to 100"
        );
        assert!(epins(0).is_err());
        let item = Item::Education {
            quantity: 11,
            phone: None,
            profile_id: None,
        };
        let exams = PurchaseRequest::new(reference(), "waec".into(), item);
        assert_eq!(exams.unwrap_err().to_string(), "quantity: must be 1 to 10");
    }

    #[test]
    fn an_item_is_kept_as_json_and_read_back_through_its_rules() {
        let item = Item::Cable {
            smartcard: SmartcardNumber::parse("7012345678").unwrap(),
            plan_id: "dstv-padi".into(),
            phone: None,
            recipient_name: None,
        };
        let kept = serde_json::to_value(&item).unwrap();
        assert_eq!(kept["product"], "cable");
        assert_eq!(kept["smartcard"], "7012345678");
        assert_eq!(serde_json::from_value::<Item>(kept.clone()).unwrap(), item);
        let mut broken = kept;
        broken["smartcard"] = "70".into();
        assert!(
            serde_json::from_value::<Item>(broken).is_err(),
            "a rule still holds"
        );
        let meter = serde_json::json!({"product": "electricity", "meter": "45012345678",
            "meter_type": 2, "amount": 5000, "recipient_name": "Ada", "address": null});
        let read: Item = serde_json::from_value(meter).unwrap();
        assert!(matches!(
            read,
            Item::Electricity {
                meter_type: MeterType::Postpaid,
                ..
            }
        ));
    }

    #[test]
    fn a_blank_recipient_name_becomes_unknown_customer() {
        assert_eq!(recipient_name(None), "Unknown Customer");
        assert_eq!(recipient_name(Some("  ".into())), "Unknown Customer");
        assert_eq!(recipient_name(Some("Ada".into())), "Ada");
    }
}
