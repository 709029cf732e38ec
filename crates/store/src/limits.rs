//! KYC levels, their limits and the blocklist (issue 32, docs/limits.md):
//! the records, and the one rule deciding which limit a purchase would pass
//! ([`LimitState::refusal`]), which both engines' placement and test-mode
//! check run (`areas/purchases.rs::place`). Its PL/pgSQL twins are dropped
//! (migration `045_placement_functions_dropped`).

use billpay_domain::{AccountId, Kobo};
use serde::Serialize;
use std::fmt;

/// The KYC levels: 0 (email verified: where every account starts), 1 (BVN or NIN verified, or
/// approved by an owner), 2 (approved by an owner).
pub const LEVELS: [u8; 3] = [0, 1, 2];

/// The level an operator-created account starts at unless told otherwise:
/// the operator who creates an API account has onboarded its business
/// outside billpay, which is level 2's definition.
pub const OPERATOR_CREATED_LEVEL: u8 = 2;

/// Limits in kobo (values) or purchases (counts); `None`: no limit (for a
/// level) or the level's (for an account's own limits).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Limits {
    pub max_purchase: Option<Kobo>,
    pub daily_value: Option<Kobo>,
    pub daily_count: Option<i64>,
    pub monthly_value: Option<Kobo>,
    pub monthly_count: Option<i64>,
    pub max_balance: Option<Kobo>,
    pub per_recipient_daily: Option<Kobo>,
    /// Velocity: purchases to one recipient per clock hour.
    pub recipient_hourly_count: Option<i64>,
    /// Velocity: purchases per clock hour.
    pub account_hourly_count: Option<i64>,
    /// Velocity: what an account may spend in its first 24 hours after sign-up.
    pub first_day_value: Option<Kobo>,
    /// What tripping each velocity rule does (`None`: refuse for a level,
    /// the level's for an account).
    pub recipient_hourly_action: Option<RuleAction>,
    pub account_hourly_action: Option<RuleAction>,
    pub first_day_action: Option<RuleAction>,
    /// What a purchase over level 0's limits does while the wallet is over
    /// its largest balance.
    pub over_balance_action: Option<RuleAction>,
}

/// What a velocity rule (or the largest balance) does to a purchase that trips it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleAction {
    /// Refused like any limit (`422 limit_exceeded`); nothing is debited.
    #[default]
    Refuse,
    /// Debited and recorded (`processing`) but not sent to a supplier until
    /// an owner releases it (or rejects it: failed and refunded).
    Hold,
}

impl RuleAction {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleAction::Refuse => "refuse",
            RuleAction::Hold => "hold",
        }
    }

    pub fn parse(text: &str) -> Option<RuleAction> {
        match text {
            "refuse" => Some(RuleAction::Refuse),
            "hold" => Some(RuleAction::Hold),
            _ => None,
        }
    }
}

/// The rule named when a wallet over its largest balance held a purchase.
pub const OVER_BALANCE: &str = "max_balance";

/// A held purchase's rule, for a person.
pub fn held_words(rule: &str) -> &'static str {
    match LimitKind::parse(rule) {
        Some(kind) => kind.words(),
        None if rule == OVER_BALANCE => "wallet over its largest balance (above level 0's limits)",
        None => "a fraud rule",
    }
}

impl Limits {
    /// `self` where set, else `level`'s: an account's own limits over its level's.
    pub fn over(self, level: Limits) -> Limits {
        Limits {
            max_purchase: self.max_purchase.or(level.max_purchase),
            daily_value: self.daily_value.or(level.daily_value),
            daily_count: self.daily_count.or(level.daily_count),
            monthly_value: self.monthly_value.or(level.monthly_value),
            monthly_count: self.monthly_count.or(level.monthly_count),
            max_balance: self.max_balance.or(level.max_balance),
            per_recipient_daily: self.per_recipient_daily.or(level.per_recipient_daily),
            recipient_hourly_count: self.recipient_hourly_count.or(level.recipient_hourly_count),
            account_hourly_count: self.account_hourly_count.or(level.account_hourly_count),
            first_day_value: self.first_day_value.or(level.first_day_value),
            recipient_hourly_action: self
                .recipient_hourly_action
                .or(level.recipient_hourly_action),
            account_hourly_action: self.account_hourly_action.or(level.account_hourly_action),
            first_day_action: self.first_day_action.or(level.first_day_action),
            over_balance_action: self.over_balance_action.or(level.over_balance_action),
        }
    }
}

