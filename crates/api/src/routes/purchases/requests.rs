//! The request bodies of the seven purchases, as the OpenAPI document shows
//! them, and their conversion into a checked [`PurchaseRequest`] (the domain's
//! rules: account numbers, quantities).

use crate::error::ApiError;
use crate::extract::whole_number;
use crate::schema;
use billpay_domain::request::recipient_name;
use billpay_domain::{
    CustomerId, Item, Kobo, MeterNumber, MeterType, Phone, ProfileId, PurchaseRequest, Reference,
    SmartcardNumber,
};
use serde::Deserialize;
use utoipa::ToSchema;

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "mtn", "phone": "08031234567", "amount": 500, "reference": "order-airtime-0001"}))]
pub struct AirtimeIn {
    /// mtn, airtel, glo or 9mobile (or UUID).
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    #[schema(schema_with = schema::phone)]
    pub phone: Phone,
    /// Naira, 50 to 50 000, at most 2 decimal places.
    #[schema(value_type = f64, minimum = 50, maximum = 50000, multiple_of = 0.01, example = 500)]
    pub amount: Kobo,
    /// `true`: the number was moved to this provider's network (number
    /// portability). Without it, a number whose prefix the NCC allocated to
    /// another network (a Glo 0805… for MTN) is refused, 422
    /// `validation_error` naming `phone`; a prefix billpay does not know
    /// passes. Default false.
    #[serde(default)]
    pub ported: bool,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": "08031234567", "reference": "order-data-0001"}))]
pub struct DataIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// A plan of the provider (`GET /v1/data-plans`).
    #[schema(min_length = 1)]
    pub plan_id: String,
    #[schema(schema_with = schema::phone)]
    pub phone: Phone,
    /// `true`: the number was moved to this provider's network (number
    /// portability). Without it, a number whose prefix the NCC allocated to
    /// another network (a Glo 0805… for MTN) is refused, 422
    /// `validation_error` naming `phone`; a prefix billpay does not know
    /// passes. Default false.
    #[serde(default)]
    pub ported: bool,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "mtn", "denomination": 100, "quantity": 2, "reference": "order-epin-0001"}))]
pub struct EpinIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// Naira; one of the provider's denominations (`GET /v1/recharge-pins/denominations`).
    #[schema(value_type = f64, minimum = 0, multiple_of = 0.01, example = 100)]
    pub denomination: Kobo,
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1, maximum = 100)]
    pub quantity: u32,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "dstv", "plan_id": "dstv-padi", "smartcard_number": "7012345678", "phone": "08031234567", "reference": "order-cable-0001"}))]
pub struct CableIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// A plan of the provider (`GET /v1/cable-plans`).
    #[schema(min_length = 1)]
    pub plan_id: String,
    /// 6 to 20 digits.
    #[schema(pattern = "^[0-9]{6,20}$", min_length = 6, max_length = 20)]
    pub smartcard_number: String,
    #[schema(schema_with = schema::optional_phone)]
    pub phone: Option<Phone>,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "ikeja-electric", "amount": 5000, "meter_number": "45012345678", "meter_type": 1, "recipient_name": "Ada Obi", "reference": "order-power-0001"}))]
pub struct ElectricityIn {
    /// e.g. ikeja-electric (or UUID).
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// Naira, 1 000 to 500 000, at most 2 decimal places.
    #[schema(value_type = f64, minimum = 1000, maximum = 500000, multiple_of = 0.01, example = 5000)]
    pub amount: Kobo,
    /// 1 to 20 digits.
    #[schema(pattern = "^[0-9]{1,20}$", min_length = 1, max_length = 20)]
    pub meter_number: String,
    /// 1 prepaid, 2 postpaid.
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1, maximum = 2)]
    pub meter_type: u8,
    /// Default "Unknown Customer".
    pub recipient_name: Option<String>,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "waec", "quantity": 1, "phone": "08031234567", "reference": "order-exam-0001"}))]
pub struct EducationIn {
    /// waec, neco, nabteb or jamb (or UUID).
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    /// At most 10; JAMB: 1 (one pin per candidate).
    #[serde(deserialize_with = "whole_number")]
    #[schema(minimum = 1, maximum = 10)]
    pub quantity: u32,
    #[schema(schema_with = schema::optional_phone)]
    pub phone: Option<Phone>,
    /// JAMB only, and required there: the candidate's profile ID (10
    /// digits, from JAMB's SMS), checked with JAMB before the pin is
    /// bought; an unknown one fails the purchase and refunds it.
    #[schema(
        pattern = "^[0-9]{10}$",
        min_length = 10,
        max_length = 10,
        example = "0123456789"
    )]
    pub profile_id: Option<String>,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"provider_id": "bet9ja", "customer_id": "1234567", "amount": 1000, "reference": "order-bet-0001"}))]
pub struct BetIn {
    #[schema(schema_with = schema::provider_id)]
    pub provider_id: String,
    #[schema(schema_with = schema::customer_id)]
    pub customer_id: String,
    /// Naira, 100 to 500 000, at most 2 decimal places.
    #[schema(value_type = f64, minimum = 100, maximum = 500000, multiple_of = 0.01)]
    pub amount: Kobo,
    #[schema(schema_with = schema::reference)]
    pub reference: Reference,
}

/// `TryFrom<XIn> for PurchaseRequest`: the body's item, then the domain's
/// checks (`PurchaseRequest::new`).
macro_rules! checked_by {
    ($body:ty, |$req:ident| $item:expr) => {
        impl TryFrom<$body> for PurchaseRequest {
            type Error = ApiError;
            fn try_from($req: $body) -> Result<Self, ApiError> {
                let item = $item;
                Ok(PurchaseRequest::new(
                    $req.reference,
                    $req.provider_id,
                    item,
                )?)
            }
        }
    };
}

checked_by!(AirtimeIn, |req| Item::Airtime {
    phone: req.phone,
    amount: req.amount,
    ported: req.ported,
});

checked_by!(DataIn, |req| Item::Data {
    phone: req.phone,
    plan_id: req.plan_id,
    ported: req.ported,
});

checked_by!(EpinIn, |req| Item::Epin {
    denomination: req.denomination,
    quantity: req.quantity,
});

checked_by!(CableIn, |req| Item::Cable {
    smartcard: SmartcardNumber::parse(&req.smartcard_number)?,
    plan_id: req.plan_id,
    phone: req.phone,
    recipient_name: None,
});

checked_by!(ElectricityIn, |req| Item::Electricity {
    meter: MeterNumber::parse(&req.meter_number)?,
    meter_type: MeterType::parse(req.meter_type)?,
    amount: req.amount,
    recipient_name: recipient_name(req.recipient_name),
    address: None,
});

checked_by!(EducationIn, |req| Item::Education {
    quantity: req.quantity,
    phone: req.phone,
    profile_id: req
        .profile_id
        .as_deref()
        .map(ProfileId::parse)
        .transpose()?,
});

checked_by!(BetIn, |req| Item::Betting {
    customer: CustomerId::parse(&req.customer_id)?,
    amount: req.amount,
});
