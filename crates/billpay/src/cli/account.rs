//! `billpay account …`

use super::Output;
use super::output::action_error;
use billpay_domain::AccountId;
use billpay_operations::{Actor, accounts, pricing, schedules};
use billpay_store::{AccountStatus, SharedStore};
use billpay_webkit::format::lagos_time;
use billpay_webkit::rows::developer_access;
use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum AccountCommand {
    /// Create an account (with one NGN wallet).
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        email: String,
        /// Dashboard password (hashed with argon2id).
        #[arg(long)]
        password: Option<String>,
        /// The KYC level it starts at (0, 1 or 2; docs/limits.md): 2 by
        /// default, an operator-created account having been onboarded by the operator.
        #[arg(long, default_value_t = billpay_store::limits::OPERATOR_CREATED_LEVEL)]
        kyc_level: u8,
    },
    /// An account: name, email, status, balance and price tier.
    Show { account_id: AccountId },
    /// Put an account on a price tier (`default`: back to list prices);
    /// its next purchase is charged at the new prices, on every node within a second.
    SetTier { account_id: AccountId, tier: String },
    /// Suspend an account: its keys stop working within a request.
    Suspend { account_id: AccountId },
    /// Reactivate a suspended account.
    Reactivate { account_id: AccountId },
    /// Close an account for good: its wallet must be empty and no purchase
    /// in flight; it is suspended and can never be reactivated.
    Close {
        account_id: AccountId,
        /// Why (kept in the operator log).
        #[arg(long)]
        reason: String,
    },
    /// Erase a closed account's personal data (NDPA): name, email, phone,
    /// recipients, notice addresses, keys and sessions become a tombstone;
    /// the ledger, the amounts and the audit stay.
    Erase {
        account_id: AccountId,
        /// Why (kept in the operator log).
        #[arg(long)]
        reason: String,
    },
    /// Show or hide the dashboard's API keys and webhooks pages for an
    /// account (its developer access; docs/shop.md). The API is unchanged:
    /// its keys work either way.
    DeveloperAccess {
        account_id: AccountId,
        #[arg(value_enum)]
        state: OnOff,
    },
    /// An account's schedules (docs/schedules.md): each one's status and
    /// next run (Lagos time).
    Schedules { account_id: AccountId },
    /// Pause every active schedule of an account (logged); the customer may
    /// resume each.
    PauseSchedules { account_id: AccountId },
    /// Set the dashboard password.
    SetPassword {
        account_id: AccountId,
        #[arg(long)]
        password: String,
    },
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

