//! `billpay kyc …`, `billpay limits …`, `billpay blocklist …`: KYC levels,
//! their limits and the blocklist (docs/limits.md).

use super::Output;
use super::output::action_error;
use billpay_domain::recipient::recipient_key;
use billpay_domain::{AccountId, Kobo, naira};
use billpay_operations::Actor;
use billpay_operations::limits::{self, LimitTexts, LimitsPatch, Verified};
use billpay_store::SharedStore;
use billpay_store::limits::{AccountLimits, BlockKind, Limits, RuleAction};
use billpay_webkit::format::lagos_time;
use clap::{ArgGroup, Args, Subcommand};
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum KycCommand {
    /// Set an account's KYC level (0, 1 or 2) with a reason; its next
    /// purchase is checked against the new level's limits.
    SetLevel {
        account_id: AccountId,
        level: String,
        #[arg(long)]
        reason: String,
        /// How it was verified: operator (documents seen outside billpay),
        /// bvn or nin.
        #[arg(long, default_value = "operator")]
        method: String,
        /// The BVN or NIN verified (with --method bvn|nin): only its last
        /// 4 digits are kept.
        #[arg(long)]
        number: Option<String>,
    },
    /// An account's level, limits and what it used of them today and in 30 days.
    Show { account_id: AccountId },
}

#[derive(Subcommand, Debug)]
pub enum LimitsCommand {
    /// Every level's limits, or one level's.
    Show { level: Option<String> },
    /// Change a level's limits, or with --account an account's own. Amounts
    /// in Naira; `none` clears a limit (no limit for a level, the level's for
    /// an account).
    #[command(group(ArgGroup::new("target").required(true).args(["level", "account"])))]
    Set {
        level: Option<String>,
        #[arg(long)]
        account: Option<AccountId>,
        #[command(flatten)]
        values: Box<LimitFlags>,
    },
    /// Rename a level (1 to 40 characters): the name the console and
    /// `limits show` give it.
    Rename { level: String, name: String },
}

/// `limits set`'s flags: each limit as typed (`billpay_operations::limits::LimitTexts`).
#[derive(Args, Debug)]
pub struct LimitFlags {
    #[command(flatten)]
    texts: LimitTexts,
}

impl LimitFlags {
    fn patch(&self) -> anyhow::Result<LimitsPatch> {
        let patch = self.texts.patch().map_err(action_error)?;
        if patch.is_empty() {
            return Err(super::output::UsageError("give at least one limit to set".into()).into());
        }
        Ok(patch)
    }
}

#[derive(Subcommand, Debug)]
pub enum BlocklistCommand {
    /// Refuse purchases to a recipient (phone, meter, smartcard, betting id…)
    /// or from an account.
    #[command(group(ArgGroup::new("entry").required(true).args(["recipient", "account"])))]
    Add {
        #[arg(long)]
        recipient: Option<String>,
        #[arg(long)]
        account: Option<String>,
        #[arg(long)]
        reason: String,
    },
    /// Every entry, oldest first.
    List,
    /// Remove an entry.
    #[command(group(ArgGroup::new("entry").required(true).args(["recipient", "account"])))]
    Remove {
        #[arg(long)]
        recipient: Option<String>,
        #[arg(long)]
        account: Option<String>,
        #[arg(long)]
        reason: Option<String>,
    },
}

pub async fn kyc(cmd: KycCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    let store = store.as_ref();
    match cmd {
        KycCommand::SetLevel {
            account_id,
            level,
            reason,
            method,
            number,
        } => {
            let level = limits::level_of(&level).map_err(action_error)?;
            let method = Verified::parse(&method).map_err(action_error)?;
            let kyc = limits::set_level(
                store,
                Actor::Cli,
                account_id,
                level,
                method,
                number.as_deref(),
                &reason,
            )
            .await
            .map_err(action_error)?;
            out.emit(
                json!({ "account_id": account_id, "kyc": kyc }),
                format!("Account {account_id} is now at level {}", kyc.level),
            );
        }
        KycCommand::Show { account_id } => {
            let view = limits::account(store, &Actor::Cli, account_id)
                .await
                .map_err(action_error)?;
            out.emit(serde_json::to_value(&view)?, account_text(&view));
        }
    }
    Ok(())
}

