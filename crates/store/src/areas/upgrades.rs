//! Self-service upgrades (issue 49): the owner's offers of a price tier for
//! a one-time fee, and each upgrade bought — its fee a ledger entry (a
//! `debit` whose source is [`CreditSource::Upgrade`] and whose reference is
//! the customer's), written in one transaction with its row here and the
//! account's tier change (`work::buy_upgrade`, then
//! `work::set_account_tier_logged`). docs/pricing.md, "Upgrades".

use super::wallet::{Entry, balance_locked, post_ledger};
use crate::clock::now_rfc3339;
use crate::db::{Param, ReadTx, RowRead, Tx, col, for_both_engines};
use crate::*;
use billpay_domain::pricing::DEFAULT_TIER;
use billpay_domain::{AccountId, Kobo, Naira};
use serde::Serialize;

/// A tier on offer: its fee and the conditions a buyer must meet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TierOffer {
    pub tier: String,
    pub fee: Kobo,
    /// The KYC level a buyer needs (0–2); `None`: any.
    pub min_kyc_level: Option<u8>,
    /// What a buyer must have spent on successful purchases over the last
    /// 30 days; `None`: nothing.
    pub min_monthly_spend: Option<Kobo>,
    pub updated_at: String,
}

/// An upgrade bought.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Upgrade {
    pub id: i64,
    pub account_id: AccountId,
    pub reference: String,
    pub tier: String,
    pub tier_before: String,
    pub fee: Kobo,
    pub created_at: String,
    /// When the owner gave the fee back (a downgrade with a refund).
    pub refunded_at: Option<String>,
}

/// What buying an upgrade did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpgradeOutcome {
    /// Charged now; the caller changes the tier in the same transaction.
    Bought { upgrade: Upgrade, balance: Kobo },
    /// This reference bought it already: nothing charged again.
    Repeated { upgrade: Upgrade, balance: Kobo },
    /// The tier is not on offer (any more).
    NoOffer,
    /// The account is on that tier already: nothing charged.
    AlreadyOn,
}

/// The upgrade fees and their refunds in a range of the ledger.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpgradeTotals {
    pub upgrades: u64,
    /// What the fees took, before refunds.
    pub fees: Kobo,
    /// What the owner gave back on downgrades.
    pub refunded: Kobo,
}

for_both_engines! {
    /// Self-service upgrades (`areas/upgrades.rs`).
    pub trait UpgradeStore {
        /// Every tier on offer, by name.
        fn tier_offers() -> Vec<TierOffer> = read |tx| offers(tx);
        /// An account's upgrades, newest first.
        fn upgrades_of(account: AccountId) -> Vec<Upgrade> = read |tx| upgrades_of(tx, account);
        /// Upgrades bought in `[from, until)` (RFC 3339 bounds, as `sales`):
        /// how many, their fees, and what of them the owner gave back.
        fn upgrade_totals(from: &str, until: &str) -> UpgradeTotals
            = read |tx| totals(tx, &from, &until);
    }
}

const OFFER_COLUMNS: &str = "tier, fee, min_kyc_level, min_monthly_spend, updated_at";
const UPGRADE_COLUMNS: &str =
    "id, account_id, reference, tier, tier_before, fee, created_at, refunded_at";

fn offer_row(row: &dyn RowRead) -> StoreResult<TierOffer> {
    const COLUMNS: &str = OFFER_COLUMNS;
    let level: Option<i64> = row.get(col!("min_kyc_level"))?;
    let spend: Option<i64> = row.get(col!("min_monthly_spend"))?;
    Ok(TierOffer {
        tier: row.get(col!("tier"))?,
        fee: Kobo(row.get(col!("fee"))?),
        min_kyc_level: level.and_then(|l| u8::try_from(l).ok()),
        min_monthly_spend: spend.map(Kobo),
        updated_at: row.get(col!("updated_at"))?,
    })
}

fn upgrade_row(row: &dyn RowRead) -> StoreResult<Upgrade> {
    const COLUMNS: &str = UPGRADE_COLUMNS;
    Ok(Upgrade {
        id: row.get(col!("id"))?,
        account_id: row.parsed(col!("account_id"))?,
        reference: row.get(col!("reference"))?,
        tier: row.get(col!("tier"))?,
        tier_before: row.get(col!("tier_before"))?,
        fee: Kobo(row.get(col!("fee"))?),
        created_at: row.get(col!("created_at"))?,
        refunded_at: row.get(col!("refunded_at"))?,
    })
}

async fn offers<T: ReadTx>(tx: &T) -> Result<Vec<TierOffer>, T::Error> {
    let sql = format!("SELECT {OFFER_COLUMNS} FROM tier_offers ORDER BY fee, tier");
    tx.query_all(&sql, &[], offer_row).await
}

