//! Referrals (issue 49; docs/referrals.md): the owner's commission per
//! product and the programme's settings ([`set_rate`], [`set_settings`]:
//! `billpay referrals set`, the console), voiding a referral ([`void`]), a
//! customer's page of it ([`overview`]: the dashboard's referrals page and
//! `GET /v1/referrals`) and moving the bonus balance to the wallet
//! ([`withdraw`]: the page's form and `POST /v1/referrals/withdraw`).
//!
//! The money is the store's: a commission is earned in the finalize that
//! makes the referee's purchase successful and taken back by its reversal
//! (`areas/referrals.rs`); a move is one unit of work (`work::withdraw_bonus`).

use crate::{Actor, OpsResult, Permission, invalid, reason_of};
use billpay_domain::{AccountId, Kobo, Naira, Product, Reference};
use billpay_store::{
    BonusEntry, Referral, ReferralRate, ReferralSettings, ReferralTotals, Store, StoreError,
    Withdrawal, referral_rate_described, referral_settings_described, work,
};

/// The path of the sign-up link a code is shared by (`?ref=CODE` appended).
pub const SIGNUP_PATH: &str = "/dashboard/signup";
/// The most bonus entries a customer's page shows.
pub const HISTORY: u32 = 50;
/// The most a commission may be: 100 %.
const MAX_BASIS_POINTS: i64 = 10_000;

/// A percent as typed (`1.5`, `1.50 %`): hundredths of a percent, more than
/// 0 and at most 100, at most 2 decimals.
pub fn basis_points(typed: &str) -> OpsResult<i64> {
    let text = typed.trim().trim_end_matches('%').trim();
    let refused = || {
        invalid(
            &["percent"],
            format!(
                "must be a percent more than 0 and at most 100, with at most 2 decimals (not {typed})"
            ),
        )
    };
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole)
        || (!fraction.is_empty() && !digits(fraction))
        || fraction.len() > 2
        || whole.len() > 3
    {
        return Err(refused());
    }
    let whole: i64 = whole.parse().map_err(|_| refused())?;
    let fraction: i64 = format!("{fraction:0<2}").parse().map_err(|_| refused())?;
    let points = whole * 100 + fraction;
    if points <= 0 || points > MAX_BASIS_POINTS {
        return Err(refused());
    }
    Ok(points)
}

/// Sets the commission on `product` (`percent` as typed, optionally only
/// for `days` after the referee's sign-up), or removes it (`percent`
/// `None`). Logged `referrals.rate`.
pub async fn set_rate(
    store: &dyn Store,
    actor: Actor,
    product: Product,
    percent: Option<&str>,
    days: Option<i64>,
) -> OpsResult<Option<ReferralRate>> {
    actor.require(Permission::ChangeCatalogue)?;
    let rate = percent.map(basis_points).transpose()?;
    if days.is_some_and(|d| !(1..=3650).contains(&d)) {
        return Err(invalid(&["days"], "must be 1 to 3650"));
    }
    let mut log = actor.log("referrals.rate", product.service());
    let after = rate.map(|basis_points| ReferralRate {
        product,
        basis_points,
        days,
        updated_at: String::new(),
    });
    log.after = Some(referral_rate_described(after.as_ref()));
    let input = (product, rate.map(|r| (r, days)), log);
    store
        .write(input, |tx, (product, rate, log)| {
            Box::pin(work::set_referral_rate_logged(tx, *product, *rate, log))
        })
        .await?;
    tracing::info!(%actor, product = product.service(), ?rate, ?days, "referral rate set");
    Ok(store
        .referral_rates()
        .await?
        .into_iter()
        .find(|r| r.product == product))
}

/// Replaces the first-funding bonus and the least a move may be (Naira as
/// typed; a blank bonus: none). Logged `referrals.settings`.
pub async fn set_settings(
    store: &dyn Store,
    actor: Actor,
    first_funding_bonus: Option<&str>,
    min_withdrawal: Option<&str>,
) -> OpsResult<ReferralSettings> {
    actor.require(Permission::ChangeCatalogue)?;
    let naira = |field: &'static [&'static str], text: &str| {
        Kobo::parse_typed_naira(text)
            .map_err(|_| invalid(field, format!("must be an amount in Naira (not {text})")))
    };
    let mut settings = store.referral_settings().await?;
    if let Some(bonus) = first_funding_bonus.map(str::trim) {
        settings.first_funding_bonus = match bonus {
            "" | "none" => None,
            typed => Some(naira(&["first_funding_bonus"], typed)?),
        };
    }
    if let Some(minimum) = min_withdrawal {
        settings.min_withdrawal = naira(&["min_withdrawal"], minimum)?;
    }
    if settings
        .first_funding_bonus
        .is_some_and(|b| b <= Kobo::ZERO)
    {
        return Err(invalid(
            &["first_funding_bonus"],
            "must be more than 0, or none",
        ));
    }
    let mut log = actor.log("referrals.settings", "referrals");
    log.after = Some(referral_settings_described(&settings));
    store
        .write((settings.clone(), log), |tx, (settings, log)| {
            Box::pin(work::set_referral_settings_logged(tx, settings, log))
        })
        .await?;
    tracing::info!(%actor, "referral settings set");
    Ok(settings)
}