/// The longest name a level may have (characters).
pub const LEVEL_NAME_MAX: usize = 40;

/// A level: its number, the operator's name for it, its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LevelLimits {
    pub level: u8,
    pub name: String,
    pub limits: Limits,
}

/// How an account reached its level (never a full BVN or NIN: the last 4 digits at most).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kyc {
    pub level: u8,
    /// `operator`, `bvn`, `nin`, or `created` (the level given at creation);
    /// `None` for an account whose level nobody has set since the migration.
    pub method: Option<String>,
    pub last4: Option<String>,
    pub reason: Option<String>,
    pub set_by: Option<String>,
    pub set_at: Option<String>,
}

/// The operator log's action for a customer's own identity check (BVN or
/// NIN through the gateway): one line per check, written before the gateway
/// is asked (the checks are counted in the throttles' table, [`IDENTITY_CHECKS`]).
pub const IDENTITY_CHECK: &str = "account.identity_check";

/// The throttles' scope counting each account's identity checks per Lagos
/// day (key: the account's id).
pub const IDENTITY_CHECKS: &str = "identity-checks";

/// How many identity checks an account may start per Lagos day (each costs
/// the operator ₦10 to ₦60 at Monnify).
pub const IDENTITY_CHECKS_PER_DAY: u32 = 3;

/// A level change: the level, how it was reached and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KycChange {
    pub level: u8,
    pub method: String,
    pub last4: Option<String>,
    pub reason: String,
    pub set_by: String,
}

/// What an account spent: today (Lagos) and over the last 30 Lagos days
/// (today included), in value and count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub daily_value: Kobo,
    pub daily_count: i64,
    pub monthly_value: Kobo,
    pub monthly_count: i64,
}

/// Everything a purchase is checked against, read in one statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitState {
    pub level: u8,
    pub balance: Kobo,
    /// The account's limits (its own over its level's).
    pub limits: Limits,
    /// Level 0's: what applies while the balance is over the largest
    /// balance (a purchase reads them only then).
    pub level0: Limits,
    /// Today's usage; the 30-day sums are read only when a 30-day limit
    /// applies (zero otherwise).
    pub usage: Usage,
    /// Spent today on the purchase's recipient (read only when a
    /// per-recipient limit applies; zero otherwise).
    pub recipient_today: Kobo,
    /// The account or the recipient is on the blocklist.
    pub blocked: bool,
    /// Purchases to the recipient this clock hour (read only when that
    /// hourly rule applies; zero otherwise).
    pub recipient_hour: i64,
    /// Purchases this clock hour (read only when that hourly rule applies).
    pub account_hour: i64,
    /// The account was created less than 24 hours ago.
    pub new_account: bool,
    /// Spent since sign-up (read only for a new account under a first-day
    /// value cap; zero otherwise).
    pub first_day: Kobo,
}

/// What the limits say to a purchase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Pass,
    /// Debit and record it, but hold it for review: the rule that held it
    /// (a [`LimitKind`]'s name, or [`OVER_BALANCE`]).
    Hold(&'static str),
    Refuse(LimitRefusal),
}

/// The limits a purchase can exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    MaxPurchase,
    DailyValue,
    DailyCount,
    MonthlyValue,
    MonthlyCount,
    PerRecipientDaily,
    RecipientHourlyCount,
    AccountHourlyCount,
    FirstDayValue,
}

