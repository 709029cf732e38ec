//! Self-service upgrades (issue 49; docs/pricing.md, "Upgrades"): the owner
//! offers a price tier for a one-time fee ([`offer`], [`withdraw`]), a
//! customer sees what it would have saved them ([`offers_for`]) and buys it
//! from the wallet ([`buy`]: the shop's page after its PIN, `POST
//! /v1/account/upgrade`), and the owner may move an account back to list
//! prices, giving the fee back only if they choose ([`downgrade`]).
//!
//! A purchase is one unit of work: the fee's ledger entry and the upgrade's
//! row (`work::buy_upgrade`, once per reference under the wallet's lock)
//! and the account's tier change with its log line
//! (`work::set_account_tier_logged`, the owner's own change), all stored or
//! none.

use crate::{Actor, OpsError, OpsResult, Permission, invalid, reason_of};
use billpay_domain::pricing::{DEFAULT_TIER, PriceBook, Priced, Tier, denomination_key};
use billpay_domain::{AccountId, Kobo, Naira, Product, Reference, TxStatus};
use billpay_store::catalogue_cache::RECHECK;
use billpay_store::clock::{now_ms, rfc3339};
use billpay_store::{
    Credit, NewLogEntry, Refusal, Store, StoreError, TierOffer, Transaction, TxFilter, Upgrade,
    UpgradeOutcome, offer_described, work,
};

/// The operator-log actor of a customer's own upgrade.
pub const SELF: &str = crate::identity::SELF;
/// The largest fee an offer may ask: ₦10,000,000.
pub const MAX_FEE: Kobo = Kobo(1_000_000_000);
/// How far back the savings are counted, and the spend a condition asks.
const MONTH_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// The most purchases the savings preview reprices (the latest).
const PREVIEW_PURCHASES: u32 = 1000;

/// An offer as typed: the fee in Naira (`5000`, `₦5,000`), and optionally
/// the KYC level (0–2) and the 30-day spend in Naira a buyer needs.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfferInput<'a> {
    pub fee: &'a str,
    pub kyc_level: Option<&'a str>,
    pub min_monthly_spend: Option<&'a str>,
}

fn naira_typed(field: &'static [&'static str], text: &str) -> OpsResult<Kobo> {
    let amount = Kobo::parse_typed_naira(text)
        .map_err(|_| invalid(field, format!("must be an amount in Naira (not {text})")))?;
    if amount <= Kobo::ZERO || amount > MAX_FEE {
        return Err(invalid(
            field,
            format!("must be more than 0 and at most {MAX_FEE}"),
        ));
    }
    Ok(amount)
}

/// A field typed, `None` when left blank.
fn given(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// Offers `tier` for its fee, optionally only from a KYC level or a 30-day
/// spend; replaces the tier's offer. Logged `pricing.offer`.
pub async fn offer(
    store: &dyn Store,
    actor: Actor,
    tier: &str,
    input: OfferInput<'_>,
) -> OpsResult<TierOffer> {
    actor.require(Permission::ChangeCatalogue)?;
    if tier == DEFAULT_TIER {
        return Err(invalid(
            &["tier"],
            "default is the list prices: offer another tier",
        ));
    }
    let fee = naira_typed(&["fee"], input.fee)?;
    let min_kyc_level = given(input.kyc_level)
        .map(|level| {
            crate::limits::level_of(level).map_err(|_| invalid(&["kyc_level"], "must be 0, 1 or 2"))
        })
        .transpose()?;
    let min_monthly_spend = given(input.min_monthly_spend)
        .map(|spend| naira_typed(&["min_monthly_spend"], spend))
        .transpose()?;
    let offer = TierOffer {
        tier: tier.to_owned(),
        fee,
        min_kyc_level,
        min_monthly_spend,
        updated_at: String::new(),
    };
    let mut log = actor.log("pricing.offer", tier);
    log.after = Some(offer_described(&offer));
    store
        .write((offer.clone(), log), |tx, (offer, log)| {
            Box::pin(work::set_tier_offer_logged(tx, offer, log))
        })
        .await
        .map_err(tier_not_found)?;
    tracing::info!(%actor, tier, %fee, "tier offered");
    Ok(offer)
}

/// Withdraws the offer of `tier` (upgrades bought stay); `false` when there
/// was none. Logged `pricing.offer_withdrawn`.
pub async fn withdraw(store: &dyn Store, actor: Actor, tier: &str) -> OpsResult<bool> {
    actor.require(Permission::ChangeCatalogue)?;
    let log = actor.log("pricing.offer_withdrawn", tier);
    let removed = store
        .write((tier.to_owned(), log), |tx, (tier, log)| {
            Box::pin(work::remove_tier_offer_logged(tx, tier, log))
        })
        .await?;
    tracing::info!(%actor, tier, removed, "tier offer withdrawn");
    Ok(removed)
}

fn tier_not_found(e: StoreError) -> OpsError {
    match e {
        StoreError::Invalid(text) => OpsError::NotFound(text),
        other => other.into(),
    }
}

/// An offer as one customer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    pub offer: TierOffer,
    /// The customer is on this tier now.
    pub current: bool,
    /// Why the customer may not buy it yet (a condition not met), in words.
    pub unmet: Option<String>,
    /// What their successful purchases of the last 30 days would have cost
    /// less at this tier (the net: an item dearer there counts against it).
    pub savings: Kobo,
    /// How many purchases the savings are counted over.
    pub purchases: usize,
}

