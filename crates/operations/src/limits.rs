//! KYC levels, limits and the blocklist (issue 32, docs/limits.md): the
//! operator's actions, each logged in the same transaction as its change.
//! The checks themselves run in the store, inside each purchase's debit.

use crate::{Actor, OpsError, OpsResult, Permission, invalid, reason_of};
use billpay_domain::recipient::recipient_key;
use billpay_domain::{AccountId, Kobo};
use billpay_store::limits::{
    AccountLimits, BlockEntry, BlockKind, Kyc, KycChange, LEVEL_NAME_MAX, LEVELS, LevelLimits,
    Limits, RuleAction,
};
use billpay_store::work;
use billpay_store::{Store, StoreError};
use serde::Deserialize;

/// A change to some limits: each field left alone (`None`), set to a
/// value, or cleared (`Some(None)`: no limit for a level, the level's for an
/// account).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitsPatch {
    pub max_purchase: Option<Option<Kobo>>,
    pub daily_value: Option<Option<Kobo>>,
    pub daily_count: Option<Option<i64>>,
    pub monthly_value: Option<Option<Kobo>>,
    pub monthly_count: Option<Option<i64>>,
    pub max_balance: Option<Option<Kobo>>,
    pub per_recipient_daily: Option<Option<Kobo>>,
    pub recipient_hourly_count: Option<Option<i64>>,
    pub account_hourly_count: Option<Option<i64>>,
    pub first_day_value: Option<Option<Kobo>>,
    /// A rule's action; cleared: refuse for a level, the level's for an account.
    pub recipient_hourly_action: Option<Option<RuleAction>>,
    pub account_hourly_action: Option<Option<RuleAction>>,
    pub first_day_action: Option<Option<RuleAction>>,
    pub over_balance_action: Option<Option<RuleAction>>,
}

/// What clears a limit when typed instead of a number.
pub const CLEAR: &str = "none";

impl LimitsPatch {
    /// `limits` with this patch applied.
    pub fn apply(&self, limits: Limits) -> Limits {
        Limits {
            max_purchase: self.max_purchase.unwrap_or(limits.max_purchase),
            daily_value: self.daily_value.unwrap_or(limits.daily_value),
            daily_count: self.daily_count.unwrap_or(limits.daily_count),
            monthly_value: self.monthly_value.unwrap_or(limits.monthly_value),
            monthly_count: self.monthly_count.unwrap_or(limits.monthly_count),
            max_balance: self.max_balance.unwrap_or(limits.max_balance),
            per_recipient_daily: self
                .per_recipient_daily
                .unwrap_or(limits.per_recipient_daily),
            recipient_hourly_count: self
                .recipient_hourly_count
                .unwrap_or(limits.recipient_hourly_count),
            account_hourly_count: self
                .account_hourly_count
                .unwrap_or(limits.account_hourly_count),
            first_day_value: self.first_day_value.unwrap_or(limits.first_day_value),
            recipient_hourly_action: self
                .recipient_hourly_action
                .unwrap_or(limits.recipient_hourly_action),
            account_hourly_action: self
                .account_hourly_action
                .unwrap_or(limits.account_hourly_action),
            first_day_action: self.first_day_action.unwrap_or(limits.first_day_action),
            over_balance_action: self
                .over_balance_action
                .unwrap_or(limits.over_balance_action),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == LimitsPatch::default()
    }
}

/// Each limit as a person types it: the one form of the console's limits
/// forms and the CLI's `limits set` flags. Naira (`50000`, `₦50,000.50`), a
/// number of purchases, or a rule's action (`refuse`, `hold`); `none` or a
/// blank clears it (no limit for a level, the level's for an account); one
/// not given is left as set.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct LimitTexts {
    /// Largest single purchase (Naira).
    #[cfg_attr(feature = "clap", arg(long))]
    pub max_purchase: Option<String>,
    /// Spent per Lagos day (Naira).
    #[cfg_attr(feature = "clap", arg(long))]
    pub daily_value: Option<String>,
    /// Purchases per Lagos day.
    #[cfg_attr(feature = "clap", arg(long))]
    pub daily_count: Option<String>,
    /// Spent over the last 30 Lagos days (Naira).
    #[cfg_attr(feature = "clap", arg(long))]
    pub monthly_value: Option<String>,
    /// Purchases over the last 30 Lagos days.
    #[cfg_attr(feature = "clap", arg(long))]
    pub monthly_count: Option<String>,
    /// Largest wallet balance (Naira): a transfer over it is still credited,
    /// and the account's purchases are held to level 0's limits until reviewed.
    #[cfg_attr(feature = "clap", arg(long))]
    pub max_balance: Option<String>,
    /// Spent on one recipient per Lagos day (Naira).
    #[cfg_attr(feature = "clap", arg(long))]
    pub per_recipient_daily: Option<String>,
    /// Velocity: purchases to one recipient per clock hour.
    #[cfg_attr(feature = "clap", arg(long))]
    pub recipient_hourly_count: Option<String>,
    /// Velocity: purchases per clock hour.
    #[cfg_attr(feature = "clap", arg(long))]
    pub account_hourly_count: Option<String>,
    /// Velocity: spent in a new account's first 24 hours after sign-up (Naira).
    #[cfg_attr(feature = "clap", arg(long))]
    pub first_day_value: Option<String>,
    /// What a purchase over --recipient-hourly-count does: refuse or hold
    /// (for an owner's review).
    #[cfg_attr(feature = "clap", arg(long))]
    pub recipient_hourly_action: Option<String>,
    /// What a purchase over --account-hourly-count does: refuse or hold.
    #[cfg_attr(feature = "clap", arg(long))]
    pub account_hourly_action: Option<String>,
    /// What a purchase over --first-day-value does: refuse or hold.
    #[cfg_attr(feature = "clap", arg(long))]
    pub first_day_action: Option<String>,
    /// What a purchase over level 0's limits does while the wallet is over
    /// its largest balance: refuse or hold.
    #[cfg_attr(feature = "clap", arg(long))]
    pub over_balance_action: Option<String>,
}

