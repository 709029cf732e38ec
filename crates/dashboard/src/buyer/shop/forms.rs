//! The shop's product forms: one form struct for every product (the fields
//! a product does not use stay empty), turned into the domain's checked
//! [`PurchaseRequest`] exactly as the API's bodies are; and the one page
//! that renders any product's form with what it needs (networks and the
//! customer's own plan prices, providers, a verified name, saved and recent
//! recipients).

use super::{Chrome, PageError, PageResult, mint_reference, render};
use crate::DashboardState;
use crate::format::naira;
use crate::session::SignedIn;
use askama::Template;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::network::Network;
use billpay_domain::recipient::canonical;
use billpay_domain::request::recipient_name;
use billpay_domain::{
    CustomerId, Item, Kobo, MeterNumber, MeterType, Phone, Product as Sold, ProfileId,
    PurchaseRequest, Reference, SmartcardNumber,
};
use billpay_operations::purchases::{AccountPrices, PurchaseError, Purchasing};
use billpay_store::{Beneficiary, Refill};
use billpay_supplier::{SupplierCodes, Verification, VerifyRequest};
use billpay_webkit::filters::url_encode;
use serde::Deserialize;

/// The shop's products: the catalogue's, with their page's slug and words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    Data,
    Airtime,
    Electricity,
    Cable,
    Epin,
    Exam,
    Betting,
}

impl Product {
    pub const ALL: [Product; 7] = [
        Product::Data,
        Product::Airtime,
        Product::Electricity,
        Product::Cable,
        Product::Epin,
        Product::Exam,
        Product::Betting,
    ];

    pub fn slug(self) -> &'static str {
        match self {
            Product::Data => "data",
            Product::Airtime => "airtime",
            Product::Electricity => "electricity",
            Product::Cable => "cable",
            Product::Epin => "epin",
            Product::Exam => "exam",
            Product::Betting => "betting",
        }
    }

    pub fn from_slug(slug: &str) -> Option<Product> {
        Product::ALL.into_iter().find(|p| p.slug() == slug)
    }

    pub fn of(sold: Sold) -> Option<Product> {
        Some(match sold {
            Sold::Data => Product::Data,
            Sold::Airtime => Product::Airtime,
            Sold::Electricity => Product::Electricity,
            Sold::Epin => Product::Epin,
            Sold::Education => Product::Exam,
            Sold::Betting => Product::Betting,
            Sold::Cable => Product::Cable,
        })
    }

    pub fn title(self) -> &'static str {
        match self {
            Product::Data => "Data",
            Product::Airtime => "Airtime",
            Product::Electricity => "Electricity",
            Product::Cable => "Cable TV",
            Product::Epin => "Recharge e-pins",
            Product::Exam => "Exam pins",
            Product::Betting => "Betting wallet",
        }
    }

    pub fn blurb(self) -> &'static str {
        match self {
            Product::Data => "MTN, Airtel, Glo and 9mobile bundles",
            Product::Airtime => "Top up any Nigerian number",
            Product::Electricity => "Prepaid tokens and postpaid bills",
            Product::Cable => "DStv, GOtv and StarTimes bouquets",
            Product::Epin => "Printable recharge cards",
            Product::Exam => "Result checker and registration pins",
            Product::Betting => "Fund a betting account",
        }
    }

    /// The blurb with what is on sale now, from the catalogue: the exam
    /// bodies sold (`WAEC and JAMB pins`, never one off sale), the cable
    /// providers; the others' own words.
    pub fn blurb_on_sale(self, catalogue: &Catalogue) -> String {
        let names = || {
            let names: Vec<&str> = catalogue
                .providers
                .iter()
                .filter(|p| p.active && p.services.contains(&self.sold()))
                .map(|p| p.name.as_str())
                .collect();
            match names.as_slice() {
                [] => None,
                [one] => Some((*one).to_owned()),
                [first @ .., last] => Some(format!("{} and {last}", first.join(", "))),
            }
        };
        let on_sale = match self {
            Product::Exam => names().map(|n| format!("{n} pins")),
            Product::Cable => names().map(|n| format!("{n} bouquets")),
            _ => None,
        };
        on_sale.unwrap_or_else(|| self.blurb().to_owned())
    }

    pub fn sold(self) -> Sold {
        match self {
            Product::Data => Sold::Data,
            Product::Airtime => Sold::Airtime,
            Product::Electricity => Sold::Electricity,
            Product::Cable => Sold::Cable,
            Product::Epin => Sold::Epin,
            Product::Exam => Sold::Education,
            Product::Betting => Sold::Betting,
        }
    }

    /// The form field of the recipient (empty: the product has none).
    pub fn recipient_field(self) -> &'static str {
        match self {
            Product::Data | Product::Airtime => "phone",
            Product::Electricity => "meter_number",
            Product::Cable => "smartcard_number",
            Product::Betting => "customer_id",
            Product::Epin | Product::Exam => "",
        }
    }

    /// Products whose number the supplier names before paying.
    pub fn verified_first(self) -> bool {
        matches!(
            self,
            Product::Electricity | Product::Cable | Product::Betting
        )
    }
}

