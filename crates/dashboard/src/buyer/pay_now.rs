//! Money in from the wallet page (issue 31): the customer's reserved bank
//! accounts, reserved on their first visit (asking for a BVN or NIN where
//! the gateway needs one: passed to the gateway, only its last 4 digits
//! kept), and "Pay now" by card, USSD or bank on the gateway's hosted page
//! (Paystack Checkout). The return from that page proves nothing: the
//! worker's `Funding::take_checkout` verifies the payment with the gateway
//! and credits it once, as the webhook and the reconciler do.

use crate::DashboardState;
use crate::format::{naira, short_time};
use crate::page::{PageError, PageResult, bad_request, not_found};
use crate::session::SignedIn;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect};
use billpay_domain::Kobo;
use billpay_funding::FeeRule;
use billpay_funding::paystack::reference_is_valid;
use billpay_operations::OpsError;
use billpay_operations::bank_transfers::{Identity, reserve_own};
use billpay_store::{Account, Checkout, CheckoutStatus, FundingStatus};
use billpay_webkit::CsrfForm;
use billpay_worker::CheckoutOutcome;
use serde::Deserialize;
use std::time::Duration;

/// The latest card payments shown on the wallet page.
const CHECKOUTS_SHOWN: u32 = 5;
/// How long the return from the payment page waits for the gateway's
/// verify before showing the wallet (the webhook or reconciler finish it).
const RETURN_WAIT: Duration = Duration::from_secs(8);

/// What the wallet page adds to "Fund your wallet".
pub struct WalletExtras {
    /// Gateways that need a BVN or NIN before reserving accounts.
    pub identity_asks: Vec<IdentityAsk>,
    pub reserve_error: Option<String>,
    /// The pay-now form, when a gateway with a hosted checkout is configured.
    pub pay_now: Option<PayNow>,
    pub pay_error: Option<String>,
    /// What the customer typed, to fill the form again after an error.
    pub pay_amount: String,
    pub checkouts: Vec<CheckoutRow>,
    /// The payment the customer just came back from.
    pub paid: Option<PaidNotice>,
}

pub struct IdentityAsk {
    pub gateway: String,
    pub title: &'static str,
    /// The last 4 digits given before, when the gateway refused them.
    pub refused_last4: Option<String>,
}

pub struct PayNow {
    pub title: &'static str,
    /// The operator's fee, in words ("1.5% + ₦50.00, at most ₦200.00").
    pub fee: String,
    /// The fee is added to what is paid (else taken from what is funded).
    pub surcharge: bool,
    pub min: String,
    pub max: String,
}

pub struct CheckoutRow {
    pub at: String,
    pub reference: String,
    pub pay: String,
    pub fee: String,
    pub credit: String,
    pub status: &'static str,
    pub words: &'static str,
}

pub struct PaidNotice {
    pub status: &'static str,
    pub message: String,
}

/// What a request to the wallet page carries besides the page itself.
#[derive(Default)]
pub struct WalletNotes {
    pub paid: Option<String>,
    /// The purchase form to go back to once funded (`wallet::back_to_shop`).
    pub back: Option<String>,
    pub pay_error: Option<String>,
    pub pay_amount: String,
    pub reserve_error: Option<String>,
}

/// What reserving accounts on a visit came to: the gateways still waiting
/// for a BVN or NIN, and why a reservation failed.
pub struct Reserving {
    pub identity_asks: Vec<IdentityAsk>,
    pub reserve_error: Option<String>,
    /// Accounts were reserved on this visit: read them again.
    pub reserved_any: bool,
}

