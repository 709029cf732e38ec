//! The brand (an owner edits, any operator reads): the business's name, its
//! colour, the support contact, the WhatsApp number and the "powered by
//! billpay" credit, laid over the settings' `[brand]` (the logo is the
//! settings' file). Saved through `operations::brand::set`, logged
//! (`brand.set`); customer pages and emails wear it within a second.

use super::{Chrome, Done, Notice, PageResult, actor, done, refused, render};
use crate::ConsoleState;
use crate::form::Refill;
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::IntoResponse;
use billpay_domain::brand::{Brand, BrandEdits};
use billpay_operations::{Permission, brand};
use billpay_webkit::CsrfForm;
use serde::Deserialize;

const FORM: &str = "brand";

#[derive(Template)]
#[template(path = "brand.html")]
struct BrandPage {
    chrome: Chrome,
    /// What customers see now.
    brand: Brand,
    /// The settings' brand (what an edit is laid over).
    settings: Brand,
    /// The WhatsApp number as typed last (the link's digits otherwise).
    whatsapp: String,
    may_edit: bool,
    refill: Refill,
}

async fn brand_page(
    state: &ConsoleState,
    signed_in: &SignedIn,
    done: &Done,
    refill: Refill,
) -> PageResult {
    let actor = actor(signed_in);
    let edits = brand::edits(state.store.as_ref(), actor.clone())
        .await
        .map_err(refused)?;
    let settings = state.brand.as_ref().clone();
    let brand = settings.with(&edits);
    let whatsapp = edits
        .whatsapp
        .clone()
        .or_else(|| brand.whatsapp.clone())
        .unwrap_or_default();
    Ok(render(&BrandPage {
        chrome: Chrome::new(signed_in, "brand", done),
        may_edit: actor.may(Permission::ChangeBrand),
        brand,
        settings,
        whatsapp,
        refill,
    }))
}

pub async fn page(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    Query(done): Query<Done>,
) -> PageResult {
    brand_page(&state, &signed_in, &done, Refill::none()).await
}

#[derive(Deserialize)]
pub struct BrandFields {
    #[serde(default)]
    name: String,
    #[serde(default)]
    colour: String,
    #[serde(default)]
    support: String,
    #[serde(default)]
    whatsapp: String,
    /// The checkbox: present when ticked.
    #[serde(default)]
    credit: Option<String>,
}

/// Saves every field as typed (an empty contact or WhatsApp number removes it).
pub async fn save(
    State(state): State<ConsoleState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<BrandFields>,
) -> PageResult {
    let edits = BrandEdits {
        name: Some(form.name.clone()),
        colour: Some(form.colour.clone()),
        support: Some(form.support.clone()),
        whatsapp: Some(form.whatsapp.clone()),
        credit: Some(form.credit.is_some()),
    };
    if let Err(e) = brand::set(state.store.as_ref(), actor(&signed_in), edits).await {
        let values = vec![
            ("name", form.name),
            ("colour", form.colour),
            ("support", form.support),
            ("whatsapp", form.whatsapp),
        ];
        let (status, refill) = Refill::refused(FORM, e, values)?;
        let page = brand_page(&state, &signed_in, &Done::default(), refill).await?;
        return Ok((status, page).into_response());
    }
    Ok(done("/admin/brand", Notice::BrandSaved))
}