/// Every product's fields; a product reads its own. No `Debug`: it holds the PIN.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct BuyForm {
    pub reference: String,
    pub pin: String,
    pub provider_id: String,
    pub phone: String,
    pub amount: String,
    pub plan_id: String,
    /// A checkbox: present when ticked.
    pub ported: Option<String>,
    pub meter_number: String,
    pub meter_type: String,
    /// Cable: the smartcard or IUC number.
    pub smartcard_number: String,
    pub customer_id: String,
    pub recipient_name: String,
    /// Electricity: the address the supplier gave when verifying.
    pub recipient_address: String,
    /// E-pins: `provider|naira`.
    pub denomination: String,
    pub quantity: String,
    pub profile_id: String,
    /// A nickname to save the recipient under.
    pub save_as: String,
    /// Back from funding the wallet: name the number again at once.
    pub check: Option<String>,
}

impl BuyForm {
    fn ported(&self) -> bool {
        self.ported.is_some()
    }
}

/// What a refusal says at the form's top, and, when the wallet is short,
/// the link to fund it and come back.
pub struct Said {
    pub message: String,
    pub fund: Option<String>,
}

impl From<String> for Said {
    fn from(message: String) -> Said {
        Said {
            message,
            fund: None,
        }
    }
}

/// This form filled in again as `f` has it (never its PIN or reference;
/// `check=1` where the supplier names the number first).
pub fn back_link(product: Product, f: &BuyForm) -> String {
    let fields = [
        ("provider_id", &f.provider_id),
        ("phone", &f.phone),
        ("amount", &f.amount),
        ("plan_id", &f.plan_id),
        ("meter_number", &f.meter_number),
        ("meter_type", &f.meter_type),
        ("smartcard_number", &f.smartcard_number),
        ("customer_id", &f.customer_id),
        ("denomination", &f.denomination),
        ("quantity", &f.quantity),
        ("profile_id", &f.profile_id),
        ("save_as", &f.save_as),
    ];
    let mut query: Vec<String> = fields
        .iter()
        .filter(|(_, value)| !value.trim().is_empty())
        .map(|(name, value)| format!("{name}={}", url_encode(value.trim())))
        .collect();
    if f.ported.is_some() {
        query.push("ported=1".into());
    }
    if product.verified_first() {
        query.push("check=1".into());
    }
    format!("/dashboard/buy/{}?{}", product.slug(), query.join("&"))
}

