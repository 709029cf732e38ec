//! Pricing a checked request from the catalogue and the caller's price
//! tier: provider, plan, label, recipient and face value are the
//! catalogue's, never the client's; the amount charged is the tier's price
//! of that face value (docs/pricing.md). The API's purchases and any other
//! shop call [`price`]; its refusals are an [`OrderError`] each caller words.

use crate::catalogue::{Catalogue, LookupError, Provider};
use crate::pricing::{PriceBook, Priced, Tier, denomination_key};
use crate::{
    AccountId, AmountError, Item, Kobo, Phone, Product, ProfileId, PurchaseDetails, PurchaseRequest,
};

/// Why a request cannot be ordered, in the order the checks run
/// (docs/decisions.md).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    /// An unknown or inactive provider or plan.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// A face value outside the product's amount limits.
    #[error(transparent)]
    Amount(#[from] AmountError),
    /// A field out of its rules: `field: why`.
    #[error("{0}")]
    Invalid(String),
    /// The caller's price is under [`MIN_CHARGE`] (a careless price rule).
    #[error(
        "{item} cannot be bought at this account's price of {charged} Naira, under the least a purchase can charge ({min} Naira); its price must be corrected first",
        min = MIN_CHARGE
    )]
    BelowMinimumCharge { item: String, charged: Kobo },
}

/// The least a purchase may charge: one kobo. A price under it is refused
/// where it is set (a price rule, a catalogue price), never listed, and a
/// purchase that would pay it is refused before anything is stored
/// (docs/pricing.md, "The floor").
pub const MIN_CHARGE: Kobo = Kobo(1);

pub type OrderResult<T> = Result<T, OrderError>;

/// A checked request, priced from the catalogue and the caller's tier.
pub struct Order<'a> {
    pub product: Product,
    pub provider: &'a Provider,
    pub plan_id: Option<String>,
    pub label: String,
    pub recipient: String,
    /// What the caller is charged.
    pub amount: Kobo,
    /// What the recipient gets (the amount limits apply to it).
    pub face_value: Kobo,
    /// The caller's tier; `None`: list prices.
    pub tier: Option<String>,
    /// The type's own fields, echoed in responses and kept on the transaction.
    pub details: PurchaseDetails,
}

/// Prices `request` for `account`, refusing an unknown or inactive provider,
/// plan or denomination, then a face value outside the product's limits (the
/// order of checks in docs/decisions.md); then charges the account's price.
pub fn price<'a>(
    catalogue: &'a Catalogue,
    prices: &PriceBook,
    account: AccountId,
    request: PurchaseRequest,
) -> OrderResult<Order<'a>> {
    let (mut order, unit, quantity) = price_unchecked(catalogue, request)?;
    if let Some(limits) = order.product.amount_limits() {
        limits.check(order.face_value)?;
    }
    let plan = match order.product {
        Product::Epin => Some(denomination_key(unit)),
        _ => order.plan_id.clone(),
    };
    let item = Priced {
        product: order.product,
        provider: &order.provider.slug,
        plan: plan.as_deref(),
        unit,
        quantity,
    };
    let charge = prices
        .charge(account, item)
        .map_err(|e| OrderError::Invalid(format!("amount: {e}")))?;
    if charge.charged < MIN_CHARGE {
        return Err(OrderError::BelowMinimumCharge {
            item: order.label,
            charged: charge.charged,
        });
    }
    order.amount = charge.charged;
    order.tier = charge.tier;
    Ok(order)
}

/// One thing the catalogue sells that a tier would charge less than
/// [`MIN_CHARGE`] for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BelowFloor {
    /// `data plan mtn-1gb (MTN 1GB)`, `airtime of mtn at 50.00 Naira`.
    pub item: String,
    pub charged: Kobo,
}

impl std::fmt::Display for BelowFloor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} would charge {} Naira", self.item, self.charged)
    }
}

/// Everything in `catalogue` (on sale or not) that `tier` would charge less
/// than [`MIN_CHARGE`] for: each plan, e-pin denomination and exam pin at its
/// list price, and each amount product at its smallest amount (a discount
/// never charges more for less, so that is its lowest price).
pub fn below_floor(catalogue: &Catalogue, tier: &Tier) -> Vec<BelowFloor> {
    let mut items: Vec<(Product, &str, Option<String>, Kobo, String)> = Vec::new();
    for plan in &catalogue.data_plans {
        let item = format!("data plan {} ({})", plan.plan_id, plan.name);
        let plan_id = Some(plan.plan_id.clone());
        items.push((
            Product::Data,
            plan.provider.as_str(),
            plan_id,
            plan.price,
            item,
        ));
    }
    for plan in &catalogue.cable_plans {
        let item = format!("cable plan {} ({})", plan.plan_id, plan.name);
        let plan_id = Some(plan.plan_id.clone());
        items.push((
            Product::Cable,
            plan.provider.as_str(),
            plan_id,
            plan.price,
            item,
        ));
    }
    for d in &catalogue.epin_denominations {
        let key = denomination_key(d.denomination);
        let item = format!("{} e-pin of {key} Naira", d.provider);
        items.push((
            Product::Epin,
            d.provider.as_str(),
            Some(key),
            d.denomination,
            item,
        ));
    }
    for provider in &catalogue.providers {
        if let Some(price) = provider.price {
            let item = format!("{} pin ({})", provider.name, provider.slug);
            items.push((
                Product::Education,
                provider.slug.as_str(),
                None,
                price,
                item,
            ));
        }
        for product in &provider.services {
            if let Some(limits) = product.amount_limits() {
                let least = Kobo::from_naira(limits.min_naira);
                let item = format!("{product} of {} at {least} Naira", provider.slug);
                items.push((*product, provider.slug.as_str(), None, least, item));
            }
        }
    }
    items
        .into_iter()
        .filter_map(|(product, provider, plan, unit, item)| {
            let rule = tier.rule_for(product, provider, plan.as_deref())?;
            let charged = rule.apply(unit, 1)?;
            (charged < MIN_CHARGE).then_some(BelowFloor { item, charged })
        })
        .collect()
}