impl LimitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::MaxPurchase => "max_purchase",
            LimitKind::DailyValue => "daily_value",
            LimitKind::DailyCount => "daily_count",
            LimitKind::MonthlyValue => "monthly_value",
            LimitKind::MonthlyCount => "monthly_count",
            LimitKind::PerRecipientDaily => "per_recipient_daily",
            LimitKind::RecipientHourlyCount => "recipient_hourly_count",
            LimitKind::AccountHourlyCount => "account_hourly_count",
            LimitKind::FirstDayValue => "first_day_value",
        }
    }

    pub fn parse(text: &str) -> Option<LimitKind> {
        [
            LimitKind::MaxPurchase,
            LimitKind::DailyValue,
            LimitKind::DailyCount,
            LimitKind::MonthlyValue,
            LimitKind::MonthlyCount,
            LimitKind::PerRecipientDaily,
            LimitKind::RecipientHourlyCount,
            LimitKind::AccountHourlyCount,
            LimitKind::FirstDayValue,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == text)
    }

    fn counts_purchases(self) -> bool {
        matches!(
            self,
            LimitKind::DailyCount
                | LimitKind::MonthlyCount
                | LimitKind::RecipientHourlyCount
                | LimitKind::AccountHourlyCount
        )
    }

    /// The limit in words, for a person.
    pub fn words(self) -> &'static str {
        match self {
            LimitKind::MaxPurchase => "largest single purchase",
            LimitKind::DailyValue => "daily spending limit",
            LimitKind::DailyCount => "daily limit on purchases",
            LimitKind::MonthlyValue => "30-day spending limit",
            LimitKind::MonthlyCount => "30-day limit on purchases",
            LimitKind::PerRecipientDaily => "daily limit for one recipient",
            LimitKind::RecipientHourlyCount => "hourly limit on purchases to one recipient",
            LimitKind::AccountHourlyCount => "hourly limit on purchases",
            LimitKind::FirstDayValue => "spending limit of a new account's first 24 hours",
        }
    }
}

/// A purchase over a limit: which, the limit, and what was used of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitRefusal {
    pub kind: LimitKind,
    /// Kobo, or purchases for a count.
    pub limit: i64,
    pub used: i64,
    /// The balance is over the largest balance, so level 0's limits applied.
    pub held_to_level0: bool,
}

impl fmt::Display for LimitRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = self.kind.words();
        let left = (self.limit - self.used).max(0);
        if self.kind.counts_purchases() {
            write!(
                f,
                "This purchase is over the {words} of {} purchases: {left} left",
                self.limit
            )?;
        } else if self.kind == LimitKind::MaxPurchase {
            write!(
                f,
                "This purchase is over the {words} of {} Naira",
                Kobo(self.limit)
            )?;
        } else {
            write!(
                f,
                "This purchase is over the {words} of {} Naira: {} Naira left",
                Kobo(self.limit),
                Kobo(left)
            )?;
        }
        if self.held_to_level0 {
            write!(
                f,
                " (the wallet holds more than its largest balance, so level 0's limits apply until an operator reviews the account)"
            )?;
        }
        Ok(())
    }
}

impl LimitState {
    /// The balance is over the account's largest balance: level 0's limits apply.
    pub fn held_to_level0(&self) -> bool {
        self.limits
            .max_balance
            .is_some_and(|cap| self.balance > cap)
    }

    /// The limits a purchase is checked against now.
    pub fn applied(&self) -> Limits {
        if self.held_to_level0() {
            self.level0
        } else {
            self.limits
        }
    }

    /// The first limit `amount` would exceed, in a fixed order, whatever
    /// the rules' actions say; `None`: it passes them all.
    pub fn refusal(&self, amount: Kobo) -> Option<LimitRefusal> {
        let held = self.held_to_level0();
        let limits = self.applied();
        fixed_refusal(&limits, &self.usage, self.recipient_today, amount, held).or_else(|| {
            self.velocity(&limits, amount)
                .into_iter()
                .next()
                .map(|(refusal, _)| refusal)
        })
    }