async fn offer<T: Tx>(tx: &T, tier: &str) -> Result<Option<TierOffer>, T::Error> {
    let sql = format!("SELECT {OFFER_COLUMNS} FROM tier_offers WHERE tier = ?1");
    tx.query_opt(&sql, &[&tier], offer_row).await
}

/// Offers `offer.tier` (replacing its offer); the line's `before` is the
/// offer before (`none`). The tier must exist and not be `default`.
pub(crate) async fn set_offer<T: Tx>(
    tx: &T,
    offer: &TierOffer,
    log: &NewLogEntry,
) -> Result<(), T::Error> {
    let before = self::offer(tx, &offer.tier).await?;
    let sql = "SELECT EXISTS(SELECT 1 FROM price_tiers WHERE name = ?1) AS found";
    const COLUMNS: &str = "found";
    let found: bool = tx
        .query_one(sql, &[&offer.tier], |row| row.get(col!("found")))
        .await?;
    if !found || offer.tier == DEFAULT_TIER {
        return Err(crate::rules::no_such_tier(&offer.tier).into());
    }
    let sql = "INSERT INTO tier_offers (tier, fee, min_kyc_level, min_monthly_spend, updated_at)
               VALUES (?1, ?2, ?3, ?4, ?5)
               ON CONFLICT (tier) DO UPDATE SET fee = excluded.fee,
                   min_kyc_level = excluded.min_kyc_level,
                   min_monthly_spend = excluded.min_monthly_spend,
                   updated_at = excluded.updated_at";
    let params: [&dyn Param; 5] = [
        &offer.tier,
        &offer.fee.0,
        &offer.min_kyc_level.map(i64::from),
        &offer.min_monthly_spend.map(|k| k.0),
        &now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    let before = before.map_or_else(|| "none".to_owned(), |o| described(&o));
    super::operators::append(tx, &log.clone().with_before(&before)).await
}

/// Withdraws the offer of `tier` (upgrades bought stay); `false` and no
/// line when there was none.
pub(crate) async fn remove_offer<T: Tx>(
    tx: &T,
    tier: &str,
    log: &NewLogEntry,
) -> Result<bool, T::Error> {
    let Some(before) = offer(tx, tier).await? else {
        return Ok(false);
    };
    tx.execute("DELETE FROM tier_offers WHERE tier = ?1", &[&tier])
        .await?;
    super::operators::append(tx, &log.clone().with_before(&described(&before))).await?;
    Ok(true)
}

/// An offer as the operator log says it: `fee ₦5,000.00, KYC level 1, 30-day spend ₦20,000.00`.
pub fn described(offer: &TierOffer) -> String {
    let mut text = format!("fee {}", Naira(offer.fee));
    if let Some(level) = offer.min_kyc_level {
        text.push_str(&format!(", KYC level {level}"));
    }
    if let Some(spend) = offer.min_monthly_spend {
        text.push_str(&format!(", 30-day spend {}", Naira(spend)));
    }
    text
}

async fn upgrades_of<T: ReadTx>(tx: &T, account: AccountId) -> Result<Vec<Upgrade>, T::Error> {
    let sql = format!(
        "SELECT {UPGRADE_COLUMNS} FROM tier_upgrades WHERE account_id = ?1 ORDER BY id DESC"
    );
    tx.query_all(&sql, &[&account.to_string()], upgrade_row)
        .await
}

async fn by_reference<T: Tx>(
    tx: &T,
    account: AccountId,
    reference: &str,
) -> Result<Option<Upgrade>, T::Error> {
    let sql = format!(
        "SELECT {UPGRADE_COLUMNS} FROM tier_upgrades WHERE account_id = ?1 AND reference = ?2"
    );
    tx.query_opt(&sql, &[&account.to_string(), &reference], upgrade_row)
        .await
}

/// The tier `account` is on now (`default`: list prices).
async fn tier_now<T: Tx>(tx: &T, account: AccountId) -> Result<String, T::Error> {
    const COLUMNS: &str = "tier";
    let sql = "SELECT tier FROM account_tiers WHERE account_id = ?1";
    let tier: Option<String> = tx
        .query_opt(sql, &[&account.to_string()], |row| row.get(col!("tier")))
        .await?;
    Ok(tier.unwrap_or_else(|| DEFAULT_TIER.to_owned()))
}

/// Buys the offer of `tier` for `account` once per `reference`: under the
/// wallet's row lock (so upgrades of one account take turns, on any node)
/// a repeated reference answers the first upgrade, an account on the tier
/// already or a tier not on offer is charged nothing, else the offer's fee
/// is debited (refused below zero) and the upgrade recorded. The caller
/// changes the account's tier in the same transaction.
pub(crate) async fn buy<T: Tx>(
    tx: &T,
    account: AccountId,
    tier: &str,
    reference: &str,
) -> Result<UpgradeOutcome, T::Error> {
    let balance = balance_locked(tx, account).await?;
    if let Some(upgrade) = by_reference(tx, account, reference).await? {
        return Ok(UpgradeOutcome::Repeated { upgrade, balance });
    }
    let Some(offer) = offer(tx, tier).await? else {
        return Ok(UpgradeOutcome::NoOffer);
    };
    let tier_before = tier_now(tx, account).await?;
    if tier_before == tier {
        return Ok(UpgradeOutcome::AlreadyOn);
    }
    let moved = Kobo(-offer.fee.0);
    let balance = post_ledger(tx, account, moved, Entry::UpgradeFee(reference)).await?;
    let sql =
        "INSERT INTO tier_upgrades (account_id, reference, tier, tier_before, fee, created_at)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    let params: [&dyn Param; 6] = [
        &account.to_string(),
        &reference,
        &tier,
        &tier_before,
        &offer.fee.0,
        &now_rfc3339(),
    ];
    tx.execute(sql, &params).await?;
    let upgrade = by_reference(tx, account, reference)
        .await?
        .ok_or(StoreError::NotFound("upgrade"))?;
    told(tx, &upgrade, balance).await?;
    Ok(UpgradeOutcome::Bought { upgrade, balance })
}