/// The form as the domain's checked request (the same rules as the API's
/// bodies, in `billpay_api::routes::purchases::requests`).
pub fn request(
    product: Product,
    reference: Reference,
    f: &BuyForm,
) -> Result<PurchaseRequest, String> {
    let field = |name: &str, e: &dyn std::fmt::Display| format!("{name} {e}.");
    let phone = || Phone::parse(&f.phone).map_err(|e| field("Phone number", &e));
    let amount = || Kobo::parse_typed_naira(&f.amount).map_err(|e| field("Amount", &e));
    let quantity = || {
        f.quantity
            .trim()
            .parse::<u32>()
            .map_err(|_| "Quantity must be a whole number.".to_owned())
    };
    let mut provider = f.provider_id.trim().to_owned();
    if matches!(product, Product::Airtime | Product::Data) && provider.is_empty() {
        let network = Network::of_number(&phone()?)
            .ok_or("We cannot tell this number's network from its prefix: choose the network.")?;
        provider = telco_slug(network).to_owned();
    }
    if matches!(product, Product::Airtime | Product::Data) && !f.ported() {
        // the domain's rule, said for a person (the API's words name its JSON field)
        billpay_domain::network::check(&phone()?, &provider, false).map_err(|e| {
            format!(
                "{} is a {} number, not {}. If it was ported to {}, tick \"Ported number\".",
                e.phone, e.number, e.provider, e.provider
            )
        })?;
    }
    let item = match product {
        Product::Airtime => Item::Airtime {
            phone: phone()?,
            amount: amount()?,
            ported: f.ported(),
        },
        Product::Data => Item::Data {
            phone: phone()?,
            plan_id: f.plan_id.clone(),
            ported: f.ported(),
        },
        Product::Electricity => Item::Electricity {
            meter: MeterNumber::parse(&canonical(&f.meter_number)).map_err(|e| e.to_string())?,
            meter_type: meter_type(&f.meter_type)?,
            amount: amount()?,
            recipient_name: recipient_name(Some(f.recipient_name.clone())),
            address: Some(f.recipient_address.clone()),
        },
        Product::Cable => Item::Cable {
            smartcard: smartcard(f)?,
            plan_id: f.plan_id.trim().to_owned(),
            phone: (!f.phone.trim().is_empty()).then(phone).transpose()?,
            recipient_name: Some(f.recipient_name.clone()),
        },
        Product::Betting => Item::Betting {
            customer: CustomerId::parse(&f.customer_id).map_err(|e| e.to_string())?,
            amount: amount()?,
        },
        Product::Epin => {
            let (slug, naira) = f
                .denomination
                .split_once('|')
                .ok_or("Choose a network and an amount.")?;
            provider = slug.to_owned();
            Item::Epin {
                denomination: Kobo::parse_naira(naira).map_err(|e| field("Amount", &e))?,
                quantity: quantity()?,
            }
        }
        Product::Exam => Item::Education {
            quantity: quantity()?,
            phone: (!f.phone.trim().is_empty()).then(phone).transpose()?,
            profile_id: (!f.profile_id.trim().is_empty())
                .then(|| ProfileId::parse(&canonical(&f.profile_id)))
                .transpose()
                .map_err(|e| e.to_string())?,
        },
    };
    PurchaseRequest::new(reference, provider, item).map_err(|e| e.to_string())
}

fn smartcard(f: &BuyForm) -> Result<SmartcardNumber, String> {
    SmartcardNumber::parse(&canonical(&f.smartcard_number))
        .map_err(|_| "A smartcard (IUC) number is 6 to 20 digits.".to_owned())
}

fn meter_type(given: &str) -> Result<MeterType, String> {
    let code = given.trim().parse::<u8>().unwrap_or(0);
    MeterType::parse(code).map_err(|e| e.to_string())
}

/// What the supplier says of the number.
pub struct Verified {
    pub name: String,
    pub address: Option<String>,
    /// Cable: the subscriber's bouquet now, when the supplier says it.
    pub current: Option<CurrentBouquet>,
}

/// A smartcard's bouquet now, as the supplier's verification says it.
pub struct CurrentBouquet {
    /// As the supplier writes it (add-ons included).
    pub name: String,
    /// What renewing it costs at the provider, in Naira (add-ons included).
    pub renewal: Option<String>,
    /// The catalogue's bouquet it is, if on sale: chosen on the form.
    pub plan_id: Option<String>,
}

