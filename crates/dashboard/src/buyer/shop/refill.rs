//! "Buy again" and a saved or recent recipient's chip (issue 46, item 2):
//! one link to a product's form filled in with every field of the purchase
//! it comes from — the provider, the meter type, the bouquet or data plan,
//! the phone, the amount — so an Eko postpaid meter is bought again as Eko
//! postpaid, never as the form's first disco and prepaid.

use super::forms::{BuyForm, Product};
use billpay_domain::network::Network;
use billpay_domain::{Phone, PurchaseDetails};
use billpay_store::{Refill, Transaction};
use billpay_webkit::filters::url_encode;

/// What a purchase is made again with.
pub fn of_purchase(tx: &Transaction) -> Refill {
    Refill {
        recipient: tx.recipient.clone(),
        provider: tx.provider.clone(),
        details: PurchaseDetails {
            plan_id: tx.plan_id.clone().or_else(|| tx.details.plan_id.clone()),
            ..tx.details.clone()
        },
        amount: Some(tx.face_value),
    }
}

/// `product`'s form filled in with `refill` (a field it lacks stays empty:
/// a recipient saved before the fields were kept gives its number only).
pub fn link(product: Product, refill: &Refill) -> String {
    let query: Vec<String> = fields(product, refill)
        .into_iter()
        .map(|(name, value)| format!("{name}={}", url_encode(&value)))
        .collect();
    match query.is_empty() {
        true => format!("/dashboard/buy/{}", product.slug()),
        false => format!("/dashboard/buy/{}?{}", product.slug(), query.join("&")),
    }
}

/// The form [`link`] opens, as it is submitted ("Repeat this" makes a
/// schedule of it).
pub fn form(product: Product, refill: &Refill) -> BuyForm {
    let fields = fields(product, refill)
        .into_iter()
        .map(|(name, value)| (name.to_owned(), serde_json::Value::String(value)));
    serde_json::from_value(serde_json::Value::Object(fields.collect())).unwrap_or_default()
}

/// The form's fields `refill` fills in, each with a value.
fn fields(product: Product, refill: &Refill) -> Vec<(&'static str, String)> {
    let d = &refill.details;
    let or_recipient =
        |field: &Option<String>| field.clone().unwrap_or_else(|| refill.recipient.clone());
    let amount = refill.amount.map(|a| a.to_string());
    let mut fields: Vec<(&str, Option<String>)> = match product {
        Product::Airtime | Product::Data => {
            let phone = or_recipient(&d.phone);
            vec![
                (
                    "ported",
                    ported(&phone, &refill.provider).then(|| "1".into()),
                ),
                ("phone", Some(phone)),
                (
                    "plan_id",
                    d.plan_id.clone().filter(|_| product == Product::Data),
                ),
                ("amount", amount.filter(|_| product == Product::Airtime)),
            ]
        }
        Product::Electricity => vec![
            ("meter_number", Some(or_recipient(&d.meter_number))),
            ("meter_type", d.meter_type.map(|t| t.to_string())),
            ("amount", amount),
        ],
        Product::Cable => vec![
            ("smartcard_number", Some(or_recipient(&d.smartcard_number))),
            ("plan_id", d.plan_id.clone()),
            ("phone", d.phone.clone()),
        ],
        Product::Betting => vec![
            ("customer_id", Some(or_recipient(&d.customer_id))),
            ("amount", amount),
        ],
        Product::Epin => vec![
            (
                "denomination",
                d.denomination.map(|n| format!("{}|{n}", refill.provider)),
            ),
            ("quantity", d.quantity.map(|q| q.to_string())),
        ],
        Product::Exam => vec![
            ("quantity", d.quantity.map(|q| q.to_string())),
            ("phone", d.phone.clone()),
            ("profile_id", d.profile_id.clone()),
        ],
    };
    if product != Product::Epin {
        fields.insert(0, ("provider_id", Some(refill.provider.clone())));
    }
    fields
        .into_iter()
        .filter_map(|(name, value)| value.filter(|v| !v.is_empty()).map(|v| (name, v)))
        .collect()
}

/// A number bought on another network than its prefix's was bought as ported.
fn ported(phone: &str, provider: &str) -> bool {
    let network = Phone::parse(phone)
        .ok()
        .and_then(|p| Network::of_number(&p));
    let slug = match network {
        Some(Network::Mtn) => "mtn",
        Some(Network::Airtel) => "airtel",
        Some(Network::Glo) => "glo",
        Some(Network::NineMobile) => "9mobile",
        None => return false,
    };
    !provider.is_empty() && provider != slug
}

#[cfg(test)]
mod tests {
    use super::*;
    use billpay_domain::Kobo;

    fn refill(provider: &str, details: PurchaseDetails, naira: i64) -> Refill {
        Refill {
            recipient: details
                .meter_number
                .clone()
                .or(details.phone.clone())
                .or(details.smartcard_number.clone())
                .unwrap_or_default(),
            provider: provider.into(),
            details,
            amount: Some(Kobo::from_naira(naira)),
        }
    }

    #[test]
    fn an_eko_postpaid_meter_is_bought_again_as_eko_postpaid_for_the_same_amount() {
        let eko = refill(
            "eko-electric",
            PurchaseDetails {
                meter_number: Some("45012345678".into()),
                meter_type: Some(2),
                recipient_name: Some("Ada Obi".into()),
                ..PurchaseDetails::default()
            },
            6000,
        );
        assert_eq!(
            link(Product::Electricity, &eko),
            "/dashboard/buy/electricity?provider_id=eko-electric&meter_number=45012345678&meter_type=2&amount=6000.00"
        );
    }

    #[test]
    fn a_bouquet_and_a_data_plan_are_chosen_again_and_a_ported_number_stays_ported() {
        let dstv = refill(
            "dstv",
            PurchaseDetails {
                smartcard_number: Some("7012345678".into()),
                plan_id: Some("dstv-compact".into()),
                phone: Some("08031234567".into()),
                ..PurchaseDetails::default()
            },
            15700,
        );
        assert_eq!(
            link(Product::Cable, &dstv),
            "/dashboard/buy/cable?provider_id=dstv&smartcard_number=7012345678&plan_id=dstv-compact&phone=08031234567"
        );
        // a Glo prefix bought on MTN
        let data = refill(
            "mtn",
            PurchaseDetails {
                phone: Some("08051234567".into()),
                plan_id: Some("mtn-sme-1gb".into()),
                ..PurchaseDetails::default()
            },
            300,
        );
        assert_eq!(
            link(Product::Data, &data),
            "/dashboard/buy/data?provider_id=mtn&ported=1&phone=08051234567&plan_id=mtn-sme-1gb"
        );
        let airtime = refill(
            "mtn",
            PurchaseDetails {
                phone: Some("08031234567".into()),
                ..PurchaseDetails::default()
            },
            500,
        );
        assert_eq!(
            link(Product::Airtime, &airtime),
            "/dashboard/buy/airtime?provider_id=mtn&phone=08031234567&amount=500.00"
        );
    }

    #[test]
    fn a_recipient_saved_before_the_fields_were_kept_fills_its_number_only() {
        let old = Refill {
            recipient: "45012345678".into(),
            ..Refill::default()
        };
        assert_eq!(
            link(Product::Electricity, &old),
            "/dashboard/buy/electricity?meter_number=45012345678"
        );
    }
}
