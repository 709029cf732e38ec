//! The shop (issue 31): a signed-in customer buys every product from a
//! phone's browser. Each purchase is the purchase operation the API's
//! handlers call too ([`billpay_operations::purchases::Purchasing`]: the
//! key's admission — its status, then its rate budget — and the same checks,
//! tier price, idempotency, worker, webhook, audit), placed under the
//! account's shop key (created with its first transaction PIN,
//! `areas/pins.rs`), never an HTTP call to the API and never a copy of it.
//!
//! Idempotent by construction: every form carries a reference minted when
//! the page was rendered (`web-` + 64 random bits), so a double tap, a
//! reload or a resubmitted form is the same purchase; the store refuses the
//! second with the first's code, and both land on its receipt (POST → 303 →
//! GET).

pub mod forms;
pub mod pin;
pub mod pin_reset;
pub mod receipt;
pub mod refill;

use crate::DashboardState;
use crate::format::naira;
use crate::page::{Chrome, PageError, PageResult, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect};
use billpay_domain::keys::random_hex;
use billpay_domain::{Kobo, Reference};
use billpay_operations::purchases::{PurchaseError, Purchasing, seconds};
use billpay_store::{Account, Beneficiary, NewBeneficiary, StoreError, Transaction, TxLookup};
use billpay_webkit::CsrfForm;
use billpay_webkit::filters::url_encode;
use forms::{BuyForm, Product};
use serde::Deserialize;

/// Why a purchase was not placed: said on the form again, or a page error.
pub enum Refused {
    Say(String),
    /// The wallet is short: said, with a way to fund it and come back.
    Short(String),
    Page(PageError),
}

impl From<PageError> for Refused {
    fn from(e: PageError) -> Self {
        Refused::Page(e)
    }
}

impl From<StoreError> for Refused {
    fn from(e: StoreError) -> Self {
        Refused::Page(e.into())
    }
}

/// The email-verification gate of issue 31: a purchase, a funding account
/// and a card payment wait for a verified email (an account the operator
/// opened counts as verified: `Account::verified`).
pub fn may_buy(account: &Account) -> Result<(), String> {
    if account.verified() {
        Ok(())
    } else {
        Err(UNVERIFIED.to_owned())
    }
}

/// What an account whose email is not yet confirmed is told.
pub const UNVERIFIED: &str =
    "Please confirm your email address first: enter the code we emailed you on your Account page.";

/// The purchase operation; a server built without it (tests of other
/// pages) has no shop.
pub(crate) fn purchasing(state: &DashboardState) -> Result<&Purchasing, PageError> {
    state.shop.as_ref().ok_or_else(|| {
        PageError::status(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "The shop is not available on this server.",
        )
    })
}

/// A new form's reference.
pub(crate) fn mint_reference() -> String {
    format!("web-{}", random_hex(8))
}

#[derive(Template)]
#[template(path = "buyer/shop_home.html")]
struct HomePage {
    chrome: Chrome,
    balance: String,
    has_pin: bool,
    products: Vec<(&'static str, &'static str, String)>,
}

pub async fn home(State(state): State<DashboardState>, signed_in: SignedIn) -> PageResult {
    let account = signed_in.user.id;
    let has_pin = state.store.transaction_pin(account).await?.is_some();
    let catalogue = purchasing(&state)?.catalogue.get().await?;
    Ok(render(&HomePage {
        chrome: Chrome::new(&signed_in, "buy"),
        balance: naira(state.store.balance(account).await?),
        has_pin,
        products: Product::ALL
            .iter()
            .map(|p| (p.slug(), p.title(), p.blurb_on_sale(&catalogue)))
            .collect(),
    }))
}

/// A product's form: `GET /dashboard/buy/{product}` (its query fills it in:
/// "buy again", the data plans of a number, a saved recipient).
pub async fn form(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path(product): Path<String>,
    Query(form): Query<BuyForm>,
) -> PageResult {
    let product = Product::from_slug(&product).ok_or_else(crate::page::not_found)?;
    if form.check.is_some() && product.verified_first() {
        // back from funding the wallet: the number is named again at once
        return verified(&state, &signed_in, product, form).await;
    }
    forms::page(&state, &signed_in, product, form, None, None).await
}

/// Electricity, betting, cable: the supplier's name (and address, or the
/// smartcard's bouquet now) for the number, then the form to pay with it.
pub async fn verify(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path(product): Path<String>,
    CsrfForm(form): CsrfForm<BuyForm>,
) -> PageResult {
    let product = Product::from_slug(&product).ok_or_else(crate::page::not_found)?;
    verified(&state, &signed_in, product, form).await
}

