//! `billpay funding …` (reserve, list, show, assign, reconcile), with the
//! gateways' flags (`GatewayFlags`: also `BILLPAY_MONNIFY_*`,
//! `BILLPAY_PAYSTACK_*`, `BILLPAY_FUNDING_*` and the config file's
//! `[monnify]`, `[paystack]`, `[funding]`), and the worker's `Funding` built
//! from the settings. The gateways themselves are registered in
//! `billpay_funding::registry`.

use super::Output;
use super::config::Settings;
use super::flags::GatewayFlags;
use super::output::action_error;
use billpay_domain::{AccountId, naira};
use billpay_funding::FeeRule;
use billpay_funding::registry;
use billpay_operations::{Actor, bank_transfers};
use billpay_store::{FundingEvent, FundingStatus, SharedStore};
use billpay_webkit::format::sortable_time;
use billpay_worker::Funding;
use clap::Subcommand;
use clap::builder::PossibleValuesParser;
use serde_json::json;
use std::time::Duration;

/// The configured gateways and the fee, as the worker's `Funding`.
pub fn service(settings: &Settings, store: SharedStore) -> anyhow::Result<Funding> {
    let fee: FeeRule = settings
        .funding
        .fee_rule()
        .map_err(|problems| anyhow::anyhow!(problems.join("; ")))?;
    let mut gateways = Vec::new();
    for (registration, gateway) in registry::configured(&settings.gateways)? {
        gateways.push(gateway);
        tracing::info!(
            gateway = registration.title,
            "wallets are funded by bank transfer through it"
        );
    }
    let surcharge = settings.funding.fee_as_surcharge;
    Ok(Funding::new(store, gateways, fee).with_surcharge(surcharge))
}

#[derive(clap::Args, Debug)]
pub struct FundingArgs {
    #[command(subcommand)]
    command: FundingCommand,
    #[command(flatten)]
    pub flags: GatewayFlags,
}

#[derive(Subcommand, Debug)]
pub enum FundingCommand {
    /// Reserve bank accounts for an account at a gateway (again: shows those held).
    Reserve {
        #[arg(long)]
        account: AccountId,
        #[arg(long, value_parser = PossibleValuesParser::new(registry::names()))]
        gateway: String,
        /// The customer's BVN (Monnify needs a BVN or a NIN).
        #[arg(long, conflicts_with = "nin")]
        bvn: Option<String>,
        /// The customer's NIN.
        #[arg(long)]
        nin: Option<String>,
    },
    /// Payments received, newest first.
    List {
        #[arg(long)]
        account: Option<AccountId>,
        #[arg(long, value_parser = ["credited", "unmatched", "rejected", "pending_verification"])]
        status: Option<String>,
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// One payment, by its funding id or gateway reference.
    Show { funding_id: String },
    /// Credit an unmatched payment to an account (once).
    Assign {
        funding_id: String,
        #[arg(long)]
        account: AccountId,
        /// Why it is this customer's payment (kept in the operator log).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Ask the gateways for their payments and credit those never credited here.
    Reconcile {
        #[arg(long, default_value_t = 48)]
        since_hours: u64,
    },
}

pub async fn run(
    args: FundingArgs,
    store: &SharedStore,
    settings: &Settings,
    out: &Output,
) -> anyhow::Result<()> {
    let service = || service(settings, store.clone());
    match args.command {
        FundingCommand::Reserve {
            account,
            gateway,
            bvn,
            nin,
        } => {
            let (bvn, nin) = (bvn.as_deref(), nin.as_deref());
            let gateways = service()?;
            let reserve = bank_transfers::reserve(
                store.as_ref(),
                &gateways,
                Actor::Cli,
                account,
                &gateway,
                bvn,
                nin,
            );
            let held = reserve.await.map_err(action_error)?;
            let accounts: Vec<_> = held
                .iter()
                .map(|a| json!({"gateway": a.gateway, "bank_name": a.bank_name, "account_number": a.account_number, "account_name": a.account_name}))
                .collect();
            let mut text = format!("{} account(s) at {gateway} for {account}:", held.len());
            if held.is_empty() {
                text.push_str("\n  (being assigned by the gateway: run this again shortly)");
            }
            for a in &held {
                text.push_str(&format!(
                    "\n  {}  {}  {}",
                    a.bank_name, a.account_number, a.account_name
                ));
            }
            out.emit(json!({ "accounts": accounts }), text);
        }
        FundingCommand::List {
            account,
            status,
            limit,
        } => {
            let status = status
                .map(|s| s.parse::<FundingStatus>())
                .transpose()
                .map_err(anyhow::Error::msg)?;
            let events = bank_transfers::list(store.as_ref(), account, status, limit)
                .await
                .map_err(action_error)?;
            let text = events.iter().map(line).collect::<Vec<_>>().join("\n");
            let text = if text.is_empty() {
                "No payments.".into()
            } else {
                text
            };
            out.emit(json!({ "fundings": events }), text);
        }
        FundingCommand::Show { funding_id } => {
            let event = bank_transfers::show(store.as_ref(), &funding_id)
                .await
                .map_err(action_error)?;
            let text = serde_json::to_string_pretty(&event)?;
            out.emit(serde_json::to_value(&event)?, text);
        }
        FundingCommand::Assign {
            funding_id,
            account,
            reason,
        } => {
            let gateways = service()?;
            let assign = bank_transfers::assign(
                store.as_ref(),
                &gateways,
                Actor::Cli,
                &funding_id,
                account,
                reason.as_deref(),
            );
            let event = assign.await.map_err(action_error)?;
            let text = format!(
                "Credited {} to {account} ({})",
                naira(event.credited),
                event.id
            );
            out.emit(serde_json::to_value(&event)?, text);
        }
        FundingCommand::Reconcile { since_hours } => {
            let since = Duration::from_secs(since_hours.max(1) * 3600);
            let report = bank_transfers::reconcile(store.as_ref(), &service()?, Actor::Cli, since)
                .await
                .map_err(action_error)?;
            let mut text = String::new();
            for run in &report {
                text.push_str(&format!(
                    "{}: {} paid listed, {} credited now{}\n",
                    run.gateway,
                    run.listed,
                    run.credited.len(),
                    run.error
                        .as_ref()
                        .map(|e| format!(" (listing failed: {e})"))
                        .unwrap_or_default()
                ));
                for event in run.credited.iter().chain(&run.not_credited) {
                    text.push_str(&format!("  {}\n", line(event)));
                }
            }
            let credited: usize = report.iter().map(|r| r.credited.len()).sum();
            out.emit(
                json!({ "gateways": report, "credited": credited }),
                text.trim_end(),
            );
        }
    }
    Ok(())
}

fn line(e: &FundingEvent) -> String {
    let account = e
        .account_id
        .map(|a| a.to_string())
        .unwrap_or_else(|| "-".into());
    format!(
        "{} WAT  {}  {:<8} {:<21} {:>12}  fee {:>8}  {}  {}",
        sortable_time(&e.created_at),
        e.id,
        e.gateway,
        e.status.as_str(),
        e.amount.to_string(),
        e.fee.to_string(),
        account,
        e.gateway_reference
    )
}
