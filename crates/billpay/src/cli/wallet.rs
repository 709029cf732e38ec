//! `billpay wallet …`

use super::Output;
use super::output::action_error;
use billpay_domain::{AccountId, Kobo, naira};
use billpay_operations::{Actor, wallets};
use billpay_store::SharedStore;
use billpay_webkit::format::sortable_time;
use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum WalletCommand {
    /// Credit a wallet once per reference (a repeat changes nothing).
    Credit {
        #[arg(long)]
        account: AccountId,
        /// Naira, at most 2 decimal places.
        #[arg(long, allow_hyphen_values = true)]
        amount: String,
        /// Your unique reference for this funding (e.g. the bank transfer id).
        #[arg(long)]
        reference: String,
        /// Why (e.g. "bank transfer 12 Nov"); logged with the credit and the actor.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Debit a wallet once per reference (a correction); needs a reason.
    Debit {
        #[arg(long)]
        account: AccountId,
        /// Naira, at most 2 decimal places.
        #[arg(long, allow_hyphen_values = true)]
        amount: String,
        /// Your unique reference for this correction.
        #[arg(long)]
        reference: String,
        /// Why; recorded in the operator log with the balance before and after.
        #[arg(long)]
        reason: String,
    },
    /// Balance, ledger sum and the latest ledger entries.
    Statement {
        #[arg(long)]
        account: AccountId,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
}

pub async fn run(cmd: WalletCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    match cmd {
        WalletCommand::Credit {
            account,
            amount,
            reference,
            reason,
        } => {
            let amount =
                Kobo::parse_typed_naira(&amount).map_err(|e| anyhow::anyhow!("--amount {e}"))?;
            let credit = wallets::credit(
                store.as_ref(),
                Actor::Cli,
                account,
                amount,
                &reference,
                reason.as_deref(),
            )
            .await
            .map_err(action_error)?;
            let text = if credit.applied {
                format!(
                    "Credited {}; balance {}",
                    naira(amount),
                    naira(credit.balance)
                )
            } else {
                format!(
                    "Reference {reference} was already credited; balance {}",
                    naira(credit.balance)
                )
            };
            out.emit(
                json!({ "balance": credit.balance, "applied": credit.applied }),
                text,
            );
        }
        WalletCommand::Debit {
            account,
            amount,
            reference,
            reason,
        } => {
            let amount =
                Kobo::parse_typed_naira(&amount).map_err(|e| anyhow::anyhow!("--amount {e}"))?;
            let debit = wallets::debit(
                store.as_ref(),
                Actor::Cli,
                account,
                amount,
                &reference,
                Some(&reason),
            )
            .await
            .map_err(action_error)?;
            let text = if debit.applied {
                format!(
                    "Debited {}; balance {}",
                    naira(amount),
                    naira(debit.balance)
                )
            } else {
                format!(
                    "Reference {reference} was already used; balance {}",
                    naira(debit.balance)
                )
            };
            out.emit(
                json!({ "balance": debit.balance, "applied": debit.applied }),
                text,
            );
        }
        WalletCommand::Statement { account, limit } => {
            let balance = store.balance(account).await?;
            let sum = store.ledger_sum(account).await?;
            let entries = store.ledger(account, limit).await?;
            let mut text = format!("Balance {} (ledger sum {})\n", naira(balance), naira(sum));
            for e in &entries {
                text.push_str(&format!(
                    "{} WAT  {:>7}  {:>14}  → {:>14}  {}\n",
                    sortable_time(&e.created_at),
                    e.kind,
                    naira(e.amount),
                    naira(e.balance_after),
                    e.transaction_code
                        .as_deref()
                        .or(e.credit_reference.as_deref())
                        .unwrap_or("")
                ));
            }
            out.emit(
                json!({ "balance": balance, "ledger_sum": sum, "entries": entries }),
                text.trim_end(),
            );
        }
    }
    Ok(())
}