    /// What the limits say to a purchase of `amount`: the fixed limits
    /// refuse (while the wallet is over its largest balance, level 0's
    /// refuse, or hold when the account's `over_balance_action` says so and
    /// its own limits pass); a velocity rule tripped refuses or holds as its
    /// action says, a refusing rule winning over a holding one.
    pub fn decide(&self, amount: Kobo) -> Decision {
        let held = self.held_to_level0();
        let limits = self.applied();
        let mut hold = None;
        if let Some(refusal) =
            fixed_refusal(&limits, &self.usage, self.recipient_today, amount, held)
        {
            let own = self.limits;
            if !held || own.over_balance_action.unwrap_or_default() != RuleAction::Hold {
                return Decision::Refuse(refusal);
            }
            if let Some(refusal) =
                fixed_refusal(&own, &self.usage, self.recipient_today, amount, false)
            {
                return Decision::Refuse(refusal);
            }
            hold = Some(OVER_BALANCE);
        }
        for (refusal, action) in self.velocity(&limits, amount) {
            match action {
                RuleAction::Refuse => return Decision::Refuse(refusal),
                RuleAction::Hold => hold = hold.or(Some(refusal.kind.as_str())),
            }
        }
        hold.map_or(Decision::Pass, Decision::Hold)
    }

    /// The velocity rules `amount` trips, in a fixed order, with their actions.
    fn velocity(&self, limits: &Limits, amount: Kobo) -> Vec<(LimitRefusal, RuleAction)> {
        let held = self.held_to_level0();
        let first_day = limits.first_day_value.filter(|_| self.new_account);
        let rules = [
            (
                LimitKind::RecipientHourlyCount,
                limits.recipient_hourly_count,
                self.recipient_hour,
                1,
                limits.recipient_hourly_action,
            ),
            (
                LimitKind::AccountHourlyCount,
                limits.account_hourly_count,
                self.account_hour,
                1,
                limits.account_hourly_action,
            ),
            (
                LimitKind::FirstDayValue,
                first_day.map(|k| k.0),
                self.first_day.0,
                amount.0,
                limits.first_day_action,
            ),
        ];
        rules
            .into_iter()
            .filter_map(|(kind, limit, used, adds, action)| {
                let limit = limit?;
                (used.saturating_add(adds) > limit).then_some((
                    LimitRefusal {
                        kind,
                        limit,
                        used,
                        held_to_level0: held,
                    },
                    action.unwrap_or_default(),
                ))
            })
            .collect()
    }
}

/// The first of the fixed limits (not the velocity rules) `amount` would
/// exceed under `limits`.
fn fixed_refusal(
    limits: &Limits,
    usage: &Usage,
    recipient_today: Kobo,
    amount: Kobo,
    held: bool,
) -> Option<LimitRefusal> {
    let a = amount.0;
    let checks: [(LimitKind, Option<i64>, i64, i64); 6] = [
        (
            LimitKind::MaxPurchase,
            limits.max_purchase.map(|k| k.0),
            0,
            a,
        ),
        (
            LimitKind::DailyValue,
            limits.daily_value.map(|k| k.0),
            usage.daily_value.0,
            a,
        ),
        (
            LimitKind::DailyCount,
            limits.daily_count,
            usage.daily_count,
            1,
        ),
        (
            LimitKind::MonthlyValue,
            limits.monthly_value.map(|k| k.0),
            usage.monthly_value.0,
            a,
        ),
        (
            LimitKind::MonthlyCount,
            limits.monthly_count,
            usage.monthly_count,
            1,
        ),
        (
            LimitKind::PerRecipientDaily,
            limits.per_recipient_daily.map(|k| k.0),
            recipient_today.0,
            a,
        ),
    ];
    checks.into_iter().find_map(|(kind, limit, used, adds)| {
        let limit = limit?;
        (used.saturating_add(adds) > limit).then_some(LimitRefusal {
            kind,
            limit,
            used,
            held_to_level0: held,
        })
    })
}

/// What a blocklist entry names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    Recipient,
    Account,
}

