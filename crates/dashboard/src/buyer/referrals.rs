//! "Refer" (issue 49; docs/referrals.md): the customer's referral code and
//! sign-up link (with a WhatsApp share), the people who signed up with it
//! (names masked), what they earned and what is pending, the bonus balance
//! and its history, and a form that moves bonus to the wallet —
//! `billpay_operations::referrals`, the API's too: once per reference (the
//! form's, minted when the page is drawn, so a double tap moves once).

use super::shop::mint_reference;
use crate::DashboardState;
use crate::page::{Chrome, PageError, PageResult, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use billpay_domain::{Kobo, Reference};
use billpay_operations::referrals::{self, WithdrawError};
use billpay_webkit::CsrfForm;
use billpay_webkit::filters::url_encode;
use billpay_webkit::format::{lagos_time, naira};
use serde::Deserialize;

#[derive(Template)]
#[template(path = "buyer/referrals.html")]
struct ReferralsPage {
    chrome: Chrome,
    code: String,
    link: String,
    /// The WhatsApp share link (`wa.me`, the message URL-encoded).
    whatsapp: String,
    referees: Vec<RefereeView>,
    earned: String,
    pending: String,
    withdrawn: String,
    balance: String,
    /// The bonus balance is below zero: a reversal took back bonus already moved.
    owed: bool,
    /// What may be moved now, for the form (Naira, 2 decimals).
    movable: String,
    can_move: bool,
    minimum: String,
    /// The owner's rates, as sentences; empty: the programme is off.
    rates: Vec<String>,
    history: Vec<EntryView>,
    reference: String,
    error: Option<String>,
    moved: Option<String>,
}

struct RefereeView {
    name: String,
    joined: String,
    state: &'static str,
    earned: String,
}

struct EntryView {
    what: &'static str,
    amount: String,
    balance_after: String,
    when: String,
}

fn entry_what(kind: &str) -> &'static str {
    match kind {
        "commission" => "Commission on a referee's purchase",
        "reversal" => "Taken back: the purchase was reversed",
        "first_funding" => "Bonus on a referee's first funding",
        _ => "Moved to your wallet",
    }
}

#[derive(Deserialize, Default)]
pub struct Shown {
    /// The amount just moved (Naira).
    moved: Option<String>,
}

pub async fn page(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(shown): Query<Shown>,
) -> PageResult {
    let moved = shown
        .moved
        .map(|amount| format!("Moved ₦{amount} to your wallet. You can spend it now."));
    referrals_page(&state, &signed_in, StatusCode::OK, None, moved).await
}

async fn referrals_page(
    state: &DashboardState,
    signed_in: &SignedIn,
    status: StatusCode,
    error: Option<String>,
    moved: Option<String>,
) -> PageResult {
    let view = referrals::overview(state.store.as_ref(), signed_in.user.id).await?;
    let base = crate::care::public_url(state);
    let link = format!("{base}{}", view.link_path);
    let brand = crate::page::brand();
    let message = format!(
        "Join me on {}: buy airtime, data and pay bills. Sign up with my code {}: {link}",
        brand.name, view.code
    );
    let balance = view.totals.balance;
    let page = render(&ReferralsPage {
        chrome: Chrome::new(signed_in, "referrals"),
        whatsapp: format!("https://wa.me/?text={}", url_encode(&message)),
        code: view.code,
        link,
        referees: view
            .referees
            .into_iter()
            .map(|r| RefereeView {
                name: r.name,
                joined: lagos_time(&r.joined_at),
                state: r.state,
                earned: naira(r.earned),
            })
            .collect(),
        earned: naira(view.totals.earned),
        pending: naira(view.totals.pending),
        withdrawn: naira(view.totals.withdrawn),
        balance: naira(balance),
        owed: balance < Kobo::ZERO,
        movable: format!("{:.2}", balance.0.max(0) as f64 / 100.0),
        can_move: balance > Kobo::ZERO && balance >= view.min_withdrawal,
        minimum: naira(view.min_withdrawal),
        rates: view
            .rates
            .iter()
            .map(|r| {
                let window = r
                    .days
                    .map(|d| format!(" for their first {d} days"))
                    .unwrap_or_default();
                format!(
                    "{}.{:02}% of what they pay for {}{window}",
                    r.basis_points / 100,
                    r.basis_points % 100,
                    r.product.service()
                )
            })
            .collect(),
        history: view
            .history
            .into_iter()
            .map(|e| EntryView {
                what: entry_what(&e.kind),
                amount: naira(e.amount),
                balance_after: naira(e.balance_after),
                when: lagos_time(&e.created_at),
            })
            .collect(),
        reference: mint_reference(),
        error,
        moved,
    });
    Ok((status, page).into_response())
}

#[derive(Deserialize)]
pub struct MoveForm {
    amount: String,
    reference: String,
}

/// Moves bonus to the wallet; back to the page, saying so.
pub async fn withdraw(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<MoveForm>,
) -> PageResult {
    match moved(&state, &signed_in, &form).await {
        Ok(amount) => {
            let to = format!(
                "/dashboard/referrals?moved={}",
                url_encode(&format!("{:.2}", amount.0 as f64 / 100.0))
            );
            Ok(Redirect::to(&to).into_response())
        }
        Err(Err(e)) => Err(e),
        Err(Ok(message)) => {
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            referrals_page(&state, &signed_in, status, Some(message), None).await
        }
    }
}

/// The amount moved, or what to say (`Ok`), or the page's error.
async fn moved(
    state: &DashboardState,
    signed_in: &SignedIn,
    form: &MoveForm,
) -> Result<Kobo, Result<String, PageError>> {
    let amount = Kobo::parse_typed_naira(&form.amount)
        .ok()
        .filter(|a| *a > Kobo::ZERO)
        .ok_or_else(|| Ok("Type an amount in Naira, like 500 or 500.50.".to_owned()))?;
    let reference = Reference::parse(&form.reference)
        .map_err(|_| Ok("This form is out of date: open the page again.".to_owned()))?;
    match referrals::withdraw(state.store.as_ref(), signed_in.user.id, amount, &reference).await {
        Ok(moved) => Ok(moved.amount),
        Err(WithdrawError::Store(e)) => Err(Err(e.into())),
        Err(refused) => Err(Ok(sentence(&refused.to_string()))),
    }
}

/// The operation's message as a sentence (its first letter capital, a full stop).
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
    format!("{}{}.", first.unwrap_or_default(), chars.as_str())
}