impl LimitTexts {
    /// The change they make; the first that is not a limit is refused
    /// (`Invalid`, naming its field), nothing changed.
    pub fn patch(&self) -> OpsResult<LimitsPatch> {
        fn read<T>(
            field: &'static [&'static str],
            text: &Option<String>,
            parse: fn(&'static [&'static str], &str) -> OpsResult<Option<T>>,
        ) -> OpsResult<Option<Option<T>>> {
            let typed = |t: &str| match t.trim() {
                "" => CLEAR.to_owned(),
                typed => typed.to_owned(),
            };
            text.as_deref().map(|t| parse(field, &typed(t))).transpose()
        }
        Ok(LimitsPatch {
            max_purchase: read(&["max_purchase"], &self.max_purchase, naira_limit)?,
            daily_value: read(&["daily_value"], &self.daily_value, naira_limit)?,
            daily_count: read(&["daily_count"], &self.daily_count, count_limit)?,
            monthly_value: read(&["monthly_value"], &self.monthly_value, naira_limit)?,
            monthly_count: read(&["monthly_count"], &self.monthly_count, count_limit)?,
            max_balance: read(&["max_balance"], &self.max_balance, naira_limit)?,
            per_recipient_daily: read(
                &["per_recipient_daily"],
                &self.per_recipient_daily,
                naira_limit,
            )?,
            recipient_hourly_count: read(
                &["recipient_hourly_count"],
                &self.recipient_hourly_count,
                count_limit,
            )?,
            account_hourly_count: read(
                &["account_hourly_count"],
                &self.account_hourly_count,
                count_limit,
            )?,
            first_day_value: read(&["first_day_value"], &self.first_day_value, naira_limit)?,
            recipient_hourly_action: read(
                &["recipient_hourly_action"],
                &self.recipient_hourly_action,
                action_limit,
            )?,
            account_hourly_action: read(
                &["account_hourly_action"],
                &self.account_hourly_action,
                action_limit,
            )?,
            first_day_action: read(&["first_day_action"], &self.first_day_action, action_limit)?,
            over_balance_action: read(
                &["over_balance_action"],
                &self.over_balance_action,
                action_limit,
            )?,
        })
    }

    /// Each limit given, by its field's name, as typed (a refused form drawn again).
    pub fn given(&self) -> Vec<(&'static str, String)> {
        let texts = [
            ("max_purchase", &self.max_purchase),
            ("daily_value", &self.daily_value),
            ("daily_count", &self.daily_count),
            ("monthly_value", &self.monthly_value),
            ("monthly_count", &self.monthly_count),
            ("max_balance", &self.max_balance),
            ("per_recipient_daily", &self.per_recipient_daily),
            ("recipient_hourly_count", &self.recipient_hourly_count),
            ("account_hourly_count", &self.account_hourly_count),
            ("first_day_value", &self.first_day_value),
            ("recipient_hourly_action", &self.recipient_hourly_action),
            ("account_hourly_action", &self.account_hourly_action),
            ("first_day_action", &self.first_day_action),
            ("over_balance_action", &self.over_balance_action),
        ];
        texts
            .into_iter()
            .filter_map(|(field, text)| Some((field, text.clone()?)))
            .collect()
    }
}