pub async fn run(cmd: AccountCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    match cmd {
        AccountCommand::Create {
            name,
            email,
            password,
            kyc_level,
        } => {
            let account = accounts::create_at_level(
                store.as_ref(),
                Actor::Cli,
                &name,
                &email,
                password.as_deref(),
                kyc_level,
            )
            .await
            .map_err(action_error)?;
            out.emit(
                json!({ "account_id": account.id, "name": account.name, "email": account.email, "status": account.status, "kyc_level": kyc_level }),
                format!("Created account {} ({})", account.id, account.email),
            );
        }
        AccountCommand::Show { account_id } => {
            let account = store
                .account(account_id)
                .await?
                .ok_or_else(|| anyhow::anyhow!("account {account_id} not found"))?;
            let tier = pricing::account_tier(store.as_ref(), account_id)
                .await
                .map_err(action_error)?;
            let closure = store.account_closure(account_id).await?;
            let closed = match &closure {
                None => String::new(),
                Some(c) => format!(
                    "\n  closed   {}{}",
                    lagos_time(&c.closed_at),
                    c.erased_at
                        .as_deref()
                        .map(|at| format!(" (personal data erased {})", lagos_time(at)))
                        .unwrap_or_default()
                ),
            };
            out.emit(
                json!({ "account_id": account.id, "name": account.name, "email": account.email,
                        "status": account.status, "balance": account.balance, "tier": tier,
                        "created_at": account.created_at,
                        "developer_access": account.developer_access,
                        "closed_at": closure.as_ref().map(|c| &c.closed_at),
                        "erased_at": closure.as_ref().and_then(|c| c.erased_at.as_ref()) }),
                format!(
                    "{}
  name     {}
  email    {}
  status   {}
  balance  {}
  tier     {tier}
  developer access {}
  created  {}{closed}",
                    account.id,
                    account.name,
                    account.email,
                    account.status.as_str(),
                    account.balance,
                    developer_access(account.developer_access),
                    lagos_time(&account.created_at)
                ),
            );
        }
        AccountCommand::SetTier { account_id, tier } => {
            pricing::set_account_tier(store.as_ref(), Actor::Cli, account_id, &tier)
                .await
                .map_err(action_error)?;
            out.emit(
                json!({ "account_id": account_id, "tier": tier }),
                format!("Account {account_id} is now on tier {tier}"),
            );
        }
        AccountCommand::Suspend { account_id } => {
            set_status(store, out, account_id, AccountStatus::Suspended).await?
        }
        AccountCommand::Reactivate { account_id } => {
            set_status(store, out, account_id, AccountStatus::Active).await?
        }
        AccountCommand::Close { account_id, reason } => {
            let closure = accounts::close(store.as_ref(), Actor::Cli, account_id, Some(&reason))
                .await
                .map_err(action_error)?;
            out.emit(
                json!({ "account_id": account_id, "closed_at": closure.closed_at }),
                format!("Account {account_id} is closed"),
            );
        }
        AccountCommand::Erase { account_id, reason } => {
            let erased = accounts::erase(store.as_ref(), Actor::Cli, account_id, Some(&reason))
                .await
                .map_err(action_error)?;
            out.emit(
                json!({ "account_id": account_id, "erased": erased }),
                format!(
                    "Account {account_id}'s personal data is erased (now {}): {} purchases, \
                     {} notices, {} keys, {} saved recipients, {} log lines",
                    erased.tombstone,
                    erased.purchases,
                    erased.notices,
                    erased.keys,
                    erased.beneficiaries,
                    erased.log_lines
                ),
            );
        }
        AccountCommand::DeveloperAccess { account_id, state } => {
            let on = state == OnOff::On;
            accounts::set_developer_access(store.as_ref(), Actor::Cli, account_id, on)
                .await
                .map_err(action_error)?;
            let words = if on { "on" } else { "off" };
            out.emit(
                json!({ "account_id": account_id, "developer_access": on }),
                format!("Developer access for {account_id} is {words}"),
            );
        }
        AccountCommand::Schedules { account_id } => {
            let found = store.schedules(account_id).await?;
            let lines: Vec<String> = found
                .iter()
                .map(|s| {
                    let next = schedules::next_run(s).map_or_else(|| "—".into(), lagos_time);
                    let status = s.status.as_str();
                    format!(
                        "{}  {} {} for {}  {status}  next {next}",
                        s.reference,
                        s.every.adverb(),
                        s.label,
                        s.recipient
                    )
                })
                .collect();
            let listed: Vec<_> = found
                .iter()
                .map(|s| json!({ "reference": s.reference, "item": s.label, "recipient": s.recipient, "every": s.every.as_str(), "status": s.status.as_str(), "next_run_at": schedules::next_run(s), "runs": s.runs }))
                .collect();
            let text = match lines.is_empty() {
                true => format!("Account {account_id} has no schedules"),
                false => lines.join("\n"),
            };
            out.emit(
                json!({ "account_id": account_id, "schedules": listed }),
                text,
            );
        }
        AccountCommand::PauseSchedules { account_id } => {
            let paused = schedules::pause_customer(store.as_ref(), Actor::Cli, account_id)
                .await
                .map_err(action_error)?;
            out.emit(
                json!({ "account_id": account_id, "paused": paused }),
                format!("Paused {paused} schedules of {account_id}"),
            );
        }
        AccountCommand::SetPassword {
            account_id,
            password,
        } => {
            accounts::set_password(store.as_ref(), Actor::Cli, account_id, &password, None)
                .await
                .map_err(action_error)?;
            out.emit(
                json!({ "account_id": account_id, "password_set": true }),
                format!("Password set for {account_id}"),
            );
        }
    }
    Ok(())
}

async fn set_status(
    store: &SharedStore,
    out: &Output,
    id: AccountId,
    status: AccountStatus,
) -> anyhow::Result<()> {
    accounts::set_status(store.as_ref(), Actor::Cli, id, status)
        .await
        .map_err(action_error)?;
    out.emit(
        json!({ "account_id": id, "status": status }),
        format!("Account {id} is now {}", status.as_str()),
    );
    Ok(())
}
