//! Wallet statement: ledger entries with the running balance, each saying
//! what moved the wallet, and CSV download (times in Lagos time).

use super::pay_now::WalletNotes;
use crate::DashboardState;
use crate::format::{naira, short_time, sortable_time};
use crate::page::{Chrome, PageResult, render};
use crate::session::SignedIn;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use billpay_domain::AccountId;
use billpay_store::limits::AccountLimits;
use billpay_store::{LedgerEntry, SharedStore, StoreResult, Transaction, TxFilter, TxLookup};
use billpay_webkit::rows::{Paid, entry_description_paid};
use std::collections::{HashMap, HashSet};

/// The statement page shows this many of the latest entries; the CSV has all.
const PAGE_ENTRIES: u32 = 200;
const CSV_ENTRIES: u32 = 1_000_000;

pub struct EntryRow {
    pub at: String,
    pub kind: String,
    /// What moved the wallet, in words.
    pub what: String,
    pub amount: String,
    pub credit: bool,
    pub balance_after: String,
    pub reference: String,
    pub link: Option<String>,
}

#[derive(Template)]
#[template(path = "buyer/wallet.html")]
struct WalletPage {
    chrome: Chrome,
    balance: String,
    limits: LimitsNote,
    entries: Vec<EntryRow>,
    funding: super::fund_wallet::FundingSection,
    /// The purchase form the customer came from, short of money, filled in.
    back: Option<String>,
}

/// What the account's limits still allow today, and how to raise them
/// (docs/limits.md), in words.
pub struct LimitsNote {
    /// "You can spend ₦X more today", or why level 0's limits apply.
    pub left: Option<String>,
    /// Level 0 and the gateway checks identities: the link to verify one's
    /// BVN or NIN here (`/dashboard/identity`) instead of [`Self::raise`].
    pub verify_here: bool,
    /// Below level 2: how to reach a higher level.
    pub raise: Option<&'static str>,
}

/// What a customer at level 0 is told to raise their limits.
pub const RAISE_LIMITS: &str = "To raise your limits, have your BVN or NIN verified by the operator (level 1), or ask the operator to approve your business (level 2).";
/// …at level 1.
pub const RAISE_TO_LEVEL2: &str =
    "To raise your limits further, ask the operator to approve your business (level 2).";

impl LimitsNote {
    /// `identity`: the shop can check a BVN or NIN itself.
    fn of(view: &AccountLimits, identity: bool) -> LimitsNote {
        let left = if view.held_to_level0 {
            Some("Your wallet holds more than its largest balance, so the lowest level's limits apply until the operator reviews your account.".to_owned())
        } else {
            view.left_today()
                .map(|left| format!("You can spend {} more today.", naira(left)))
        };
        let verify_here = view.kyc.level == 0 && identity;
        let raise = match view.kyc.level {
            0 if verify_here => None,
            0 => Some(RAISE_LIMITS),
            1 => Some(RAISE_TO_LEVEL2),
            _ => None,
        };
        LimitsNote {
            left,
            verify_here,
            raise,
        }
    }
}

#[derive(serde::Deserialize)]
pub struct WalletQuery {
    /// The card payment the customer just came back from.
    paid: Option<String>,
    /// A purchase form to go back to once funded (`/dashboard/buy/…?…`).
    back: Option<String>,
}

/// `back` when it is one of the shop's forms on this site (never another
/// site's address: no scheme, no `//`, no backslash).
pub fn back_to_shop(back: Option<&str>) -> Option<String> {
    let back = back?.trim();
    let ours = back.starts_with("/dashboard/buy/")
        && !back.contains("//")
        && back
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'\\' && b != b'"' && b != b'<');
    ours.then(|| back.to_owned())
}

pub async fn statement(
    State(state): State<DashboardState>,
    signed_in: SignedIn,
    Query(query): Query<WalletQuery>,
) -> PageResult {
    let notes = WalletNotes {
        paid: query.paid,
        back: back_to_shop(query.back.as_deref()),
        ..WalletNotes::default()
    };
    page(&state, &signed_in, notes).await
}

/// The wallet page, with the funding section's notes (errors, a payment).
pub async fn page(state: &DashboardState, signed_in: &SignedIn, notes: WalletNotes) -> PageResult {
    let back = notes.back.clone();
    let account = signed_in.user.id;
    // First: a first visit may reserve accounts, shown below.
    let extras = super::pay_now::wallet_extras(state, &signed_in.user, notes).await?;
    let balance = state.store.balance(account).await?;
    let identity = crate::care::identity::offered(state);
    let limits = LimitsNote::of(&state.store.account_limits(account).await?, identity);
    let entries = state.store.ledger(account, PAGE_ENTRIES).await?;
    let purchases = purchases_of(&state.store, account, &entries, PAGE_ENTRIES).await?;
    let cards = card_payments(&state.store, account, PAGE_ENTRIES).await?;
    let entries = entries
        .iter()
        .map(|e| EntryRow {
            at: short_time(&e.created_at),
            kind: e.kind.to_string(),
            what: describe_entry(e, &purchases, &cards),
            amount: naira(e.amount),
            credit: e.amount.0 > 0,
            balance_after: naira(e.balance_after),
            reference: reference_of(e).to_owned(),
            link: e
                .transaction_code
                .as_ref()
                .map(|c| format!("/dashboard/transactions/{c}")),
        })
        .collect();
    let mut funding = super::fund_wallet::load(&state.store, account).await?;
    funding.extras = Some(extras);
    let page = render(&WalletPage {
        chrome: Chrome::new(signed_in, "wallet"),
        balance: naira(balance),
        limits,
        entries,
        funding,
        back,
    });
    // The pay-now form is answered by a 303 to the gateway's page.
    let checkout = state.funding.checkout_gateway().and_then(|g| g.checkout());
    let origins = checkout.map(|c| c.page_origins()).unwrap_or_default();
    Ok(billpay_webkit::with_form_targets(page, &origins))
}