/// A value in Naira as a person types it (`5000`, `5000.50`, `₦50,000`) or
/// [`CLEAR`], for the field `field`.
pub fn naira_limit(field: &'static [&'static str], text: &str) -> OpsResult<Option<Kobo>> {
    let text = text.trim();
    if text.eq_ignore_ascii_case(CLEAR) {
        return Ok(None);
    }
    match Kobo::parse_typed_naira(text) {
        Ok(kobo) if kobo.0 > 0 => Ok(Some(kobo)),
        _ => Err(invalid(
            field,
            format!("must be an amount in Naira above 0 (such as 5000 or 5000.50) or {CLEAR}"),
        )),
    }
}

/// A number of purchases or [`CLEAR`], for the field `field`.
pub fn count_limit(field: &'static [&'static str], text: &str) -> OpsResult<Option<i64>> {
    let text = text.trim();
    if text.eq_ignore_ascii_case(CLEAR) {
        return Ok(None);
    }
    match text.parse::<i64>() {
        Ok(count) if count > 0 => Ok(Some(count)),
        _ => Err(invalid(
            field,
            format!("must be a whole number of purchases above 0 or {CLEAR}"),
        )),
    }
}

/// A rule's action as typed: `refuse`, `hold`, or [`CLEAR`], for the field `field`.
pub fn action_limit(field: &'static [&'static str], text: &str) -> OpsResult<Option<RuleAction>> {
    let text = text.trim();
    if text.eq_ignore_ascii_case(CLEAR) {
        return Ok(None);
    }
    RuleAction::parse(&text.to_ascii_lowercase())
        .map(Some)
        .ok_or_else(|| invalid(field, format!("must be refuse, hold or {CLEAR}")))
}

/// A KYC level as typed: 0, 1 or 2.
pub fn level_of(text: &str) -> OpsResult<u8> {
    match text.trim().parse::<u8>() {
        Ok(level) if LEVELS.contains(&level) => Ok(level),
        _ => Err(invalid(&["level"], "must be 0, 1 or 2")),
    }
}

/// Every level and its limits.
pub async fn levels(store: &dyn Store, actor: &Actor) -> OpsResult<Vec<LevelLimits>> {
    actor.require(Permission::Read)?;
    Ok(store.level_limits().await?)
}

/// An account's level, limits and usage.
pub async fn account(
    store: &dyn Store,
    actor: &Actor,
    account: AccountId,
) -> OpsResult<AccountLimits> {
    actor.require(Permission::Read)?;
    store.account_limits(account).await.map_err(not_found)
}

fn not_found(e: StoreError) -> OpsError {
    match e {
        StoreError::NotFound(what) => OpsError::NotFound(format!("{what} not found")),
        other => other.into(),
    }
}

/// How a level was verified, when it was not an operator's judgement alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verified {
    /// Approved by an operator (documents seen outside billpay).
    Operator,
    Bvn,
    Nin,
}

impl Verified {
    pub fn parse(text: &str) -> OpsResult<Verified> {
        match text.trim().to_ascii_lowercase().as_str() {
            "operator" => Ok(Verified::Operator),
            "bvn" => Ok(Verified::Bvn),
            "nin" => Ok(Verified::Nin),
            _ => Err(invalid(&["method"], "must be operator, bvn or nin")),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Verified::Operator => "operator",
            Verified::Bvn => "bvn",
            Verified::Nin => "nin",
        }
    }
}

