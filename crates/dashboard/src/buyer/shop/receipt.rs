//! A purchase's receipt: its status (the page refreshes itself while the
//! purchase is processing), what was charged and delivered, "buy again", a
//! plain-text copy to share (copied, or sent through WhatsApp's
//! `https://wa.me/?text=` link), and saving the recipient. Reached from the
//! purchase, the home page and the history. Printing makes a clean one-page
//! receipt (print CSS: no menu, no buttons); e-pins and serials are cards in
//! a grid that print one page of cards instead.

use super::forms::Product;
use crate::DashboardState;
use crate::format::naira;
use crate::page::{Chrome, PageResult, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, State};
use billpay_domain::{MeterType, Pin, TxStatus};
use billpay_store::{Transaction, TxLookup};
use billpay_webkit::filters::url_encode;
use billpay_webkit::format::lagos_time;
use billpay_worker::HeldReview;

pub struct Card {
    pub serial: String,
    pub pin: String,
    /// The PIN in groups of 4 digits, each kept whole on a line.
    pub groups: Vec<String>,
    pub expires_on: String,
    /// What to dial to load it (`*311*PIN#`), none when the network is not known.
    pub dial: Option<String>,
}

#[derive(Template)]
#[template(path = "buyer/shop_receipt.html")]
struct ReceiptPage {
    chrome: Chrome,
    code: String,
    status: &'static str,
    /// Held for review by a limit: waiting for a person, not the supplier.
    held: bool,
    what: String,
    provider: String,
    recipient: String,
    charged: String,
    face_value: String,
    when: String,
    message: String,
    token: Option<String>,
    units: Option<String>,
    cards: Vec<Card>,
    /// E-pins: how to load one on the network's line.
    load: Option<String>,
    /// Details a person checks: the subscriber's or meter's name and
    /// address (as verified), a data plan's type and validity.
    facts: Vec<(&'static str, String)>,
    buy_again: Option<String>,
    share: String,
    /// WhatsApp's click-to-share link with [`share_text`].
    whatsapp: String,
    saved_as: Option<String>,
    repeat: Repeat,
}

/// "Repeat this": the schedule's reference (minted per page, so the form
/// sent twice makes one) and the first run offered: this time tomorrow.
struct Repeat {
    reference: String,
    first: String,
}

impl Repeat {
    fn offered() -> Repeat {
        let tomorrow = billpay_store::clock::now_ms() + 24 * 3600 * 1000;
        Repeat {
            reference: super::mint_reference(),
            first: billpay_webkit::format::lagos_input(&billpay_store::clock::rfc3339(tomorrow)),
        }
    }
}

pub async fn page(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path(code): Path<String>,
) -> PageResult {
    let account = signed_in.user.id;
    let tx = state
        .store
        .transaction(Some(account), TxLookup::Code(code))
        .await?
        .ok_or_else(crate::page::not_found)?;
    let delivery = tx.delivery()?;
    let code = loading_code(&tx);
    let cards: Vec<Card> = delivery.pins.iter().map(|p| card(p, code)).collect();
    let token = match cards.is_empty() {
        true => delivery.pin.clone(),
        false => None,
    };
    // The provider's name as the catalogue has it (its id when it has gone).
    let catalogue = super::purchasing(&state)?.catalogue.get().await?;
    let provider = catalogue
        .provider(&tx.provider)
        .map_or_else(|| tx.provider.clone(), |p| p.name.clone());
    let saved = state.store.beneficiaries(account, tx.product).await?;
    let saved_as = saved
        .into_iter()
        .find(|b| b.recipient == tx.recipient)
        .map(|b| b.nickname);
    let share = share_text(&tx, token.as_deref(), &cards);
    let facts = facts(&catalogue, &tx);
    Ok(render(&ReceiptPage {
        chrome: Chrome::new(&signed_in, "receipt"),
        whatsapp: whatsapp_link(&share),
        share,
        code: tx.code.clone(),
        status: tx.status.as_str(),
        held: tx.held_for.is_some() && tx.status == TxStatus::Processing,
        what: tx.label.clone(),
        provider,
        recipient: recipient(&tx),
        charged: naira(tx.amount),
        face_value: naira(tx.face_value),
        when: lagos_time(&tx.created_at),
        message: outcome(&tx, state.held_review),
        token,
        units: delivery.units.map(|u| format!("{u} kWh")),
        load: code.filter(|_| !cards.is_empty()).map(load_words),
        facts,
        cards,
        buy_again: buy_again(&tx),
        saved_as,
        repeat: Repeat::offered(),
    }))
}

fn card(pin: &Pin, code: Option<LoadingCode>) -> Card {
    let (serial, pin, expires_on) = match pin {
        Pin::Card(c) => (c.serial.clone(), c.pin.clone(), c.expires_on.clone()),
        Pin::Code(code) => (String::new(), code.clone(), String::new()),
    };
    Card {
        groups: groups_of_four(&pin),
        dial: code.map(|c| format!("*{}*{pin}#", c.harmonised)),
        serial,
        pin,
        expires_on,
    }
}

/// `1234567890123456` → `1234 5678 9012 3456` as separate groups (the page
/// keeps each whole and copies the PIN without spaces).
fn groups_of_four(pin: &str) -> Vec<String> {
    let chars: Vec<char> = pin.chars().collect();
    chars.chunks(4).map(|c| c.iter().collect()).collect()
}

/// How a network's recharge PIN is loaded: the NCC's harmonised short code
/// for credit recharge, 311, on every network (NCC's harmonised short
/// codes, 2021; MTN's notice moving from *555* to *311*, reported at
/// https://pluboard.com/?p=1823), and the network's own older code, still
/// answered: MTN *555*, Airtel *126*, Glo *123* (siliconafrica.org/?p=40626),
/// 9mobile *222* (answersafrica.com, "How To Load 9mobile Card").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadingCode {
    pub network: &'static str,
    pub harmonised: &'static str,
    pub own: &'static str,
}