/// The customer's notice of an upgrade bought, in its transaction (once:
/// its cause is the upgrade).
async fn told<T: Tx>(tx: &T, upgrade: &Upgrade, balance: Kobo) -> Result<(), T::Error> {
    let data = serde_json::json!({
        "tier": upgrade.tier,
        "fee": upgrade.fee.0,
        "balance": balance.0,
    });
    let cause = format!("upgrade:{}", upgrade.id);
    let owner = super::notices::Owner::Account(upgrade.account_id);
    super::notices::for_account(
        tx,
        owner,
        NoticeTopic::Security,
        UPGRADE_BOUGHT,
        &cause,
        &data,
    )
    .await
}

/// The notice kind of an upgrade bought.
pub const UPGRADE_BOUGHT: &str = "upgrade_bought";

/// The upgrade that put `account` on the tier it is on now, if it bought
/// it and its fee was not given back.
pub(crate) async fn refundable<T: Tx>(
    tx: &T,
    account: AccountId,
) -> Result<Option<Upgrade>, T::Error> {
    let tier = tier_now(tx, account).await?;
    let sql = format!(
        "SELECT {UPGRADE_COLUMNS} FROM tier_upgrades
         WHERE account_id = ?1 AND tier = ?2 AND refunded_at IS NULL ORDER BY id DESC LIMIT 1"
    );
    tx.query_opt(&sql, &[&account.to_string(), &tier], upgrade_row)
        .await
}

/// Gives `upgrade`'s fee back once: an operator's credit with the reference
/// `upgrade-refund:<id>`, the upgrade marked refunded, the line with the
/// balances. `None` when it was refunded already.
pub(crate) async fn refund<T: Tx>(
    tx: &T,
    upgrade: &Upgrade,
    log: &NewLogEntry,
) -> Result<Option<Credit>, T::Error> {
    let sql = "UPDATE tier_upgrades SET refunded_at = ?1 WHERE id = ?2 AND refunded_at IS NULL";
    if tx.execute(sql, &[&now_rfc3339(), &upgrade.id]).await? == 0 {
        return Ok(None);
    }
    let reference = refund_reference(upgrade.id);
    let credit =
        super::wallet::credit_logged(tx, upgrade.account_id, upgrade.fee, &reference, log).await?;
    Ok(Some(credit))
}

/// The operator credit's reference that gives upgrade `id`'s fee back.
pub fn refund_reference(id: i64) -> String {
    format!("upgrade-refund:{id}")
}

async fn totals<T: ReadTx>(tx: &T, from: &str, until: &str) -> Result<UpgradeTotals, T::Error> {
    const COLUMNS: &str = "upgrades, fees, refunded";
    let sql = "SELECT CAST(COUNT(*) AS BIGINT) AS upgrades,
                      CAST(COALESCE(SUM(fee), 0) AS BIGINT) AS fees,
                      CAST(COALESCE(SUM(CASE WHEN refunded_at IS NOT NULL THEN fee END), 0) AS BIGINT)
                          AS refunded
               FROM tier_upgrades WHERE created_at >= ?1 AND created_at < ?2";
    tx.query_one(sql, &[&from, &until], |row| {
        let upgrades: i64 = row.get(col!("upgrades"))?;
        Ok(UpgradeTotals {
            upgrades: u64::try_from(upgrades).unwrap_or(0),
            fees: Kobo(row.get(col!("fees"))?),
            refunded: Kobo(row.get(col!("refunded"))?),
        })
    })
    .await
}
