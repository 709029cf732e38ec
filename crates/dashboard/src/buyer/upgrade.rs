//! "Upgrade" (issue 49): the price tiers the owner offers for a one-time
//! fee, what each would have saved the buyer over their last 30 days'
//! purchases, and a form per offer that buys it from the wallet with the
//! transaction PIN (the shop's own check, `shop::pin::check`). The purchase
//! is `billpay_operations::upgrades::buy`, the API's too: once per
//! reference (the form's, minted when the page is drawn, so a double tap
//! buys once), the fee's debit and the tier change in one transaction.

use super::shop::{Refused, may_buy, mint_reference, pin};
use crate::DashboardState;
use crate::page::{Chrome, PageError, PageResult, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use billpay_domain::Reference;
use billpay_domain::pricing::{DEFAULT_TIER, PriceBook};
use billpay_operations::upgrades::{self, Offered, UpgradeError};
use billpay_webkit::CsrfForm;
use billpay_webkit::filters::url_encode;
use billpay_webkit::format::{lagos_time, naira};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Template)]
#[template(path = "buyer/upgrade.html")]
struct UpgradePage {
    chrome: Chrome,
    tier: String,
    balance: String,
    offers: Vec<OfferView>,
    /// Minted for this drawing of the page: a form sent twice buys once.
    reference: String,
    error: Option<String>,
    /// The wallet is short: link to fund it.
    short: bool,
    /// Just bought (the redirect after a purchase): the tier and when.
    bought: Option<String>,
}

struct OfferView {
    tier: String,
    fee: String,
    conditions: Vec<String>,
    current: bool,
    unmet: Option<String>,
    savings: String,
    /// Whether the savings are more than nothing.
    saves: bool,
    purchases: usize,
}

impl From<Offered> for OfferView {
    fn from(o: Offered) -> Self {
        let mut conditions = Vec::new();
        if let Some(level) = o.offer.min_kyc_level {
            conditions.push(format!("Identity level {level} or above"));
        }
        if let Some(spend) = o.offer.min_monthly_spend {
            conditions.push(format!("{} spent over the last 30 days", naira(spend)));
        }
        OfferView {
            tier: o.offer.tier,
            fee: naira(o.offer.fee),
            conditions,
            current: o.current,
            unmet: o.unmet,
            savings: naira(o.savings),
            saves: o.savings.0 > 0,
            purchases: o.purchases,
        }
    }
}

#[derive(Deserialize, Default)]
pub struct Shown {
    /// The tier just bought.
    bought: Option<String>,
}

/// The offers and what they would save.
pub async fn page(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(shown): Query<Shown>,
) -> PageResult {
    let bought = match shown.bought {
        Some(tier) => bought_notice(&state, &signed_in, &tier).await?,
        None => None,
    };
    upgrade_page(&state, &signed_in, StatusCode::OK, None, bought).await
}

/// "You are on reseller prices since …", when the account bought that tier.
async fn bought_notice(
    state: &DashboardState,
    signed_in: &SignedIn,
    tier: &str,
) -> Result<Option<String>, PageError> {
    let upgrades = state.store.upgrades_of(signed_in.user.id).await?;
    Ok(upgrades.into_iter().find(|u| u.tier == tier).map(|u| {
        format!(
            "You upgraded to {} on {} for {}. Your purchases are priced at {} from now on.",
            u.tier,
            lagos_time(&u.created_at),
            naira(u.fee),
            u.tier
        )
    }))
}

async fn upgrade_page(
    state: &DashboardState,
    signed_in: &SignedIn,
    status: StatusCode,
    error: Option<Refused>,
    bought: Option<String>,
) -> PageResult {
    let account = signed_in.user.id;
    let book = price_book(state).await?;
    let offers = upgrades::offers_for(state.store.as_ref(), &book, account)
        .await
        .map_err(|e| PageError::internal(&e))?;
    let balance = state.store.balance(account).await?;
    let (error, short) = match error {
        None => (None, false),
        Some(Refused::Say(message)) => (Some(message), false),
        Some(Refused::Short(message)) => (Some(message), true),
        Some(Refused::Page(e)) => return Err(e),
    };
    let page = render(&UpgradePage {
        chrome: Chrome::new(signed_in, "upgrade"),
        tier: book
            .accounts
            .get(&account)
            .cloned()
            .unwrap_or_else(|| DEFAULT_TIER.to_owned()),
        balance: naira(balance),
        offers: offers.into_iter().map(OfferView::from).collect(),
        reference: mint_reference(),
        error,
        short,
        bought,
    });
    Ok((status, page).into_response())
}

/// The price book the shop prices with (the API's cache), or the store's.
async fn price_book(state: &DashboardState) -> Result<Arc<PriceBook>, PageError> {
    Ok(match &state.shop {
        Some(shop) => shop.prices.get().await?,
        None => Arc::new(state.store.price_book().await?.1),
    })
}

#[derive(Deserialize)]
pub struct BuyUpgrade {
    tier: String,
    reference: String,
    pin: String,
}

/// Buys the tier with the PIN; back to the page, saying so.
pub async fn buy(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<BuyUpgrade>,
) -> PageResult {
    match bought(&state, &signed_in, &form).await {
        Ok(tier) => {
            let to = format!("/dashboard/upgrade?bought={}", url_encode(&tier));
            Ok(Redirect::to(&to).into_response())
        }
        Err(refused) => {
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            upgrade_page(&state, &signed_in, status, Some(refused), None).await
        }
    }
}

async fn bought(
    state: &DashboardState,
    signed_in: &SignedIn,
    form: &BuyUpgrade,
) -> Result<String, Refused> {
    may_buy(&signed_in.user).map_err(Refused::Say)?;
    let reference = Reference::parse(&form.reference)
        .map_err(|_| Refused::Say("This form is out of date: open the page again.".into()))?;
    pin::check(state, signed_in.user.id, &form.pin).await?;
    let store = state.store.as_ref();
    match upgrades::buy(store, signed_in.user.id, &form.tier, &reference).await {
        Ok(bought) => Ok(bought.upgrade.tier),
        Err(UpgradeError::InsufficientBalance(fee)) => Err(Refused::Short(format!(
            "Your wallet has too little for the {} fee: fund it, then come back.",
            naira(fee)
        ))),
        Err(UpgradeError::Store(e)) => Err(Refused::Page(e.into())),
        Err(refused) => Err(Refused::Say(refused.to_string())),
    }
}