impl BlockKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BlockKind::Recipient => "recipient",
            BlockKind::Account => "account",
        }
    }

    pub fn parse(text: &str) -> Option<BlockKind> {
        match text {
            "recipient" => Some(BlockKind::Recipient),
            "account" => Some(BlockKind::Account),
            _ => None,
        }
    }
}

/// A blocklist entry: a recipient (phone, meter, smartcard, betting id…) or an account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockEntry {
    pub kind: BlockKind,
    pub value: String,
    pub reason: String,
    pub added_by: String,
    pub added_at: String,
}

/// An account's level, limits and what it used of them: the API's, the
/// console's and the CLI's view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccountLimits {
    pub account_id: AccountId,
    pub kyc: Kyc,
    /// The limits that apply (its own over its level's).
    pub limits: Limits,
    /// Its own limits (`None`: the level's).
    pub overrides: Limits,
    pub usage: Usage,
    /// The balance is over the largest balance: level 0's limits apply.
    pub held_to_level0: bool,
}

impl AccountLimits {
    /// What the daily and 30-day value limits still let the account spend
    /// today (`None`: neither applies). While [`Self::held_to_level0`] level
    /// 0's limits apply instead, which this does not say.
    pub fn left_today(&self) -> Option<Kobo> {
        let left = |limit: Option<Kobo>, used: Kobo| limit.map(|l| l.0 - used.0);
        let daily = left(self.limits.daily_value, self.usage.daily_value);
        let monthly = left(self.limits.monthly_value, self.usage.monthly_value);
        [daily, monthly]
            .into_iter()
            .flatten()
            .min()
            .map(|kobo| Kobo(kobo.max(0)))
    }
}

/// The Lagos day a purchase counts in, and the first day of its 30-day window.
pub fn usage_days(today: time::Date) -> (String, String) {
    let first = today - time::Duration::days(29);
    (today.to_string(), first.to_string())
}

/// Lagos days of usage kept by the pruning job: the 30-day window and the
/// day before it (a window read just after midnight still finds its days).
pub const USAGE_DAYS_KEPT: i64 = 31;

/// Clock hours of hourly counts kept by the pruning job, before the current
/// hour (only the current hour is read; one more for a purchase that read
/// the clock just before the hour turned).
pub const USAGE_HOURS_KEPT: i64 = 2;