/// Asks the supplier (as `POST /v1/electricity/verify` does) for the name
/// on a meter, smartcard or betting account.
pub async fn verify(
    purchasing: &Purchasing,
    product: Product,
    f: &BuyForm,
) -> Result<Verified, String> {
    let (number, meter_type) = match product {
        Product::Electricity => (
            MeterNumber::parse(&canonical(&f.meter_number))
                .map_err(|e| e.to_string())?
                .into(),
            Some(meter_type(&f.meter_type)?.code()),
        ),
        Product::Cable => (smartcard(f)?.into(), None),
        Product::Betting => (
            CustomerId::parse(&f.customer_id)
                .map_err(|e| e.to_string())?
                .into(),
            None,
        ),
        _ => return Err("This product needs no verification.".into()),
    };
    let catalogue = purchasing
        .catalogue
        .get()
        .await
        .map_err(|e| e.to_string())?;
    let provider = catalogue
        .provider_for(&f.provider_id, product.sold())
        .map_err(|_| "Choose a provider.".to_owned())?;
    let request = VerifyRequest {
        product: product.sold(),
        provider: provider.slug.clone(),
        codes: SupplierCodes::new(),
        number,
        meter_type,
    };
    let answer = purchasing.ask_supplier(&request).await;
    match answer.map_err(|e| format!("{e}."))? {
        Verification::Found {
            customer_name,
            address,
            current,
        } => Ok(Verified {
            name: customer_name,
            address,
            current: current.map(|c| CurrentBouquet {
                plan_id: catalogue
                    .current_cable_plan(&provider.slug, &c.codes, &c.name)
                    .map(|plan| plan.plan_id.clone()),
                renewal: c.renewal.map(naira),
                name: c.name,
            }),
        }),
        Verification::NotFound => Err(match product {
            Product::Electricity => {
                "No customer has this meter number at this provider. Check it and the meter type."
                    .into()
            }
            Product::Cable => {
                "No subscriber has this smartcard number at this provider. Check it and the provider."
                    .into()
            }
            _ => "No customer has this ID at this provider. Check it.".into(),
        }),
    }
}

pub struct Choice {
    pub value: String,
    pub label: String,
}

pub struct PlanChoice {
    pub plan_id: String,
    pub name: String,
    pub validity: String,
    pub price: String,
}

/// Plans of one network and type (SME, Gifting, Corporate).
pub struct PlanGroup {
    pub title: String,
    pub plans: Vec<PlanChoice>,
}

#[derive(Template)]
#[template(path = "buyer/shop_buy.html")]
struct BuyPage {
    chrome: Chrome,
    product: &'static str,
    title: &'static str,
    balance: String,
    has_pin: bool,
    error: Option<String>,
    /// The wallet is short: fund it and come back (`/dashboard/wallet?back=…`).
    fund: Option<String>,
    reference: String,
    form: BuyForm,
    providers: Vec<Choice>,
    /// Data: the network the plans are of (slug, name).
    network: Option<Choice>,
    /// Data: a number was given but its network is not known and none chosen.
    choose_network: bool,
    plans: Vec<PlanGroup>,
    /// Cable: the chosen provider's bouquets at the customer's price.
    bouquets: Vec<PlanChoice>,
    denominations: Vec<Choice>,
    /// Exams: each body on sale with one pin's price at the customer's price.
    exams: Vec<Choice>,
    verified: Option<Verified>,
    /// The form's recipient field (`phone`, `meter_number`…); empty: none.
    recipient_field: &'static str,
    /// Saved recipients, then the last five.
    recipients: Vec<RecipientLink>,
    /// The account's own phone: the "my number" shortcut of airtime and data.
    my_phone: Option<String>,
}

/// A saved or recent recipient: a link to this form filled in with it.
pub struct RecipientLink {
    pub label: String,
    pub detail: String,
    pub href: String,
    pub saved: bool,
}