/// What an offer's conditions are measured by.
struct Standing {
    level: u8,
    /// Spent on purchases (not failed) over the last 30 days.
    spent: Kobo,
}

async fn standing(store: &dyn Store, account: AccountId) -> OpsResult<Standing> {
    let since = rfc3339(now_ms() - MONTH_MS);
    let level = store.account_limits(account).await?.kyc.level;
    let spent = store.daily_spend(account, &since).await?;
    let spent = Kobo(spent.iter().map(|day| day.amount.0).sum());
    Ok(Standing { level, spent })
}

/// The account's successful purchases of the last 30 days (the latest
/// [`PREVIEW_PURCHASES`]).
async fn last_month(store: &dyn Store, account: AccountId) -> OpsResult<Vec<Transaction>> {
    Ok(store
        .transactions(TxFilter {
            account_id: Some(account),
            status: Some(TxStatus::Successful),
            created_from: Some(rfc3339(now_ms() - MONTH_MS)),
            limit: PREVIEW_PURCHASES,
            ..TxFilter::default()
        })
        .await?)
}

/// Why `standing` does not meet `offer`'s conditions, in words.
fn unmet(offer: &TierOffer, standing: &Standing) -> Option<String> {
    if let Some(level) = offer.min_kyc_level
        && standing.level < level
    {
        return Some(format!(
            "Needs identity level {level}: verify your identity first (you are at level {}).",
            standing.level
        ));
    }
    if let Some(spend) = offer.min_monthly_spend
        && standing.spent < spend
    {
        return Some(format!(
            "Needs {} spent over the last 30 days (you spent {}).",
            Naira(spend),
            Naira(standing.spent)
        ));
    }
    None
}

/// Every offer with what it would have saved `account` over its last 30
/// days' successful purchases, and whether it may buy it now.
pub async fn offers_for(
    store: &dyn Store,
    book: &PriceBook,
    account: AccountId,
) -> OpsResult<Vec<Offered>> {
    let offers = store.tier_offers().await?;
    let standing = standing(store, account).await?;
    let recent = last_month(store, account).await?;
    let on = book.accounts.get(&account).map(String::as_str);
    let empty = Tier::default();
    Ok(offers
        .into_iter()
        .map(|offer| {
            let tier = book.tiers.get(&offer.tier).unwrap_or(&empty);
            Offered {
                current: on == Some(offer.tier.as_str()),
                unmet: unmet(&offer, &standing),
                savings: savings(tier, &recent),
                purchases: recent.len(),
                offer,
            }
        })
        .collect())
}

/// What `purchases` would have cost less at `tier`: each repriced from its
/// face value as it would be placed now.
pub fn savings(tier: &Tier, purchases: &[Transaction]) -> Kobo {
    Kobo(
        purchases
            .iter()
            .filter_map(|tx| Some(tx.amount.0 - repriced(tier, tx)?.0))
            .sum(),
    )
}

/// `tx`'s price at `tier`; `None` when its units cannot be told.
fn repriced(tier: &Tier, tx: &Transaction) -> Option<Kobo> {
    let quantity = tx.details.quantity.unwrap_or(1);
    let unit = Kobo(tx.face_value.0.checked_div(quantity)?);
    let plan = match tx.product {
        Product::Epin => Some(denomination_key(unit)),
        _ => tx.plan_id.clone(),
    };
    let item = Priced {
        product: tx.product,
        provider: &tx.provider,
        plan: plan.as_deref(),
        unit,
        quantity: u32::try_from(quantity).ok()?,
    };
    tier.price(item).ok()
}

/// Why an upgrade was not bought; each says what to do, as a person reads it.
#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    #[error("{0} is not on offer: see the upgrades on offer.")]
    NoOffer(String),
    #[error("You are on {0} already: nothing was charged.")]
    AlreadyOn(String),
    #[error("{0}")]
    Unmet(String),
    #[error("Your wallet has too little for the {} fee: fund it first.", Naira(*.0))]
    InsufficientBalance(Kobo),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<OpsError> for UpgradeError {
    fn from(e: OpsError) -> Self {
        match e {
            OpsError::Store(e) => UpgradeError::Store(e),
            other => UpgradeError::Store(StoreError::Invalid(other.to_string())),
        }
    }
}