/// Reserves, on a first visit, the accounts of each gateway that needs
/// nothing from the customer (the wallet page and the buyer's home).
pub async fn reserve_on_first_visit(
    state: &DashboardState,
    account: &Account,
) -> Result<Reserving, PageError> {
    let mut reserve_error = None;
    let mut identity_asks = Vec::new();
    let mut reserved_any = false;
    // Accounts are reserved for a confirmed email only (issue 31).
    let gateways = match super::shop::may_buy(account) {
        Ok(()) => state.funding.gateways(),
        Err(_) => &[],
    };
    for gateway in gateways {
        let name = gateway.name();
        if state
            .store
            .funding_customer(account.id, name)
            .await?
            .is_some()
        {
            continue;
        }
        if gateway.needs_identity() {
            let given = state.store.reservation_identity(account.id, name).await?;
            let refused = given.filter(|g| g.state == "refused");
            identity_asks.push(IdentityAsk {
                gateway: name.to_owned(),
                title: title_of(name),
                refused_last4: refused.map(|g| g.last4),
            });
            continue;
        }
        let reserved = reserve_own(state.store.as_ref(), &state.funding, account.id, name, None);
        match reserved.await {
            Ok(_) => reserved_any = true,
            Err(e) => {
                tracing::warn!(account = %account.id, gateway = name, error = %e, "accounts not reserved");
                reserve_error = Some(reserve_failed(name, &e));
            }
        }
    }
    Ok(Reserving {
        identity_asks,
        reserve_error,
        reserved_any,
    })
}

/// The wallet page's funding extras, after reserving on a first visit.
pub async fn wallet_extras(
    state: &DashboardState,
    account: &Account,
    notes: WalletNotes,
) -> Result<WalletExtras, PageError> {
    let reserving = reserve_on_first_visit(state, account).await?;
    let checkouts = state
        .store
        .account_checkouts(account.id, CHECKOUTS_SHOWN)
        .await?;
    let paid = match notes.paid {
        Some(reference) => paid_notice(state, account, &reference).await?,
        None => None,
    };
    Ok(WalletExtras {
        identity_asks: reserving.identity_asks,
        // this visit's own failure, else the one the page came back with
        reserve_error: reserving.reserve_error.or(notes.reserve_error),
        pay_now: pay_now_form(state),
        pay_error: notes.pay_error,
        pay_amount: notes.pay_amount,
        checkouts: checkouts.iter().map(checkout_row).collect(),
        paid,
    })
}

fn pay_now_form(state: &DashboardState) -> Option<PayNow> {
    let gateway = state.funding.checkout_gateway()?;
    let quote_floor = billpay_worker::checkout_settlement::CHECKOUT_MIN;
    let quote_ceiling = billpay_worker::checkout_settlement::CHECKOUT_MAX;
    Some(PayNow {
        title: title_of(gateway.name()),
        fee: fee_words(&state.funding.fee()),
        surcharge: state.funding.surcharges(),
        min: naira(quote_floor),
        max: naira(quote_ceiling),
    })
}

fn checkout_row(c: &Checkout) -> CheckoutRow {
    let (status, words) = match c.status {
        CheckoutStatus::Open => ("open", "awaiting payment"),
        CheckoutStatus::Credited => ("credited", "credited"),
        CheckoutStatus::Failed => ("failed", "failed, nothing added"),
        CheckoutStatus::Abandoned => ("abandoned", "not completed, nothing added"),
    };
    CheckoutRow {
        at: short_time(&c.created_at),
        reference: c.reference.clone(),
        pay: naira(c.amount),
        fee: naira(c.fee),
        credit: naira(c.credit()),
        status,
        words,
    }
}

/// What became of the payment the customer came back from (the store's
/// word only: the return already asked the gateway).
async fn paid_notice(
    state: &DashboardState,
    account: &Account,
    reference: &str,
) -> Result<Option<PaidNotice>, PageError> {
    let Some(checkout) = own_checkout(state, account, reference).await? else {
        return Ok(None);
    };
    let event = state.store.funding_event(reference).await?;
    let credited = event.filter(|e| e.status == FundingStatus::Credited);
    let notice = match (credited, checkout.status) {
        (Some(event), _) => PaidNotice {
            status: "credited",
            message: format!(
                "Payment received: {} paid, {} added to your wallet.",
                naira(event.amount),
                naira(event.credited)
            ),
        },
        (None, CheckoutStatus::Failed) => PaidNotice {
            status: "failed",
            message: "The payment did not go through: nothing was added to your wallet.".into(),
        },
        (None, CheckoutStatus::Abandoned) => PaidNotice {
            status: "abandoned",
            message: "This payment was not completed: nothing was added to your wallet.".into(),
        },
        (None, _) => PaidNotice {
            status: "open",
            message: format!(
                "Your payment of {} is not confirmed yet. If you paid, your wallet is credited \
                 as soon as it is confirmed: you can leave this page.",
                naira(checkout.amount)
            ),
        },
    };
    Ok(Some(notice))
}