/// The form with what the supplier says of its number (or why not).
async fn verified(
    state: &DashboardState,
    signed_in: &SignedIn,
    product: Product,
    mut form: BuyForm,
) -> PageResult {
    let purchasing = purchasing(state)?;
    match forms::verify(purchasing, product, &form).await {
        Ok(found) => {
            // cable: the subscriber's bouquet is chosen, unless one was
            // ("buy again" brings the one bought last)
            let current = found.current.as_ref().and_then(|c| c.plan_id.clone());
            if let (Some(plan), true) = (current, form.plan_id.trim().is_empty()) {
                form.plan_id = plan;
            }
            forms::page(state, signed_in, product, form, None, Some(found)).await
        }
        Err(e) => forms::page(state, signed_in, product, form, Some(e.into()), None).await,
    }
}

/// `POST /dashboard/buy/{product}`: the PIN, then the purchase operation,
/// then 303 to its receipt. A reference already used lands on the receipt
/// of the purchase that has it (the same form sent twice buys once).
pub async fn buy(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path(product): Path<String>,
    CsrfForm(form): CsrfForm<BuyForm>,
) -> PageResult {
    let product = Product::from_slug(&product).ok_or_else(crate::page::not_found)?;
    let said = match place(&state, &signed_in, product, &form).await {
        Ok(code) => return Ok(to_receipt(&code)),
        Err(Refused::Page(e)) => return Err(e),
        Err(Refused::Say(message)) => forms::Said::from(message),
        Err(Refused::Short(message)) => forms::Said {
            fund: Some(fund_and_back(product, &form)),
            message,
        },
    };
    let page = forms::page(&state, &signed_in, product, form, Some(said), None);
    let mut response = page.await?;
    *response.status_mut() = axum::http::StatusCode::UNPROCESSABLE_ENTITY;
    Ok(response)
}

/// The wallet page, then back to this form filled in as it was (checked
/// again where the supplier names the number first).
fn fund_and_back(product: Product, form: &BuyForm) -> String {
    format!(
        "/dashboard/wallet?back={}#fund-your-wallet",
        url_encode(&forms::back_link(product, form))
    )
}

fn to_receipt(code: &str) -> axum::response::Response {
    Redirect::to(&format!("/dashboard/receipts/{code}")).into_response()
}

/// Checks the form, the gate and the PIN, then buys; the new (or the
/// earlier) purchase's code.
async fn place(
    state: &DashboardState,
    signed_in: &SignedIn,
    product: Product,
    form: &BuyForm,
) -> Result<String, Refused> {
    let purchasing = purchasing(state)?;
    may_buy(&signed_in.user).map_err(Refused::Say)?;
    let reference =
        Reference::parse(&form.reference).map_err(|e| Refused::Say(format!("Reference {e}")))?;
    let request = forms::request(product, reference, form).map_err(Refused::Say)?;
    let key_id = pin::check(state, signed_in.user.id, &form.pin).await?;
    // the shop's key admitted as the API's middleware admits an API key: its
    // status and the account's, then a token from its rate budget
    let buyer = purchasing
        .admit_key(signed_in.user.id, key_id, signed_in.user.status)
        .await
        .map_err(refusal)?;
    let tx = match purchasing.buy(&buyer, request).await {
        Ok(tx) => tx,
        Err(PurchaseError::DuplicateReference(Some(code))) => return Ok(code),
        Err(e) => return Err(refusal(e)),
    };
    save_recipient(state, signed_in, &tx, &form.save_as).await?;
    Ok(tx.code)
}

/// The purchase operation's refusal as the shop says it. The shop's key must
/// be in force, as an API key must: an operator who suspends or revokes it
/// stops the account's browser purchases (the customer's keys page offers
/// neither), said in the shop's words; a spent rate budget says when to try
/// again; a store failure is a page error (logged); anything else is the
/// operation's sentence.
pub(crate) fn refusal(e: PurchaseError) -> Refused {
    match e {
        PurchaseError::KeySuspended => Refused::Say(SHOP_KEY_SUSPENDED.to_owned()),
        PurchaseError::KeyRevoked => Refused::Say(SHOP_KEY_REVOKED.to_owned()),
        PurchaseError::RateLimited { retry_after } => Refused::Say(too_many(retry_after)),
        PurchaseError::Store(e) => Refused::Page(e.into()),
        PurchaseError::InsufficientBalance { balance, needed } => {
            Refused::Short(short_balance(balance, needed))
        }
        e => Refused::Say(said(&e)),
    }
}