/// Sets an account's level (owner or CLI) with a reason. `number`: the BVN
/// or NIN that was verified, if any; only its last 4 digits are kept (the
/// full number is never stored, logged or printed).
pub async fn set_level(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    level: u8,
    method: Verified,
    number: Option<&str>,
    reason: &str,
) -> OpsResult<Kyc> {
    actor.require(Permission::ManageAccounts)?;
    if !LEVELS.contains(&level) {
        return Err(invalid(&["level"], "must be 0, 1 or 2"));
    }
    let reason = reason_of(Some(reason))?;
    let last4 = match (method, number) {
        (Verified::Operator, _) => None,
        (_, Some(number)) => Some(last4_of(number)?),
        (_, None) => return Err(invalid(&["number"], "the BVN or NIN verified is needed")),
    };
    let mut log = actor.log("account.kyc_level", account.to_string());
    log.after = Some(match &last4 {
        Some(last4) => format!("level {level} ({} ending {last4})", method.as_str()),
        None => format!("level {level}"),
    });
    log.reason = Some(reason.clone());
    let change = KycChange {
        level,
        method: method.as_str().to_owned(),
        last4,
        reason,
        set_by: actor.to_string(),
    };
    let kyc = store
        .write((account, change, log), |tx, (account, change, log)| {
            Box::pin(work::set_kyc_logged(tx, *account, change, log))
        })
        .await
        .map_err(not_found)?;
    tracing::info!(%actor, %account, level, "KYC level set");
    Ok(kyc)
}

/// The last 4 digits of an 11-digit BVN or NIN.
fn last4_of(number: &str) -> OpsResult<String> {
    let digits = number.trim();
    if digits.len() != 11 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(
            &["number"],
            "must be the 11 digits of a BVN or NIN",
        ));
    }
    Ok(digits[7..].to_owned())
}

/// Changes a level's limits.
pub async fn set_level_limits(
    store: &dyn Store,
    actor: Actor,
    level: u8,
    patch: LimitsPatch,
) -> OpsResult<LevelLimits> {
    actor.require(Permission::ManageAccounts)?;
    let levels = store.level_limits().await?;
    let current = levels
        .iter()
        .find(|l| l.level == level)
        .ok_or_else(|| invalid(&["level"], "must be 0, 1 or 2"))?;
    let limits = patch.apply(current.limits);
    let mut log = actor.log("limits.level", format!("level {level}"));
    log.before = Some(describe(&current.limits));
    log.after = Some(describe(&limits));
    let changed = store
        .write((level, limits, log), |tx, (level, limits, log)| {
            Box::pin(work::set_level_limits_logged(tx, *level, limits, log))
        })
        .await?;
    tracing::info!(%actor, level, "level limits set");
    Ok(changed)
}

/// Renames a level (owner or CLI): the name as typed, trimmed, 1 to
/// [`LEVEL_NAME_MAX`] characters; logged (`limits.level_name`, the old name
/// before) in the same transaction.
pub async fn rename_level(
    store: &dyn Store,
    actor: Actor,
    level: u8,
    name: &str,
) -> OpsResult<LevelLimits> {
    actor.require(Permission::ManageAccounts)?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > LEVEL_NAME_MAX {
        return Err(invalid(
            &["name"],
            format!("must be 1 to {LEVEL_NAME_MAX} characters"),
        ));
    }
    let mut log = actor.log("limits.level_name", format!("level {level}"));
    log.after = Some(name.to_owned());
    let renamed = store
        .write((level, name.to_owned(), log), |tx, (level, name, log)| {
            Box::pin(work::rename_level_logged(tx, *level, name, log))
        })
        .await
        .map_err(not_found)?;
    tracing::info!(%actor, level, "level renamed");
    Ok(renamed)
}

/// Changes an account's own limits (cleared: its level's).
pub async fn set_account_limits(
    store: &dyn Store,
    actor: Actor,
    account: AccountId,
    patch: LimitsPatch,
) -> OpsResult<AccountLimits> {
    actor.require(Permission::ManageAccounts)?;
    let current = store.account_limits(account).await.map_err(not_found)?;
    let limits = patch.apply(current.overrides);
    let mut log = actor.log("limits.account", account.to_string());
    log.before = Some(describe(&current.overrides));
    log.after = Some(describe(&limits));
    let changed = store
        .write((account, limits, log), |tx, (account, limits, log)| {
            Box::pin(work::set_account_limits_logged(tx, *account, limits, log))
        })
        .await?;
    tracing::info!(%actor, %account, "account limits set");
    Ok(changed)
}