async fn own_checkout(
    state: &DashboardState,
    account: &Account,
    reference: &str,
) -> Result<Option<Checkout>, PageError> {
    if !reference_is_valid(reference) {
        return Ok(None);
    }
    let checkout = state.store.checkout(reference).await?;
    Ok(checkout.filter(|c| c.account_id == account.id))
}

#[derive(Deserialize)]
pub struct PayForm {
    #[serde(default)]
    amount: String,
}

/// `POST /dashboard/wallet/pay`: stores the checkout, has the gateway
/// initialize it and sends the customer to its page (303).
pub async fn start(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    headers: HeaderMap,
    CsrfForm(form): CsrfForm<PayForm>,
) -> PageResult {
    let typed = form.amount.trim().chars().take(40).collect::<String>();
    let refuse = |why: String| WalletNotes {
        pay_error: Some(why),
        pay_amount: typed.clone(),
        ..WalletNotes::default()
    };
    let Ok(wanted) = Kobo::parse_typed_naira(&typed) else {
        let why = "Enter the amount in Naira, like 5000 or 5,000.50.".to_owned();
        return refused(&state, &signed_in, refuse(why)).await;
    };
    let Some(callback_url) = callback_url(&state, &headers) else {
        return Err(bad_request("This address cannot take card payments."));
    };
    let user = &signed_in.user;
    if let Err(why) = super::shop::may_buy(user) {
        return refused(&state, &signed_in, refuse(why)).await;
    }
    let started = state
        .funding
        .start_checkout(user.id, &user.email, wanted, &callback_url)
        .await;
    match started {
        Ok((_, started)) => Ok(Redirect::to(&started.authorization_url).into_response()),
        Err(e) => refused(&state, &signed_in, refuse(e.to_string())).await,
    }
}

/// The wallet page again, with what was wrong (422: nothing changed).
async fn refused(state: &DashboardState, signed_in: &SignedIn, notes: WalletNotes) -> PageResult {
    let page = super::wallet::page(state, signed_in, notes).await?;
    Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
}

#[derive(Deserialize)]
pub struct Returned {
    reference: Option<String>,
    trxref: Option<String>,
}

/// `GET /dashboard/wallet/paid?trxref=…&reference=…`: the gateway sends the
/// customer back here. Verified and credited (once) if paid, then the wallet
/// page says what became of it.
pub async fn returned(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(query): Query<Returned>,
) -> PageResult {
    let reference = query.reference.or(query.trxref).unwrap_or_default();
    let Some(checkout) = own_checkout(&state, &signed_in.user, &reference).await? else {
        return Err(not_found());
    };
    let taking = state.funding.take_checkout(&checkout.reference);
    match tokio::time::timeout(RETURN_WAIT, taking).await {
        Ok(Ok(CheckoutOutcome::Credited { now, .. })) => {
            tracing::info!(reference, credited_now = now, "checkout return: credited");
        }
        Ok(Ok(outcome)) => tracing::info!(reference, ?outcome, "checkout return: not credited"),
        Ok(Err(e)) => tracing::warn!(reference, error = %e, "checkout return: not verified"),
        Err(_) => tracing::warn!(reference, "checkout return: verify took too long"),
    }
    let to = format!("/dashboard/wallet?paid={}#pay-now", checkout.reference);
    Ok(Redirect::to(&to).into_response())
}

#[derive(Deserialize)]
pub struct ReserveForm {
    #[serde(default)]
    gateway: String,
    /// `bvn` or `nin`.
    #[serde(default)]
    kind: String,
    #[serde(default)]
    number: String,
}