pub async fn limits(cmd: LimitsCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    let store = store.as_ref();
    match cmd {
        LimitsCommand::Show { level } => {
            let wanted = level
                .as_deref()
                .map(limits::level_of)
                .transpose()
                .map_err(action_error)?;
            let levels = limits::levels(store, &Actor::Cli)
                .await
                .map_err(action_error)?;
            let shown: Vec<_> = levels
                .into_iter()
                .filter(|l| wanted.is_none_or(|w| w == l.level))
                .collect();
            let text = shown
                .iter()
                .map(|l| {
                    format!(
                        "level {} ({})\n{}",
                        l.level,
                        l.name,
                        limits_text(&l.limits, "no limit")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n\n");
            out.emit(json!({ "levels": shown }), text);
        }
        LimitsCommand::Set {
            level,
            account,
            values,
        } => {
            let patch = values.patch()?;
            if let Some(account) = account {
                let view = limits::set_account_limits(store, Actor::Cli, account, patch)
                    .await
                    .map_err(action_error)?;
                out.emit(serde_json::to_value(&view)?, account_text(&view));
            } else {
                let level =
                    limits::level_of(level.as_deref().unwrap_or_default()).map_err(action_error)?;
                let changed = limits::set_level_limits(store, Actor::Cli, level, patch)
                    .await
                    .map_err(action_error)?;
                let text = format!(
                    "level {} ({})\n{}",
                    changed.level,
                    changed.name,
                    limits_text(&changed.limits, "no limit")
                );
                out.emit(json!({ "level": changed }), text);
            }
        }
        LimitsCommand::Rename { level, name } => {
            let level = limits::level_of(&level).map_err(action_error)?;
            let renamed = limits::rename_level(store, Actor::Cli, level, &name)
                .await
                .map_err(action_error)?;
            let text = format!("Level {} is now named {}", renamed.level, renamed.name);
            out.emit(json!({ "level": renamed }), text);
        }
    }
    Ok(())
}

pub async fn blocklist(
    cmd: BlocklistCommand,
    store: &SharedStore,
    out: &Output,
) -> anyhow::Result<()> {
    let store = store.as_ref();
    match cmd {
        BlocklistCommand::Add {
            recipient,
            account,
            reason,
        } => {
            let (kind, value) = entry(recipient, account);
            let added = limits::block(store, Actor::Cli, kind, &value, &reason)
                .await
                .map_err(action_error)?;
            let said = if added { "Blocked" } else { "Already blocked:" };
            out.emit(
                json!({ "kind": kind, "value": value, "added": added }),
                format!("{said} {} {value}", kind.as_str()),
            );
        }
        BlocklistCommand::List => {
            let entries = limits::blocklist(store, &Actor::Cli)
                .await
                .map_err(action_error)?;
            let text = if entries.is_empty() {
                "The blocklist is empty".to_owned()
            } else {
                entries
                    .iter()
                    .map(|e| {
                        format!(
                            "{:<9} {:<36} {}  by {}  {}",
                            e.kind.as_str(),
                            e.value,
                            lagos_time(&e.added_at),
                            e.added_by,
                            e.reason
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            out.emit(json!({ "entries": entries }), text);
        }
        BlocklistCommand::Remove {
            recipient,
            account,
            reason,
        } => {
            let (kind, value) = entry(recipient, account);
            let removed = limits::unblock(store, Actor::Cli, kind, &value, reason.as_deref())
                .await
                .map_err(action_error)?;
            if !removed {
                anyhow::bail!("{} {value} is not on the blocklist", kind.as_str());
            }
            out.emit(
                json!({ "kind": kind, "value": value, "removed": true }),
                format!("Removed {} {value} from the blocklist", kind.as_str()),
            );
        }
    }
    Ok(())
}

/// The entry clap's group guarantees: a recipient (in its canonical form,
/// `recipient::recipient_key`, as printed back) or an account.
fn entry(recipient: Option<String>, account: Option<String>) -> (BlockKind, String) {
    match (recipient, account) {
        (Some(recipient), _) => (BlockKind::Recipient, recipient_key(&recipient)),
        (None, account) => (BlockKind::Account, account.unwrap_or_default()),
    }
}

fn limits_text(limits: &Limits, unset: &str) -> String {
    let money = |k: Option<Kobo>| k.map_or_else(|| unset.to_owned(), naira);
    let count = |c: Option<i64>| c.map_or_else(|| unset.to_owned(), |c| format!("{c} purchases"));
    // A rule's action, said only where the rule is set (or for the largest balance).
    let then = |value: String, set: bool, action: Option<RuleAction>| match (set, action) {
        (true, Some(action)) => format!("{value}, then {}", action.as_str()),
        _ => value,
    };
    [
        ("largest purchase", money(limits.max_purchase)),
        ("per day", money(limits.daily_value)),
        ("purchases per day", count(limits.daily_count)),
        ("per 30 days", money(limits.monthly_value)),
        ("purchases per 30 days", count(limits.monthly_count)),
        (
            "largest balance",
            then(
                money(limits.max_balance),
                limits.max_balance.is_some(),
                limits.over_balance_action,
            ),
        ),
        ("per recipient per day", money(limits.per_recipient_daily)),
        (
            "to 1 recipient an hour",
            then(
                count(limits.recipient_hourly_count),
                limits.recipient_hourly_count.is_some(),
                limits.recipient_hourly_action,
            ),
        ),
        (
            "purchases an hour",
            then(
                count(limits.account_hourly_count),
                limits.account_hourly_count.is_some(),
                limits.account_hourly_action,
            ),
        ),
        (
            "first 24 h (new)",
            then(
                money(limits.first_day_value),
                limits.first_day_value.is_some(),
                limits.first_day_action,
            ),
        ),
    ]
    .iter()
    .map(|(name, value)| format!("  {name:<22} {value}"))
    .collect::<Vec<_>>()
    .join("\n")
}

fn account_text(view: &AccountLimits) -> String {
    let kyc = &view.kyc;
    let how = match (&kyc.method, &kyc.set_at) {
        (Some(method), Some(at)) => {
            let by = kyc.set_by.as_deref().unwrap_or("");
            let ending = kyc
                .last4
                .as_deref()
                .map(|l| format!(" ending {l}"))
                .unwrap_or_default();
            format!(" ({method}{ending}, by {by}, {})", lagos_time(at))
        }
        _ => String::new(),
    };
    let usage = &view.usage;
    let held = if view.held_to_level0 {
        "\n  the balance is over the largest balance: level 0's limits apply until reviewed"
    } else {
        ""
    };
    format!(
        "{}\n  level {}{how}\n{}\n  spent today            {} in {} purchases\n  spent in 30 days       {} in {} purchases{held}",
        view.account_id,
        kyc.level,
        limits_text(&view.limits, "no limit"),
        naira(usage.daily_value),
        usage.daily_count,
        naira(usage.monthly_value),
        usage.monthly_count,
    )
}