/// Renders `product`'s form, `error` said at its top.
pub async fn page(
    state: &DashboardState,
    signed_in: &SignedIn,
    product: Product,
    form: BuyForm,
    error: Option<Said>,
    verified: Option<Verified>,
) -> PageResult {
    let (error, fund) = match error {
        Some(said) => (Some(said.message), said.fund),
        None => (None, None),
    };
    let purchasing = super::purchasing(state)?;
    let account = signed_in.user.id;
    let store = &state.store;
    let catalogue = purchasing.catalogue.get().await?;
    // prices are per account (its tier); no key is used to list them
    let prices = purchasing.prices(account).await.map_err(page_error)?;
    let sold = product.sold();
    let (network, choose_network, plans) = match product {
        Product::Data => data_plans(&catalogue, &prices, &form),
        _ => (None, false, Vec::new()),
    };
    let reference = match Reference::parse(&form.reference) {
        Ok(given) => given.to_string(),
        Err(_) => mint_reference(),
    };
    Ok(render(&BuyPage {
        chrome: Chrome::new(signed_in, "buy"),
        product: product.slug(),
        title: product.title(),
        balance: naira(store.balance(account).await?),
        has_pin: store.transaction_pin(account).await?.is_some(),
        error,
        fund,
        reference,
        providers: providers(&catalogue, sold),
        network,
        choose_network,
        plans,
        bouquets: match product {
            Product::Cable => bouquets(&catalogue, &prices, &form.provider_id),
            _ => Vec::new(),
        },
        denominations: denominations(&catalogue, &prices),
        exams: match product {
            Product::Exam => exams(&catalogue, &prices),
            _ => Vec::new(),
        },
        verified: verified.filter(|_| product.verified_first()),
        recipient_field: product.recipient_field(),
        my_phone: signed_in.user.phone.clone().filter(|p| !p.is_empty()),
        recipients: recipients(
            &catalogue,
            product,
            store.beneficiaries(account, sold).await?,
            store.recent_recipients(account, sold, 5).await?,
        ),
        form,
    }))
}

fn recipients(
    catalogue: &Catalogue,
    product: Product,
    saved: Vec<Beneficiary>,
    recent: Vec<Refill>,
) -> Vec<RecipientLink> {
    if product.recipient_field().is_empty() {
        return Vec::new();
    }
    // what the chip fills in besides the number: `Eko Electric, postpaid`
    let what = |r: &Refill| {
        let provider = catalogue.provider(&r.provider).map(|p| p.name.clone());
        let meter = r.details.meter_type.and_then(|t| MeterType::parse(t).ok());
        let meter = meter.map(|t| t.to_string().to_lowercase());
        [provider, meter]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let recent = recent
        .into_iter()
        .filter(|r| !saved.iter().any(|b| b.recipient == r.recipient))
        .map(|r| RecipientLink {
            href: super::refill::link(product, &r),
            detail: what(&r),
            label: r.recipient,
            saved: false,
        });
    saved
        .iter()
        .map(|b| RecipientLink {
            href: super::refill::link(product, &b.refill),
            label: b.nickname.clone(),
            detail: match what(&b.refill) {
                w if w.is_empty() => b.recipient.clone(),
                w => format!("{} · {w}", b.recipient),
            },
            saved: true,
        })
        .chain(recent)
        .collect()
}

/// A failure reading what the page shows: a page error (the store's cause logged).
fn page_error(e: PurchaseError) -> PageError {
    match e {
        PurchaseError::Store(e) => e.into(),
        other => PageError::internal(&other),
    }
}

fn providers(catalogue: &Catalogue, sold: Sold) -> Vec<Choice> {
    catalogue
        .providers
        .iter()
        .filter(|p| p.active && p.services.contains(&sold))
        .map(|p| Choice {
            value: p.slug.clone(),
            label: p.name.clone(),
        })
        .collect()
}

/// The telco slug a number's network is sold under.
fn telco_slug(network: Network) -> &'static str {
    match network {
        Network::Mtn => "mtn",
        Network::Airtel => "airtel",
        Network::Glo => "glo",
        Network::NineMobile => "9mobile",
    }
}