/// A number whose prefix is known to be another network's than the telco
/// bought for is refused (unless the client says it is ported): the airtime
/// or data would be sent to a line that cannot use it.
fn same_network(phone: &Phone, provider: &Provider, ported: bool) -> OrderResult<()> {
    crate::network::check(phone, &provider.slug, ported)
        .map_err(|e| OrderError::Invalid(e.to_string()))
}

/// The order at list price, its unit face value and quantity.
fn price_unchecked<'a>(
    catalogue: &'a Catalogue,
    request: PurchaseRequest,
) -> OrderResult<(Order<'a>, Kobo, u32)> {
    let product = request.product();
    let provider = catalogue.provider_for(&request.provider_id, product)?;
    let order = |label: String,
                 recipient: String,
                 (unit, quantity): (Kobo, u32),
                 details: PurchaseDetails| {
        let face_value = times(unit, quantity)?;
        let order = Order {
            product,
            provider,
            plan_id: details.plan_id.clone(),
            label,
            recipient,
            amount: face_value,
            face_value,
            tier: None,
            details,
        };
        Ok::<_, OrderError>((order, unit, quantity))
    };
    let phone = |phone: Option<&Phone>| phone.map(Phone::to_string);
    match request.item {
        Item::Airtime {
            phone,
            amount,
            ported,
        } => {
            same_network(&phone, provider, ported)?;
            order(
                format!("{} Airtime", provider.name),
                phone.to_string(),
                (amount, 1),
                PurchaseDetails {
                    phone: Some(phone.to_string()),
                    ..Default::default()
                },
            )
        }
        Item::Data {
            phone,
            plan_id,
            ported,
        } => {
            same_network(&phone, provider, ported)?;
            let plan = catalogue.data_plan(provider, &plan_id)?;
            order(
                plan.name.clone(),
                phone.to_string(),
                (plan.price, 1),
                PurchaseDetails {
                    phone: Some(phone.to_string()),
                    plan_id: Some(plan.plan_id.clone()),
                    duration: Some(plan.duration),
                    ..Default::default()
                },
            )
        }
        Item::Epin {
            denomination,
            quantity,
        } => {
            let denomination = catalogue
                .epin_denomination(provider, denomination)
                .ok_or_else(|| {
                    OrderError::Invalid(format!(
                        "denomination: {} does not sell a {denomination} Naira e-pin",
                        provider.slug
                    ))
                })?
                .denomination;
            let batch_id = new_batch_id();
            order(
                format!("{} {denomination} e-PIN", provider.name),
                batch_id.clone(),
                (denomination, quantity),
                PurchaseDetails {
                    batch_id: Some(batch_id),
                    denomination: Some(denomination),
                    quantity: Some(i64::from(quantity)),
                    ..Default::default()
                },
            )
        }
        Item::Cable {
            smartcard,
            plan_id,
            phone: subscriber,
            recipient_name,
        } => {
            let plan = catalogue.cable_plan(provider, &plan_id)?;
            order(
                plan.name.clone(),
                smartcard.to_string(),
                (plan.price, 1),
                PurchaseDetails {
                    smartcard_number: Some(smartcard.into()),
                    phone: phone(subscriber.as_ref()),
                    plan_id: Some(plan.plan_id.clone()),
                    recipient_name: kept(recipient_name),
                    ..Default::default()
                },
            )
        }
        Item::Electricity {
            meter,
            meter_type,
            amount,
            recipient_name,
            address,
        } => order(
            provider.name.clone(),
            meter.to_string(),
            (amount, 1),
            PurchaseDetails {
                meter_number: Some(meter.into()),
                meter_type: Some(meter_type.code()),
                recipient_name: Some(recipient_name),
                recipient_address: kept(address),
                ..Default::default()
            },
        ),
        Item::Education {
            quantity,
            phone: candidate,
            profile_id,
        } => {
            let price = provider.price.ok_or(LookupError::InvalidProvider)?;
            check_profile(&provider.slug, profile_id.as_ref(), quantity)?;
            order(
                format!("{} PIN", provider.name),
                phone(candidate.as_ref()).unwrap_or_default(),
                (price, quantity),
                PurchaseDetails {
                    quantity: Some(i64::from(quantity)),
                    phone: phone(candidate.as_ref()),
                    profile_id: profile_id.map(String::from),
                    ..Default::default()
                },
            )
        }
        Item::Betting { customer, amount } => order(
            format!("{} wallet funding", provider.name),
            customer.to_string(),
            (amount, 1),
            PurchaseDetails {
                customer_id: Some(customer.into()),
                ..Default::default()
            },
        ),
    }
}