/// Voids the referral of `referee` (it earns nothing from now on; what it
/// earned stays), with the owner's reason. Logged `referrals.void`.
pub async fn void(
    store: &dyn Store,
    actor: Actor,
    referee: AccountId,
    reason: Option<&str>,
) -> OpsResult<bool> {
    actor.require(Permission::ManageAccounts)?;
    let reason = reason_of(reason)?;
    let Some(referral) = store.referral_of(referee).await? else {
        return Err(crate::OpsError::NotFound(format!(
            "account {referee} was not referred by anyone"
        )));
    };
    let mut log = actor.log("referrals.void", referee.to_string());
    log.reason = Some(reason.clone());
    log.before = Some(format!("referred by {}", referral.referrer_id));
    log.after = Some("void".into());
    let voided = store
        .write((referee, reason, log), |tx, (referee, reason, log)| {
            Box::pin(work::void_referral_logged(tx, *referee, reason, log))
        })
        .await?;
    tracing::info!(%actor, %referee, voided, "referral voided");
    Ok(voided)
}

/// A referee as the referrer sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Referee {
    /// The name masked: `Ada Obi` → `A** O**`.
    pub name: String,
    pub joined_at: String,
    /// `earning`, `no commission` (a self-referral) or `void`.
    pub state: &'static str,
    pub earned: Kobo,
}

/// A customer's referrals page.
#[derive(Debug, Clone)]
pub struct Overview {
    pub code: String,
    /// The sign-up path with the code (the caller puts its origin before it).
    pub link_path: String,
    pub totals: ReferralTotals,
    pub referees: Vec<Referee>,
    pub history: Vec<BonusEntry>,
    pub min_withdrawal: Kobo,
    /// The owner's rates (empty: the programme is off).
    pub rates: Vec<ReferralRate>,
}

/// A name with all but each word's first letter hidden.
pub fn masked(name: &str) -> String {
    let words: Vec<String> = name
        .split_whitespace()
        .map(|word| {
            let mut chars = word.chars();
            let first = chars.next().map(String::from).unwrap_or_default();
            format!("{first}{}", "*".repeat(chars.count().min(6)))
        })
        .collect();
    if words.is_empty() {
        "***".into()
    } else {
        words.join(" ")
    }
}

fn referee(referral: Referral) -> Referee {
    let state = if referral.voided_at.is_some() {
        "void"
    } else if referral.matched.is_some() {
        "no commission"
    } else {
        "earning"
    };
    Referee {
        name: masked(&referral.referee_name),
        joined_at: referral.created_at,
        state,
        earned: referral.earned,
    }
}

/// The customer's code (made on first view), link, totals, referees and
/// bonus history.
pub async fn overview(store: &dyn Store, account: AccountId) -> Result<Overview, StoreError> {
    let code = match store.referral_code_of(account).await? {
        Some(code) => code,
        None => {
            store
                .write(account, |tx, account| {
                    Box::pin(work::ensure_referral_code(tx, *account))
                })
                .await?
        }
    };
    Ok(Overview {
        link_path: format!("{SIGNUP_PATH}?ref={code}"),
        code,
        totals: store.referral_totals(account).await?,
        referees: store
            .referees_of(account)
            .await?
            .into_iter()
            .map(referee)
            .collect(),
        history: store.bonus_entries(account, HISTORY).await?,
        min_withdrawal: store.referral_settings().await?.min_withdrawal,
        rates: store.referral_rates().await?,
    })
}

/// Why a move of the bonus balance was refused.
#[derive(Debug, thiserror::Error)]
pub enum WithdrawError {
    #[error("amount must be more than ₦0.00")]
    NotPositive,
    #[error("amount must be at least {}, the least a move may be", Naira(*.0))]
    BelowMinimum(Kobo),
    #[error("amount is more than your bonus balance of {}", Naira(*.0))]
    MoreThanBalance(Kobo),
    #[error(
        "reference was used for a move of {} already: a move with another amount needs a new reference",
        Naira(*.0)
    )]
    OtherAmount(Kobo),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A move done, or found done by its reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    pub amount: Kobo,
    pub reference: String,
    pub bonus_balance: Kobo,
    pub wallet_balance: Kobo,
    /// `true`: this reference had moved it already, nothing moved now.
    pub repeated: bool,
}

/// Moves `amount` of the bonus balance to the wallet, once per `reference`.
pub async fn withdraw(
    store: &dyn Store,
    account: AccountId,
    amount: Kobo,
    reference: &Reference,
) -> Result<Moved, WithdrawError> {
    if amount.0 <= 0 {
        return Err(WithdrawError::NotPositive);
    }
    let reference = reference.to_string();
    let input = (account, amount, reference.clone());
    let outcome = store
        .write(input, |tx, (account, amount, reference)| {
            Box::pin(work::withdraw_bonus(tx, *account, *amount, reference))
        })
        .await?;
    let moved = |bonus, wallet, repeated| Moved {
        amount,
        reference: reference.clone(),
        bonus_balance: bonus,
        wallet_balance: wallet,
        repeated,
    };
    match outcome {
        Withdrawal::Moved { bonus, wallet } => {
            tracing::info!(%account, %amount, "bonus moved to the wallet");
            Ok(moved(bonus, wallet, false))
        }
        Withdrawal::Repeated { bonus, wallet } => Ok(moved(bonus, wallet, true)),
        Withdrawal::OtherAmount { moved } => Err(WithdrawError::OtherAmount(moved)),
        Withdrawal::BelowMinimum { minimum } => Err(WithdrawError::BelowMinimum(minimum)),
        Withdrawal::MoreThanBalance { balance } => Err(WithdrawError::MoreThanBalance(balance)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percent_is_read_to_the_hundredth() {
        assert_eq!(basis_points("1.5").unwrap(), 150);
        assert_eq!(basis_points(" 2.25 %").unwrap(), 225);
        assert_eq!(basis_points("100").unwrap(), 10_000);
        for refused in ["0", "0.001", "100.01", "-1", "abc", "", "1e2"] {
            assert!(basis_points(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn a_name_is_masked_to_its_initials() {
        assert_eq!(masked("Ada Obi"), "A** O**");
        assert_eq!(masked("  "), "***");
    }
}