/// The e-pin's network's loading code (by the provider's slug).
fn loading_code(tx: &Transaction) -> Option<LoadingCode> {
    if tx.product != billpay_domain::Product::Epin {
        return None;
    }
    let (network, own) = match tx.provider.as_str() {
        "mtn" => ("MTN", "555"),
        "airtel" => ("Airtel", "126"),
        "glo" => ("Glo", "123"),
        "9mobile" => ("9mobile", "222"),
        _ => return None,
    };
    Some(LoadingCode {
        network,
        harmonised: "311",
        own,
    })
}

/// The loading instructions, in words.
fn load_words(code: LoadingCode) -> String {
    format!(
        "To load a card, dial *{}*PIN# from the {} line to credit, with the card's PIN in place of PIN (or {}'s own *{}*PIN#).",
        code.harmonised, code.network, code.network, code.own
    )
}

/// What a person checks on a receipt besides the number: the name (and
/// address) the supplier verified before paying, and a data plan's type
/// and validity.
fn facts(
    catalogue: &billpay_domain::catalogue::Catalogue,
    tx: &Transaction,
) -> Vec<(&'static str, String)> {
    use billpay_domain::Product as Sold;
    let d = &tx.details;
    let mut facts = Vec::new();
    let named = |name: &Option<String>| {
        name.clone()
            .filter(|n| !n.trim().is_empty() && n != "Unknown Customer")
    };
    match tx.product {
        Sold::Cable => {
            if let Some(name) = named(&d.recipient_name) {
                facts.push(("Subscriber", name));
            }
        }
        Sold::Electricity => {
            if let Some(name) = named(&d.recipient_name) {
                facts.push(("Name on the meter", name));
            }
            if let Some(address) = named(&d.recipient_address) {
                facts.push(("Address", address));
            }
            if let Some(meter) = d.meter_type.and_then(|t| MeterType::parse(t).ok()) {
                facts.push(("Meter type", meter.to_string()));
            }
        }
        Sold::Data => {
            let plan = catalogue
                .data_plans
                .iter()
                .find(|p| Some(&p.plan_id) == tx.plan_id.as_ref() && p.provider == tx.provider);
            if let Some(plan) = plan {
                facts.push(("Plan type", catalogue.data_plan_type(plan).to_owned()));
            }
            if let Some(days) = d.duration.or(plan.map(|p| p.duration)) {
                let days = match days {
                    1 => "1 day".to_owned(),
                    n => format!("{n} days"),
                };
                facts.push(("Validity", days));
            }
        }
        _ => {}
    }
    facts
}