/// The purchases the entries name, by code: the latest `limit` in one read,
/// an older one (a late refund's) on its own.
async fn purchases_of(
    store: &SharedStore,
    account: AccountId,
    entries: &[LedgerEntry],
    limit: u32,
) -> StoreResult<HashMap<String, Transaction>> {
    let filter = TxFilter {
        account_id: Some(account),
        limit,
        ..TxFilter::default()
    };
    let mut found: HashMap<String, Transaction> = store
        .transactions(filter)
        .await?
        .into_iter()
        .map(|tx| (tx.code.clone(), tx))
        .collect();
    for code in entries.iter().filter_map(|e| e.transaction_code.as_ref()) {
        if !found.contains_key(code)
            && let Some(tx) = store
                .transaction(Some(account), TxLookup::Code(code.clone()))
                .await?
        {
            found.insert(code.clone(), tx);
        }
    }
    Ok(found)
}

/// The references of the account's payments on a gateway's hosted checkout
/// (by card): their credits are named card payments, not bank transfers.
async fn card_payments(
    store: &SharedStore,
    account: AccountId,
    limit: u32,
) -> StoreResult<HashSet<String>> {
    let checkouts = store.account_checkouts(account, limit).await?;
    Ok(checkouts.into_iter().map(|c| c.reference).collect())
}

fn describe_entry(
    e: &LedgerEntry,
    purchases: &HashMap<String, Transaction>,
    cards: &HashSet<String>,
) -> String {
    let tx = e.transaction_code.as_ref().and_then(|c| purchases.get(c));
    let by_card = e
        .credit_reference
        .as_ref()
        .is_some_and(|r| cards.contains(r));
    let paid = if by_card { Paid::Card } else { Paid::Transfer };
    entry_description_paid(e, tx, paid)
}

fn reference_of(e: &LedgerEntry) -> &str {
    e.transaction_code
        .as_deref()
        .or(e.credit_reference.as_deref())
        .unwrap_or_default()
}

/// Oldest first, times in Lagos time, amounts in Naira with 2 decimals, one
/// header row.
pub async fn csv(State(state): State<DashboardState>, signed_in: SignedIn) -> PageResult {
    let account = signed_in.user.id;
    let mut entries = state.store.ledger(account, CSV_ENTRIES).await?;
    entries.reverse();
    let purchases = purchases_of(&state.store, account, &entries, CSV_ENTRIES).await?;
    let cards = card_payments(&state.store, account, CSV_ENTRIES).await?;
    let mut out = String::from(
        "time (Lagos, WAT),kind,description,amount_naira,balance_after_naira,reference\n",
    );
    for e in &entries {
        out.push_str(&format!(
            "{},{},{},{},{},{}\n",
            sortable_time(&e.created_at),
            e.kind,
            csv_field(&describe_entry(e, &purchases, &cards)),
            e.amount,
            e.balance_after,
            csv_field(reference_of(e))
        ));
    }
    let filename = format!(
        "attachment; filename=\"billpay-statement-{}.csv\"",
        billpay_store::clock::lagos_today()
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (header::CONTENT_DISPOSITION, filename),
        ],
        out,
    )
        .into_response())
}

/// Quotes a field when needed, and defuses spreadsheet formulas.
pub(crate) fn csv_field(value: &str) -> String {
    let value = if value.starts_with(['=', '+', '-', '@']) {
        format!("'{value}")
    } else {
        value.to_owned()
    };
    if value.contains([',', '"', '\n']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::back_to_shop;

    #[test]
    fn only_a_shop_form_on_this_site_is_a_way_back() {
        let form = "/dashboard/buy/cable?provider_id=dstv&smartcard_number=7012345678&plan_id=dstv-padi&check=1";
        assert_eq!(back_to_shop(Some(form)).as_deref(), Some(form));
        for elsewhere in [
            "https://evil.example/dashboard/buy/cable",
            "//evil.example/dashboard/buy/x",
            "/dashboard/buy//evil.example",
            "/dashboard/keys",
            "/dashboard/buy/cable?x=\"><script>",
            "/dashboard/buy/cable\\@evil",
        ] {
            assert_eq!(back_to_shop(Some(elsewhere)), None, "{elsewhere}");
        }
        assert_eq!(back_to_shop(None), None);
    }
}
