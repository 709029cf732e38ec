//! Beneficiaries: the recipients the buyer saved (from a purchase form or a
//! receipt), by product, each a link to its product's form filled in with
//! it ("buy again"), and deleted here.

use super::shop::forms::Product;
use crate::DashboardState;
use crate::page::{Chrome, PageResult, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect};
use billpay_store::Beneficiary;
use billpay_webkit::CsrfForm;
use billpay_webkit::NoFields;

pub struct Saved {
    pub id: String,
    pub nickname: String,
    pub recipient: String,
    /// The product's form, filled in with this recipient.
    pub buy: String,
}

pub struct Group {
    pub title: &'static str,
    pub slug: &'static str,
    pub saved: Vec<Saved>,
}

#[derive(Template)]
#[template(path = "buyer/beneficiaries.html")]
struct BeneficiariesPage {
    chrome: Chrome,
    groups: Vec<Group>,
}

/// The form of `product` filled in with a saved recipient and every field
/// kept with it (its provider, meter type, plan…: `shop::refill`).
pub fn buy_link(product: Product, b: &Beneficiary) -> String {
    super::shop::refill::link(product, &b.refill)
}

pub async fn page(State(state): State<DashboardState>, signed_in: SignedIn) -> PageResult {
    let account = signed_in.user.id;
    let mut groups = Vec::new();
    for product in Product::ALL {
        if product.recipient_field().is_empty() {
            continue;
        }
        let saved = state.store.beneficiaries(account, product.sold()).await?;
        if saved.is_empty() {
            continue;
        }
        groups.push(Group {
            title: product.title(),
            slug: product.slug(),
            saved: saved
                .iter()
                .map(|b| Saved {
                    id: b.id.clone(),
                    nickname: b.nickname.clone(),
                    recipient: b.recipient.clone(),
                    buy: buy_link(product, b),
                })
                .collect(),
        });
    }
    Ok(render(&BeneficiariesPage {
        chrome: Chrome::new(&signed_in, "beneficiaries"),
        groups,
    }))
}

/// Deletes one of the account's saved recipients (another account's id
/// deletes nothing), then back to the list.
pub async fn delete(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Path(id): Path<String>,
    _: CsrfForm<NoFields>,
) -> PageResult {
    state
        .store
        .delete_beneficiary(signed_in.user.id, &id)
        .await?;
    Ok(Redirect::to("/dashboard/beneficiaries").into_response())
}