/// Whom it was bought for; exam pins bought without a phone or a JAMB
/// profile are the buyer's own, said so rather than left blank.
fn recipient(tx: &Transaction) -> String {
    if !tx.recipient.trim().is_empty() {
        return tx.recipient.clone();
    }
    if let Some(profile) = &tx.details.profile_id {
        return format!("JAMB profile {profile}");
    }
    match tx.details.quantity {
        Some(n) if n > 1 => format!("You: the {n} pins are below"),
        _ => "You: the pin is below".to_owned(),
    }
}

/// What a person reads of the outcome; a held purchase says what happens
/// next and until when (`held_review`: how long it waits for a person).
fn outcome(tx: &Transaction, held_review: std::time::Duration) -> String {
    let until = HeldReview::deadline(&tx.created_at, held_review);
    match tx.status {
        TxStatus::Processing if tx.held_for.is_some() => format!(
            "Held for review: a person checks some purchases before they are delivered, and \
             this is one of them. Your {amount} is set aside. If it is approved, it is \
             delivered at once and we email you; if it is declined, or not reviewed by {until}, \
             the {amount} goes back to your wallet. You do not need to do anything.",
            amount = naira(tx.amount),
            until = until.as_deref().map(lagos_time).unwrap_or_default(),
        ),
        TxStatus::Processing => "Processing: this page updates itself.".to_owned(),
        TxStatus::Successful => "Successful.".to_owned(),
        TxStatus::Failed => format!("Failed: {} was refunded to your wallet.", naira(tx.amount)),
    }
}

/// The same product's form, filled in with every field of this purchase
/// (provider, meter type, bouquet or plan, phone, amount).
fn buy_again(tx: &Transaction) -> Option<String> {
    let product = Product::of(tx.product)?;
    Some(super::refill::link(
        product,
        &super::refill::of_purchase(tx),
    ))
}

/// WhatsApp's share link: opens the app (or WhatsApp Web) with `text`
/// ready to send to a chosen contact.
pub fn whatsapp_link(text: &str) -> String {
    format!("https://wa.me/?text={}", url_encode(text))
}

/// A plain-text receipt to paste into WhatsApp or an SMS.
fn share_text(tx: &Transaction, token: Option<&str>, cards: &[Card]) -> String {
    let mut lines = vec![
        // what was bought, for whom (`2 × WAEC PIN` when nobody is named)
        billpay_webkit::rows::describe(tx),
        format!("Status: {}", tx.status.as_str()),
        format!("Amount: {}", naira(tx.face_value)),
        format!("Date: {}", lagos_time(&tx.created_at)),
        format!("Ref: {}", tx.code),
    ];
    if let Some(token) = token {
        lines.push(format!("Token: {token}"));
    }
    for c in cards {
        lines.push(match c.serial.is_empty() {
            true => format!("PIN: {}", c.pin),
            false => format!("PIN: {} (serial {})", c.pin, c.serial),
        });
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_is_shown_in_groups_of_four() {
        assert_eq!(
            groups_of_four("1234567890123456"),
            ["1234", "5678", "9012", "3456"]
        );
        assert_eq!(groups_of_four("123456"), ["1234", "56"]);
    }

    #[test]
    fn each_network_has_its_loading_code() {
        let code = |network: &'static str, own: &'static str| LoadingCode {
            network,
            harmonised: "311",
            own,
        };
        assert_eq!(
            load_words(code("MTN", "555")),
            "To load a card, dial *311*PIN# from the MTN line to credit, with the card's PIN in place of PIN (or MTN's own *555*PIN#)."
        );
        let c = card(
            &Pin::Code("1234567890123456".into()),
            Some(code("Glo", "123")),
        );
        assert_eq!(c.dial.as_deref(), Some("*311*1234567890123456#"));
    }

    #[test]
    fn the_whatsapp_link_carries_the_whole_text_encoded() {
        let link = whatsapp_link("MTN 1GB for 08031234567\nAmount: ₦1,000.00 & more");
        assert_eq!(
            link,
            "https://wa.me/?text=MTN%201GB%20for%2008031234567%0AAmount%3A%20%E2%82%A61%2C000.00%20%26%20more"
        );
    }
}