/// The plans of the chosen network (else the number's), grouped by type, at
/// the customer's own price; none until a number is given.
fn data_plans(
    catalogue: &Catalogue,
    prices: &AccountPrices,
    form: &BuyForm,
) -> (Option<Choice>, bool, Vec<PlanGroup>) {
    let Ok(phone) = Phone::parse(&form.phone) else {
        return (None, false, Vec::new());
    };
    let slug = match form.provider_id.trim() {
        "" => match Network::of_number(&phone) {
            Some(network) => telco_slug(network).to_owned(),
            None => return (None, true, Vec::new()),
        },
        chosen => chosen.to_owned(),
    };
    let Some(provider) = catalogue.provider(&slug) else {
        return (None, true, Vec::new());
    };
    let mut groups: Vec<PlanGroup> = Vec::new();
    let plans = catalogue
        .data_plans
        .iter()
        .filter(|p| p.active && p.provider == provider.slug);
    for plan in plans {
        let price = prices.unit(Sold::Data, &plan.provider, Some(&plan.plan_id), plan.price);
        let Some(price) = price else { continue };
        let title = format!("{} {}", provider.name, catalogue.data_plan_type(plan));
        let choice = PlanChoice {
            plan_id: plan.plan_id.clone(),
            name: plan.name.clone(),
            validity: validity(plan.duration),
            price: naira(price),
        };
        match groups.iter_mut().find(|g| g.title == title) {
            Some(group) => group.plans.push(choice),
            None => groups.push(PlanGroup {
                title,
                plans: vec![choice],
            }),
        }
    }
    let network = Choice {
        value: provider.slug.clone(),
        label: provider.name.clone(),
    };
    (Some(network), false, groups)
}

/// The provider's bouquets on sale, cheapest first, at the customer's price.
fn bouquets(catalogue: &Catalogue, prices: &AccountPrices, provider: &str) -> Vec<PlanChoice> {
    let Some(provider) = catalogue.provider(provider.trim()) else {
        return Vec::new();
    };
    let mut plans: Vec<_> = catalogue
        .cable_plans
        .iter()
        .filter(|p| p.active && p.provider == provider.slug)
        .filter_map(|p| {
            let price = prices.unit(Sold::Cable, &p.provider, Some(&p.plan_id), p.price)?;
            Some((price, p))
        })
        .collect();
    plans.sort_by_key(|(price, _)| *price);
    plans
        .into_iter()
        .map(|(price, p)| PlanChoice {
            plan_id: p.plan_id.clone(),
            name: p.name.clone(),
            validity: validity(p.duration),
            price: naira(price),
        })
        .collect()
}

fn validity(days: u32) -> String {
    match days {
        1 => "1 day".to_owned(),
        d => format!("{d} days"),
    }
}

/// Every exam body on sale, labelled with one pin's price to the customer
/// (`WAEC · ₦3,900.00 a pin`): the price is seen before paying.
fn exams(catalogue: &Catalogue, prices: &AccountPrices) -> Vec<Choice> {
    catalogue
        .providers
        .iter()
        .filter(|p| p.active && p.services.contains(&Sold::Education))
        .filter_map(|p| {
            let price = prices.unit(Sold::Education, &p.slug, None, p.price?)?;
            Some(Choice {
                value: p.slug.clone(),
                label: format!("{} · {} a pin", p.name, naira(price)),
            })
        })
        .collect()
}

/// Every e-pin denomination on sale, at the customer's price each.
fn denominations(catalogue: &Catalogue, prices: &AccountPrices) -> Vec<Choice> {
    catalogue
        .epin_denominations
        .iter()
        .filter_map(|d| {
            let key = billpay_domain::pricing::denomination_key(d.denomination);
            let price = prices.unit(Sold::Epin, &d.provider, Some(&key), d.denomination)?;
            let name = catalogue
                .provider(&d.provider)
                .map_or(d.provider.as_str(), |p| p.name.as_str());
            Some(Choice {
                value: format!("{}|{}", d.provider, d.denomination),
                label: format!(
                    "{name} {} (you pay {} each)",
                    naira(d.denomination),
                    naira(price)
                ),
            })
        })
        .collect()
}