/// `POST /dashboard/wallet/reserve`: the accounts of a gateway that needs a
/// BVN or NIN. The number goes to the gateway; only its last 4 digits stay.
pub async fn reserve(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    CsrfForm(form): CsrfForm<ReserveForm>,
) -> PageResult {
    if let Err(why) = super::shop::may_buy(&signed_in.user) {
        let notes = WalletNotes {
            reserve_error: Some(why),
            ..WalletNotes::default()
        };
        return refused(&state, &signed_in, notes).await;
    }
    let number = form.number.trim();
    let identity = match form.kind.as_str() {
        "bvn" => Identity::of(Some(number), None),
        "nin" => Identity::of(None, Some(number)),
        _ => return Err(bad_request("Choose BVN or NIN.")),
    };
    let retry = |why: String| WalletNotes {
        reserve_error: Some(why),
        ..WalletNotes::default()
    };
    let identity = match identity {
        Ok(Some(identity)) => identity,
        Ok(None) | Err(_) => {
            let why = "Enter your 11-digit BVN or NIN.".to_owned();
            return refused(&state, &signed_in, retry(why)).await;
        }
    };
    if state.funding.gateway(&form.gateway).is_none() {
        return Err(bad_request("Unknown payment provider."));
    }
    let account = signed_in.user.id;
    let reserved = reserve_own(
        state.store.as_ref(),
        &state.funding,
        account,
        &form.gateway,
        Some(identity),
    )
    .await;
    match reserved {
        Ok(_) => Ok(Redirect::to("/dashboard/wallet#fund-your-wallet").into_response()),
        Err(e) => {
            tracing::warn!(%account, gateway = form.gateway, "accounts not reserved: the gateway refused");
            let why = reserve_failed(&form.gateway, &e);
            refused(&state, &signed_in, retry(why)).await
        }
    }
}

/// Why accounts were not reserved, for the customer.
fn reserve_failed(gateway: &str, error: &OpsError) -> String {
    let title = title_of(gateway);
    match error {
        OpsError::Invalid(_) => "Enter your 11-digit BVN or NIN.".into(),
        _ => format!(
            "{title} could not give you account numbers right now ({error}). Check the number \
             and try again, or pay by card below."
        ),
    }
}

/// The absolute URL the gateway sends the customer back to: the operator's
/// `public_url`, else the scheme and host this request came to.
fn callback_url(state: &DashboardState, headers: &HeaderMap) -> Option<String> {
    const PATH: &str = "/dashboard/wallet/paid";
    if let Some(base) = &state.public_url {
        return Some(format!("{}{PATH}", base.trim().trim_end_matches('/')));
    }
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let host_ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
    let https = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|p| p.eq_ignore_ascii_case("https"));
    let scheme = if https { "https" } else { "http" };
    host_ok.then(|| format!("{scheme}://{host}{PATH}"))
}

/// A gateway's name as people write it.
fn title_of(gateway: &str) -> &'static str {
    let registered = billpay_funding::registry::GATEWAYS.iter();
    registered
        .map(|g| (g.name, g.title))
        .find(|(name, _)| *name == gateway)
        .map_or("The payment provider", |(_, title)| title)
}

/// The operator's fee, in words.
fn fee_words(rule: &FeeRule) -> String {
    let mut parts = Vec::new();
    if rule.basis_points > 0 {
        let whole = rule.basis_points / 100;
        let hundredths = rule.basis_points % 100;
        let percent = match hundredths {
            0 => format!("{whole}%"),
            h if h % 10 == 0 => format!("{whole}.{}%", h / 10),
            h => format!("{whole}.{h:02}%"),
        };
        parts.push(percent);
    }
    if rule.flat > Kobo::ZERO {
        parts.push(naira(rule.flat));
    }
    if parts.is_empty() {
        return "no fee".into();
    }
    let mut words = parts.join(" + ");
    if let Some(cap) = rule.cap {
        words.push_str(&format!(", at most {}", naira(cap)));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fee_reads_as_a_person_writes_it() {
        let rule = FeeRule {
            basis_points: 150,
            flat: Kobo(5_000),
            cap: Some(Kobo(20_000)),
        };
        assert_eq!(fee_words(&rule), "1.5% + ₦50.00, at most ₦200.00");
        assert_eq!(fee_words(&FeeRule::default()), "no fee");
        let quarter = FeeRule {
            basis_points: 25,
            ..FeeRule::default()
        };
        assert_eq!(fee_words(&quarter), "0.25%");
    }
}