/// `LimitStore::prune_usage`'s bounds on `today` (Lagos) at `now_ms`: the
/// first Lagos day kept ([`USAGE_DAYS_KEPT`] days, today's included) and
/// the first clock hour kept (the current one and [`USAGE_HOURS_KEPT`]
/// before it).
pub fn usage_prune_bounds(today: time::Date, now_ms: i64) -> (String, i64) {
    let first_day = today - time::Duration::days(USAGE_DAYS_KEPT - 1);
    let first_hour = now_ms.div_euclid(3_600_000) - USAGE_HOURS_KEPT;
    (first_day.to_string(), first_hour)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(limits: Limits) -> LimitState {
        LimitState {
            level: 0,
            balance: Kobo(100000),
            limits,
            level0: Limits {
                max_purchase: Some(Kobo(1000)),
                ..Limits::default()
            },
            usage: Usage {
                daily_value: Kobo(4000),
                daily_count: 4,
                monthly_value: Kobo(9000),
                monthly_count: 9,
            },
            recipient_today: Kobo(500),
            blocked: false,
            recipient_hour: 2,
            account_hour: 5,
            new_account: true,
            first_day: Kobo(4000),
        }
    }

    #[test]
    fn a_purchase_up_to_the_limit_passes_and_one_kobo_over_is_refused() {
        let daily = Limits {
            daily_value: Some(Kobo(5000)),
            ..Limits::default()
        };
        assert_eq!(state(daily).refusal(Kobo(1000)), None);
        let refused = state(daily).refusal(Kobo(1001)).unwrap();
        assert_eq!(
            (refused.kind, refused.limit, refused.used),
            (LimitKind::DailyValue, 5000, 4000)
        );
        assert_eq!(
            refused.to_string(),
            "This purchase is over the daily spending limit of 50.00 Naira: 10.00 Naira left"
        );
    }

    #[test]
    fn counts_say_purchases_left() {
        let count = Limits {
            daily_count: Some(4),
            ..Limits::default()
        };
        let refused = state(count).refusal(Kobo(1)).unwrap();
        assert_eq!(
            refused.to_string(),
            "This purchase is over the daily limit on purchases of 4 purchases: 0 left"
        );
    }

    #[test]
    fn over_the_largest_balance_level_0s_limits_apply() {
        let capped = Limits {
            max_balance: Some(Kobo(50000)),
            ..Limits::default()
        };
        let refused = state(capped).refusal(Kobo(1001)).unwrap();
        assert_eq!(refused.kind, LimitKind::MaxPurchase);
        assert!(refused.held_to_level0);
        assert_eq!(state(capped).refusal(Kobo(1000)), None);
    }

    #[test]
    fn a_refusing_velocity_rule_wins_over_a_holding_one() {
        let rules = Limits {
            recipient_hourly_count: Some(2),
            recipient_hourly_action: Some(RuleAction::Hold),
            account_hourly_count: Some(5),
            account_hourly_action: Some(RuleAction::Refuse),
            ..Limits::default()
        };
        let Decision::Refuse(refused) = state(rules).decide(Kobo(1)) else {
            panic!("not refused");
        };
        assert_eq!(refused.kind, LimitKind::AccountHourlyCount);
        let holding = Limits {
            account_hourly_action: Some(RuleAction::Hold),
            ..rules
        };
        assert_eq!(
            state(holding).decide(Kobo(1)),
            Decision::Hold("recipient_hourly_count")
        );
    }

    #[test]
    fn the_first_day_cap_applies_to_a_new_account_only() {
        let cap = Limits {
            first_day_value: Some(Kobo(5000)),
            first_day_action: Some(RuleAction::Hold),
            ..Limits::default()
        };
        assert_eq!(state(cap).decide(Kobo(1000)), Decision::Pass);
        assert_eq!(
            state(cap).decide(Kobo(1001)),
            Decision::Hold("first_day_value")
        );
        let old = LimitState {
            new_account: false,
            ..state(cap)
        };
        assert_eq!(old.decide(Kobo(1001)), Decision::Pass);
    }

    #[test]
    fn over_the_largest_balance_a_hold_still_keeps_the_accounts_own_limits() {
        let capped = Limits {
            max_balance: Some(Kobo(50000)),
            max_purchase: Some(Kobo(3000)),
            over_balance_action: Some(RuleAction::Hold),
            ..Limits::default()
        };
        assert_eq!(state(capped).decide(Kobo(1000)), Decision::Pass);
        assert_eq!(
            state(capped).decide(Kobo(2000)),
            Decision::Hold(OVER_BALANCE)
        );
        let Decision::Refuse(refused) = state(capped).decide(Kobo(3001)) else {
            panic!("over its own limit, not refused");
        };
        assert!(!refused.held_to_level0);
    }

    #[test]
    fn own_limits_win_over_the_levels() {
        let own = Limits {
            daily_count: Some(7),
            ..Limits::default()
        };
        let level = Limits {
            daily_count: Some(3),
            max_purchase: Some(Kobo(5)),
            ..Limits::default()
        };
        let both = own.over(level);
        assert_eq!(
            (both.daily_count, both.max_purchase),
            (Some(7), Some(Kobo(5)))
        );
    }

    #[test]
    fn pruning_keeps_the_window_the_day_before_it_and_two_hours() {
        let today = time::macros::date!(2026 - 11 - 26);
        let (first_day, first_hour) = usage_prune_bounds(today, 3_600_000 * 500_000 + 59_000);
        assert_eq!(first_day, "2026-10-27");
        assert_eq!(
            usage_days(today).1,
            "2026-10-28",
            "the window's first day is kept"
        );
        assert_eq!(first_hour, 499_998);
    }
}
