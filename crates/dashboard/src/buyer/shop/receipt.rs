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
use billpay_domain::{Pin, TxStatus};
use billpay_store::{Transaction, TxLookup};
use billpay_webkit::filters::url_encode;
use billpay_webkit::format::lagos_time;
use billpay_worker::HeldReview;

pub struct Card {
    pub serial: String,
    pub pin: String,
    pub expires_on: String,
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
    buy_again: Option<String>,
    share: String,
    /// WhatsApp's click-to-share link with [`share_text`].
    whatsapp: String,
    product: &'static str,
    saved_as: Option<String>,
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
    let cards: Vec<Card> = delivery.pins.iter().map(card).collect();
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
    Ok(render(&ReceiptPage {
        chrome: Chrome::new(&signed_in, "receipt"),
        whatsapp: whatsapp_link(&share),
        share,
        code: tx.code.clone(),
        status: tx.status.as_str(),
        held: tx.held_for.is_some() && tx.status == TxStatus::Processing,
        what: tx.label.clone(),
        provider,
        recipient: tx.recipient.clone(),
        charged: naira(tx.amount),
        face_value: naira(tx.face_value),
        when: lagos_time(&tx.created_at),
        message: outcome(&tx, state.held_review),
        token,
        units: delivery.units.map(|u| format!("{u} kWh")),
        cards,
        buy_again: buy_again(&tx),
        product: tx.product.service(),
        saved_as,
    }))
}

fn card(pin: &Pin) -> Card {
    match pin {
        Pin::Card(c) => Card {
            serial: c.serial.clone(),
            pin: c.pin.clone(),
            expires_on: c.expires_on.clone(),
        },
        Pin::Code(code) => Card {
            serial: String::new(),
            pin: code.clone(),
            expires_on: String::new(),
        },
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

/// The same product's form, filled in with this recipient.
fn buy_again(tx: &Transaction) -> Option<String> {
    let product = Product::of(tx.product)?;
    let field = match product {
        Product::Airtime | Product::Data => "phone",
        Product::Electricity => "meter_number",
        Product::Cable => "smartcard_number",
        Product::Betting => "customer_id",
        Product::Epin | Product::Exam => return Some(format!("/dashboard/buy/{}", product.slug())),
    };
    // cable: the same bouquet chosen again (a renewal)
    let plan = match (product, &tx.plan_id) {
        (Product::Cable, Some(plan)) => format!("&plan_id={}", url_encode(plan)),
        _ => String::new(),
    };
    Some(format!(
        "/dashboard/buy/{}?{field}={}&provider_id={}{plan}",
        product.slug(),
        url_encode(&tx.recipient),
        url_encode(&tx.provider)
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
        format!("{} for {}", tx.label, tx.recipient),
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
    use super::whatsapp_link;

    #[test]
    fn the_whatsapp_link_carries_the_whole_text_encoded() {
        let link = whatsapp_link("MTN 1GB for 08031234567\nAmount: ₦1,000.00 & more");
        assert_eq!(
            link,
            "https://wa.me/?text=MTN%201GB%20for%2008031234567%0AAmount%3A%20%E2%82%A61%2C000.00%20%26%20more"
        );
    }
}