/// An upgrade bought, or found bought by its reference.
#[derive(Debug, Clone)]
pub struct Bought {
    pub upgrade: Upgrade,
    pub balance: Kobo,
    /// The reference had bought it already: nothing charged now.
    pub repeated: bool,
}

/// `account` buys the offer of `tier` with its wallet, once per
/// `reference` (a repeat answers the first). The fee's debit, the upgrade
/// and the tier change (logged, actor `self`) are one transaction. It
/// answers once every node's price book has seen the change
/// ([`RECHECK`]), so the next purchase anywhere is priced at the new tier.
pub async fn buy(
    store: &dyn Store,
    account: AccountId,
    tier: &str,
    reference: &Reference,
) -> Result<Bought, UpgradeError> {
    let reference = reference.to_string();
    let earlier = store.upgrades_of(account).await?;
    if let Some(upgrade) = earlier.into_iter().find(|u| u.reference == reference) {
        let balance = store.balance(account).await?;
        return Ok(Bought {
            upgrade,
            balance,
            repeated: true,
        });
    }
    let offers = store.tier_offers().await?;
    let offer = offers
        .iter()
        .find(|o| o.tier == tier)
        .ok_or_else(|| UpgradeError::NoOffer(tier.to_owned()))?;
    let standing = standing(store, account).await?;
    if let Some(why) = unmet(offer, &standing) {
        return Err(UpgradeError::Unmet(why));
    }
    let line = NewLogEntry {
        actor: SELF.into(),
        action: "pricing.account_tier".into(),
        subject: account.to_string(),
        after: Some(tier.to_owned()),
        reason: Some(format!("upgrade bought, reference {reference}")),
        ..NewLogEntry::default()
    };
    let input = (account, tier.to_owned(), reference, line);
    let outcome = store
        .write(input, |tx, (account, tier, reference, line)| {
            Box::pin(async move {
                let outcome = work::buy_upgrade(tx, *account, tier, reference).await?;
                if let UpgradeOutcome::Bought { .. } = outcome {
                    work::set_account_tier_logged(tx, *account, Some(tier), line).await?;
                }
                Ok(outcome)
            })
        })
        .await;
    let bought = match outcome {
        Ok(UpgradeOutcome::Bought { upgrade, balance }) => Bought {
            upgrade,
            balance,
            repeated: false,
        },
        Ok(UpgradeOutcome::Repeated { upgrade, balance }) => {
            return Ok(Bought {
                upgrade,
                balance,
                repeated: true,
            });
        }
        Ok(UpgradeOutcome::NoOffer) => return Err(UpgradeError::NoOffer(tier.to_owned())),
        Ok(UpgradeOutcome::AlreadyOn) => return Err(UpgradeError::AlreadyOn(tier.to_owned())),
        Err(StoreError::Refused(Refusal::InsufficientBalance)) => {
            return Err(UpgradeError::InsufficientBalance(offer.fee));
        }
        Err(e) => return Err(e.into()),
    };
    tracing::info!(%account, tier, fee = %bought.upgrade.fee, "upgrade bought");
    // Every node rechecks its price book at most `RECHECK` after it last
    // did: past that, none prices this account at its old tier.
    tokio::time::sleep(RECHECK + std::time::Duration::from_millis(20)).await;
    Ok(bought)
}

/// The owner moves `account` back to list prices; with `refund`, the fee of
/// the upgrade that put it on its tier is given back (once). Logged with
/// the reason; answers the refund's credit, if any.
pub async fn downgrade(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    refund: bool,
    reason: Option<&str>,
) -> OpsResult<Option<Credit>> {
    actor.require(Permission::ChangeCatalogue)?;
    if refund {
        actor.require(Permission::MoveMoney)?;
    }
    let reason = reason_of(reason)?;
    let mut tier_line = actor.log("pricing.account_tier", account.to_string());
    tier_line.after = Some(DEFAULT_TIER.to_owned());
    tier_line.reason = Some(reason.clone());
    let mut refund_line = actor.log("wallet.upgrade_refund", account.to_string());
    refund_line.reason = Some(reason);
    let input = (account, refund, tier_line, refund_line);
    let credit = store
        .write(input, |tx, (account, refund, tier_line, refund_line)| {
            Box::pin(async move {
                let upgrade = work::refundable_upgrade(tx, *account).await?;
                work::set_account_tier_logged(tx, *account, None, tier_line).await?;
                match upgrade {
                    Some(upgrade) if *refund => {
                        let mut line = refund_line.clone();
                        line.after = Some(format!(
                            "refund of upgrade {} ({})",
                            upgrade.id, upgrade.tier
                        ));
                        work::refund_upgrade_logged(tx, &upgrade, &line).await
                    }
                    _ => Ok(None),
                }
            })
        })
        .await
        .map_err(|e| match e {
            StoreError::NotFound(what) => OpsError::NotFound(format!("no such {what}")),
            other => other.into(),
        })?;
    tracing::info!(%actor, %account, refund, refunded = credit.is_some(), "account downgraded");
    Ok(credit)
}