/// A verified name or address as kept: trimmed, at most 200 characters,
/// none when blank.
fn kept(text: Option<String>) -> Option<String> {
    let text = text?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.chars().take(200).collect())
}

/// JAMB sells one pin per candidate, who is named by the profile ID; no
/// other exam body takes one.
fn check_profile(provider: &str, profile_id: Option<&ProfileId>, quantity: u32) -> OrderResult<()> {
    let refuse = |why: &str| Err(OrderError::Invalid(why.into()));
    match (provider == "jamb", profile_id) {
        (true, None) => refuse("profile_id: required for JAMB (the candidate's profile ID)"),
        (true, Some(_)) if quantity != 1 => {
            refuse("quantity: must be 1 for JAMB (one pin per candidate)")
        }
        (false, Some(_)) => refuse("profile_id: only JAMB takes a profile ID"),
        _ => Ok(()),
    }
}

fn times(price: Kobo, count: u32) -> OrderResult<Kobo> {
    price
        .checked_mul(i64::from(count))
        .ok_or_else(|| OrderError::Invalid("amount: too large".into()))
}

/// Letters only after the time, so the sandbox's digit rules never match a batch.
fn new_batch_id() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let letters: String = (0..6)
        .map(|_| char::from(b'A' + rng.random_range(0..26u8)))
        .collect();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    format!("EP{now_ms}{letters}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::{BasisPoints, Rule, Scope};
    use crate::{Phone, Reference};
    use std::collections::HashMap;

    /// The default catalogue with MTN's 500MB plan at ₦0.40, and a book in
    /// which `account` gets `discount` basis points off data.
    fn setup(discount: i64) -> (Catalogue, PriceBook, AccountId) {
        let mut catalogue = Catalogue::from_toml(Catalogue::default_toml()).unwrap();
        let plan = catalogue
            .data_plans
            .iter_mut()
            .find(|p| p.plan_id == "mtn-sme-500mb")
            .unwrap();
        plan.price = Kobo(40);
        let scope = Scope {
            product: Product::Data,
            provider: None,
            plan: None,
        };
        let tier = Tier {
            name: "careless".into(),
            rules: HashMap::from([(scope, Rule::DiscountPercent(BasisPoints(discount)))]),
        };
        let account = AccountId::new();
        let book = PriceBook {
            tiers: HashMap::from([("careless".to_owned(), tier)]),
            accounts: HashMap::from([(account, "careless".to_owned())]),
        };
        (catalogue, book, account)
    }

    fn request(plan: &str) -> PurchaseRequest {
        let item = Item::Data {
            phone: Phone::parse("08031234567").unwrap(),
            plan_id: plan.into(),
            ported: false,
        };
        PurchaseRequest::new(Reference::parse("order-0001").unwrap(), "mtn".into(), item).unwrap()
    }

    #[test]
    fn a_price_under_one_kobo_is_refused_naming_the_item() {
        let (catalogue, book, account) = setup(9_999);
        let refused = price(&catalogue, &book, account, request("mtn-sme-500mb"));
        let Err(OrderError::BelowMinimumCharge { item, charged }) = refused else {
            panic!("not refused for the floor");
        };
        assert_eq!((item.as_str(), charged), ("MTN 500MB", Kobo::ZERO));
        // 99.99% off ₦600.00 is 6 kobo: sold.
        let gig = price(&catalogue, &book, account, request("mtn-sme-1gb")).unwrap();
        assert_eq!(gig.amount, Kobo(6));
        // The list price (no tier) of the ₦0.40 plan is a price.
        let list = price(
            &catalogue,
            &book,
            AccountId::new(),
            request("mtn-sme-500mb"),
        );
        assert_eq!(list.unwrap().amount, Kobo(40));
    }

    #[test]
    fn below_floor_names_what_a_tier_would_price_under_one_kobo() {
        let (catalogue, book, _) = setup(9_999);
        let found = below_floor(&catalogue, &book.tiers["careless"]);
        assert!(
            found.contains(&BelowFloor {
                item: "data plan mtn-sme-500mb (MTN 500MB)".into(),
                charged: Kobo::ZERO,
            }),
            "{found:?}"
        );
        assert!(
            found.iter().all(|b| b.item.starts_with("data plan")),
            "{found:?}"
        );
        // 97.5% off 40 kobo is exactly one kobo.
        let (catalogue, book, _) = setup(9_750);
        assert_eq!(below_floor(&catalogue, &book.tiers["careless"]), vec![]);
    }
}