/// Limits in words, for the operator log: `max purchase 10000.00, daily count 20…`.
pub fn describe(limits: &Limits) -> String {
    let naira = |k: Option<Kobo>| k.map_or_else(|| CLEAR.to_owned(), |k| k.to_string());
    let count = |c: Option<i64>| c.map_or_else(|| CLEAR.to_owned(), |c| c.to_string());
    let action = |a: Option<RuleAction>| a.map_or(CLEAR, RuleAction::as_str);
    format!(
        "max purchase {}, daily value {}, daily count {}, 30-day value {}, 30-day count {}, max balance {} ({} over it), per recipient daily {}, per recipient hourly count {} ({}), hourly count {} ({}), first-day value {} ({})",
        naira(limits.max_purchase),
        naira(limits.daily_value),
        count(limits.daily_count),
        naira(limits.monthly_value),
        count(limits.monthly_count),
        naira(limits.max_balance),
        action(limits.over_balance_action),
        naira(limits.per_recipient_daily),
        count(limits.recipient_hourly_count),
        action(limits.recipient_hourly_action),
        count(limits.account_hourly_count),
        action(limits.account_hourly_action),
        naira(limits.first_day_value),
        action(limits.first_day_action),
    )
}

/// Adds a recipient or an account to the blocklist (owner or CLI), with a
/// reason; `false` when it was there already.
pub async fn block(
    store: &dyn Store,
    actor: Actor,
    kind: BlockKind,
    value: &str,
    reason: &str,
) -> OpsResult<bool> {
    actor.require(Permission::ManageAccounts)?;
    let reason = reason_of(Some(reason))?;
    let value = match kind {
        BlockKind::Recipient => recipient_key(value),
        BlockKind::Account => account_id(value)?.to_string(),
    };
    if value.is_empty() || value.chars().count() > 64 {
        return Err(invalid(&["value"], "must be 1 to 64 characters"));
    }
    let mut log = actor.log("blocklist.add", format!("{} {value}", kind.as_str()));
    log.reason = Some(reason.clone());
    let entry = BlockEntry {
        kind,
        value,
        reason,
        added_by: actor.to_string(),
        added_at: String::new(),
    };
    let added = store
        .write((entry, log), |tx, (entry, log)| {
            Box::pin(work::block_logged(tx, entry, log))
        })
        .await?;
    tracing::info!(%actor, kind = kind.as_str(), added, "blocklist entry added");
    Ok(added)
}

/// Removes an entry; `false` when there was none.
pub async fn unblock(
    store: &dyn Store,
    actor: Actor,
    kind: BlockKind,
    value: &str,
    reason: Option<&str>,
) -> OpsResult<bool> {
    actor.require(Permission::ManageAccounts)?;
    let value = match kind {
        BlockKind::Recipient => recipient_key(value),
        BlockKind::Account => account_id(value)?.to_string(),
    };
    let mut log = actor.log("blocklist.remove", format!("{} {value}", kind.as_str()));
    log.reason = crate::optional_reason(reason)?;
    let removed = store
        .write((kind, value, log), |tx, (kind, value, log)| {
            Box::pin(work::unblock_logged(tx, *kind, value, log))
        })
        .await?;
    tracing::info!(%actor, kind = kind.as_str(), removed, "blocklist entry removed");
    Ok(removed)
}

fn account_id(text: &str) -> OpsResult<AccountId> {
    text.trim()
        .parse()
        .map_err(|_| invalid(&["value"], "must be an account id"))
}

pub async fn blocklist(store: &dyn Store, actor: &Actor) -> OpsResult<Vec<BlockEntry>> {
    actor.require(Permission::Read)?;
    Ok(store.blocklist().await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_four_digits_are_kept() {
        assert_eq!(last4_of("22212345678").unwrap(), "5678");
        assert!(last4_of("2221234567").is_err());
        assert!(last4_of("2221234567x").is_err());
    }

    #[test]
    fn limits_are_typed_in_naira_or_cleared() {
        assert_eq!(
            naira_limit(&["daily_value"], "5000").unwrap(),
            Some(Kobo(500_000))
        );
        assert_eq!(
            naira_limit(&["daily_value"], "₦50,000.01").unwrap(),
            Some(Kobo(5_000_001))
        );
        assert!(naira_limit(&["daily_value"], "5,00").is_err());
        assert_eq!(naira_limit(&["daily_value"], "none").unwrap(), None);
        assert!(naira_limit(&["daily_value"], "0").is_err());
        assert_eq!(count_limit(&["daily_count"], "20").unwrap(), Some(20));
        assert!(count_limit(&["daily_count"], "2.5").is_err());
    }
}
