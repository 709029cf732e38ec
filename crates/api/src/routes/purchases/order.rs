//! Pricing a checked request from the catalogue and the caller's price
//! tier: provider, plan, label, recipient and face value are the
//! catalogue's, never the client's; the amount charged is the tier's price
//! of that face value (docs/pricing.md).

use crate::error::{ApiError, ApiResult};
use billpay_domain::catalogue::{Catalogue, Provider};
use billpay_domain::pricing::{PriceBook, Priced, denomination_key};
use billpay_domain::{
    AccountId, Item, Kobo, Phone, Product, ProfileId, PurchaseDetails, PurchaseRequest,
};

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
) -> ApiResult<Order<'a>> {
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
        .map_err(|e| ApiError::Validation(format!("amount: {e}")))?;
    order.amount = charge.charged;
    order.tier = charge.tier;
    Ok(order)
}

/// A number whose prefix is known to be another network's than the telco
/// bought for is refused (unless the client says it is ported): the airtime
/// or data would be sent to a line that cannot use it.
fn same_network(phone: &Phone, provider: &Provider, ported: bool) -> ApiResult<()> {
    billpay_domain::network::check(phone, &provider.slug, ported)
        .map_err(|e| ApiError::Validation(e.to_string()))
}

/// The order at list price, its unit face value and quantity.
fn price_unchecked<'a>(
    catalogue: &'a Catalogue,
    request: PurchaseRequest,
) -> ApiResult<(Order<'a>, Kobo, u32)> {
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
        Ok::<_, ApiError>((order, unit, quantity))
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
                    ApiError::Validation(format!(
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
                    ..Default::default()
                },
            )
        }
        Item::Electricity {
            meter,
            meter_type,
            amount,
            recipient_name,
        } => order(
            provider.name.clone(),
            meter.to_string(),
            (amount, 1),
            PurchaseDetails {
                meter_number: Some(meter.into()),
                meter_type: Some(meter_type.code()),
                recipient_name: Some(recipient_name),
                ..Default::default()
            },
        ),
        Item::Education {
            quantity,
            phone: candidate,
            profile_id,
        } => {
            let price = provider.price.ok_or(ApiError::InvalidProvider)?;
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

/// JAMB sells one pin per candidate, who is named by the profile ID; no
/// other exam body takes one.
fn check_profile(provider: &str, profile_id: Option<&ProfileId>, quantity: u32) -> ApiResult<()> {
    let refuse = |why: &str| Err(ApiError::Validation(why.into()));
    match (provider == "jamb", profile_id) {
        (true, None) => refuse("profile_id: required for JAMB (the candidate's profile ID)"),
        (true, Some(_)) if quantity != 1 => {
            refuse("quantity: must be 1 for JAMB (one pin per candidate)")
        }
        (false, Some(_)) => refuse("profile_id: only JAMB takes a profile ID"),
        _ => Ok(()),
    }
}

fn times(price: Kobo, count: u32) -> ApiResult<Kobo> {
    price
        .checked_mul(i64::from(count))
        .ok_or_else(|| ApiError::Validation("amount: too large".into()))
}

/// Letters only after the time, so the sandbox's digit rules never match a batch.
fn new_batch_id() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let letters: String = (0..6)
        .map(|_| char::from(b'A' + rng.random_range(0..26u8)))
        .collect();
    format!("EP{}{letters}", billpay_store::clock::now_ms())
}