/// A short wallet, in Naira as a person writes it, with what is missing.
fn short_balance(balance: Option<Kobo>, needed: Option<Kobo>) -> String {
    match (balance, needed) {
        (Some(balance), Some(needed)) => {
            let missing = needed.checked_sub(balance).unwrap_or(needed);
            format!(
                "Your wallet has {} and this purchase needs {}: fund it with at least {}, then come back to pay. What you entered is kept.",
                naira(balance),
                naira(needed),
                naira(missing)
            )
        }
        (None, Some(needed)) => format!(
            "Your wallet is short: this purchase needs {}. Fund it, then come back to pay. What you entered is kept.",
            naira(needed)
        ),
        _ => "Your wallet is short for this purchase. Fund it, then come back to pay. What you entered is kept.".to_owned(),
    }
}

/// A spent rate budget (the shop key's, the same limiter as the API's).
fn too_many(retry_after: u64) -> String {
    format!(
        "Too many purchases in a short time: please wait {} and try again.",
        seconds(retry_after)
    )
}

pub const SHOP_KEY_SUSPENDED: &str =
    "Buying in the browser is paused for this account. Please contact support.";
pub const SHOP_KEY_REVOKED: &str = "Buying in the browser was switched off for this account: set your transaction PIN again (with your password) to switch it back on.";

/// The purchase operation's refusal as a sentence for a person.
fn said(e: &PurchaseError) -> String {
    let text = e.to_string();
    let mut chars = text.chars();
    let sentence = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "The purchase was refused".to_owned(),
    };
    if sentence.ends_with('.') {
        sentence
    } else {
        format!("{sentence}.")
    }
}

/// Saves the purchase's recipient under `nickname` when one was given, with
/// every field to buy for it again as it was (`refill`).
async fn save_recipient(
    state: &DashboardState,
    signed_in: &SignedIn,
    tx: &Transaction,
    nickname: &str,
) -> Result<(), StoreError> {
    let nickname = nickname.trim();
    if nickname.is_empty() {
        return Ok(());
    }
    let nickname: String = nickname.chars().take(40).collect();
    state
        .store
        .save_beneficiary(NewBeneficiary {
            account_id: signed_in.user.id,
            product: tx.product,
            nickname,
            refill: refill::of_purchase(tx),
        })
        .await
        .map(|_: Beneficiary| ())
}

#[derive(Deserialize)]
pub struct SaveForm {
    /// The purchase whose recipient (and fields) are saved.
    code: String,
    nickname: String,
}

/// Saves a receipt's recipient, then back to the receipt.
pub async fn save_beneficiary(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<SaveForm>,
) -> PageResult {
    if form.nickname.trim().is_empty() {
        return Err(crate::page::bad_request("Give the recipient a nickname."));
    }
    let lookup = TxLookup::Code(form.code.clone());
    let tx = state
        .store
        .transaction(Some(signed_in.user.id), lookup)
        .await?
        .ok_or_else(crate::page::not_found)?;
    save_recipient(&state, &signed_in, &tx, &form.nickname).await?;
    let back = format!("/dashboard/receipts/{}", url_encode(&tx.code));
    Ok(Redirect::to(&back).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_wallet_is_said_in_naira_with_what_is_missing_and_a_way_back() {
        let said = short_balance(Some(Kobo::from_naira(4_200)), Some(Kobo::from_naira(6_000)));
        assert_eq!(
            said,
            "Your wallet has ₦4,200.00 and this purchase needs ₦6,000.00: fund it with at least ₦1,800.00, then come back to pay. What you entered is kept."
        );
        let form = BuyForm {
            provider_id: "dstv".into(),
            smartcard_number: "7012345678".into(),
            plan_id: "dstv-padi".into(),
            pin: "2468".into(),
            reference: "web-0011223344556677".into(),
            ..BuyForm::default()
        };
        // the PIN and the reference never travel; the smartcard is named again
        assert_eq!(
            fund_and_back(Product::Cable, &form),
            "/dashboard/wallet?back=%2Fdashboard%2Fbuy%2Fcable%3Fprovider_id%3Ddstv%26plan_id%3Ddstv-padi%26smartcard_number%3D7012345678%26check%3D1#fund-your-wallet"
        );
    }
}
