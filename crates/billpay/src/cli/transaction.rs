//! `billpay transaction …`

use super::Output;
use super::output::action_error;
use billpay_domain::{AccountId, TxStatus, naira};
use billpay_operations::Actor;
use billpay_operations::transactions::{self, HeldDecision, Resolution, TxName};
use billpay_store::limits::held_words;
use billpay_store::{SharedStore, Transaction, TxFilter};
use billpay_webkit::format::lagos_time;
use billpay_worker::fulfilment::needs_review_before;
use clap::Subcommand;
use serde_json::json;
use std::time::Duration;

#[derive(Subcommand, Debug)]
pub enum TransactionCommand {
    /// One transaction by reference_code or client reference (a reference
    /// more than one account used needs --account).
    Show {
        reference_or_code: String,
        /// The account whose reference it is.
        #[arg(long)]
        account: Option<AccountId>,
    },
    /// An account's transactions, newest first; or, with --needs-review,
    /// every account's purchases unknown for longer than
    /// BILLPAY_NEEDS_REVIEW_AFTER_SECS (default 24 h).
    List {
        #[arg(long, required_unless_present = "needs_review")]
        account: Option<AccountId>,
        #[arg(long)]
        needs_review: bool,
        /// processing, successful or failed.
        #[arg(long)]
        status: Option<TxStatus>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// The operator's decision on a purchase whose outcome the supplier
    /// never made clear: --successful, or --failed (refunds the wallet once).
    /// The client's webhook goes out as for any final status.
    Resolve {
        reference_or_code: String,
        /// The account whose reference it is (a reference more than one
        /// account used is refused without it).
        #[arg(long)]
        account: Option<AccountId>,
        #[arg(long, conflicts_with = "failed", required_unless_present = "failed")]
        successful: bool,
        #[arg(long)]
        failed: bool,
        /// Why (e.g. what the supplier said); logged with the decision and the actor.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Purchases held for review by a velocity rule or the largest balance
    /// (docs/limits.md), oldest first, with the rule that held each.
    Held,
    /// Sends a held purchase on to the supplier, as any purchase.
    Release {
        reference_or_code: String,
        #[arg(long)]
        account: Option<AccountId>,
        /// Why; logged with the decision and the actor.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Fails a held purchase and refunds the wallet once (the customer's
    /// webhook and notice go out as for any failure).
    Reject {
        reference_or_code: String,
        #[arg(long)]
        account: Option<AccountId>,
        /// Why; logged with the decision and the actor.
        #[arg(long)]
        reason: String,
    },
}

pub async fn run(
    cmd: TransactionCommand,
    store: &SharedStore,
    review_after: Duration,
    out: &Output,
) -> anyhow::Result<()> {
    let review_before = needs_review_before(review_after);
    match cmd {
        TransactionCommand::Show {
            reference_or_code,
            account,
        } => {
            let name = TxName {
                reference_or_code: &reference_or_code,
                account,
            };
            let tx = transactions::find(store.as_ref(), name)
                .await
                .map_err(action_error)?;
            // A held purchase waits for an owner (`billpay transaction held`).
            let needs_review = tx.needs_review(&review_before);
            let profit = transactions::profit(&tx);
            let text = format!(
                "{}\n  reference  {}\n  account    {}\n  product    {} ({})\n  item/plan  {}\n  recipient  {}\n  face value {}\n  charged    {} ({})\n  cost       {}\n  profit     {}\n  status     {}: {}\n  result     {}\n  supplier   {} {}\n  created    {}\n  completed  {}",
                tx.code,
                tx.reference,
                tx.account_id,
                tx.product,
                tx.provider,
                tx.label,
                tx.recipient,
                tx.face_value,
                tx.amount,
                tx.tier.as_deref().unwrap_or("list price"),
                tx.cost.map_or_else(|| "unknown".into(), |c| c.to_string()),
                profit.map_or_else(|| "unknown".into(), |p| p.to_string()),
                tx.status,
                tx.message,
                tx.result,
                tx.supplier.as_deref().unwrap_or("- (not sent yet)"),
                tx.supplier_reference.as_deref().unwrap_or(""),
                lagos_time(&tx.created_at),
                tx.completed_at
                    .as_deref()
                    .map_or_else(|| "-".into(), lagos_time)
            );
            let why = match &tx.review_requested_at {
                Some(at) => format!(
                    "the supplier's books cannot say since {} (the result's last_note)",
                    lagos_time(at)
                ),
                None => "outcome unknown for too long".to_owned(),
            };
            let text = if needs_review {
                format!(
                    "{text}\n  REVIEW     {why}: ask the supplier, then `billpay transaction resolve {} --successful|--failed`",
                    tx.code
                )
            } else {
                text
            };
            out.emit(
                json!({ "transaction": tx, "needs_review": needs_review, "profit": profit }),
                text,
            );
        }
        TransactionCommand::List {
            account,
            needs_review,
            status,
            limit,
        } => {
            let filter = if needs_review {
                TxFilter::needs_review(review_before, limit)
            } else {
                TxFilter {
                    status,
                    ..TxFilter::default()
                }
            };
            let list = store
                .transactions(TxFilter {
                    account_id: account,
                    limit,
                    ..filter
                })
                .await?;
            let text = list.iter().map(line).collect::<Vec<_>>().join("\n");
            out.emit(
                json!({ "transactions": list }),
                if text.is_empty() {
                    "No transactions".into()
                } else {
                    text
                },
            );
        }
        TransactionCommand::Resolve {
            reference_or_code,
            account,
            successful,
            failed: _,
            reason,
        } => {
            let resolution = if successful {
                Resolution::Successful
            } else {
                Resolution::Failed
            };
            let (code, status) = transactions::resolve(
                store.as_ref(),
                Actor::Cli,
                TxName {
                    reference_or_code: &reference_or_code,
                    account,
                },
                resolution,
                reason.as_deref(),
            )
            .await
            .map_err(action_error)?;
            out.emit(
                json!({ "reference_code": code, "status": status, "resolved": true }),
                format!("{code} resolved as {status}"),
            );
        }
        TransactionCommand::Held => {
            let held = transactions::held(store.as_ref(), &Actor::Cli)
                .await
                .map_err(action_error)?;
            let text = if held.is_empty() {
                "No purchase is held for review".to_owned()
            } else {
                held.iter()
                    .map(|tx| {
                        format!(
                            "{}  {}  {}  {} {}  account {}  held: {}",
                            tx.code,
                            lagos_time(&tx.created_at),
                            naira(tx.amount),
                            tx.product,
                            tx.recipient,
                            tx.account_id,
                            held_words(tx.held_for.as_deref().unwrap_or_default())
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            out.emit(json!({ "held": held }), text);
        }
        TransactionCommand::Release {
            reference_or_code,
            account,
            reason,
        } => {
            let name = TxName {
                reference_or_code: &reference_or_code,
                account,
            };
            let tx = transactions::decide_held(
                store.as_ref(),
                Actor::Cli,
                name,
                HeldDecision::Release,
                reason.as_deref(),
            )
            .await
            .map_err(action_error)?;
            out.emit(
                json!({ "reference_code": tx.code, "status": tx.status, "released": true }),
                format!("{} released: it goes to the supplier now", tx.code),
            );
        }
        TransactionCommand::Reject {
            reference_or_code,
            account,
            reason,
        } => {
            let name = TxName {
                reference_or_code: &reference_or_code,
                account,
            };
            let tx = transactions::decide_held(
                store.as_ref(),
                Actor::Cli,
                name,
                HeldDecision::Reject,
                Some(&reason),
            )
            .await
            .map_err(action_error)?;
            out.emit(
                json!({ "reference_code": tx.code, "status": tx.status, "rejected": true }),
                format!(
                    "{} rejected: failed, {} refunded to the wallet",
                    tx.code,
                    naira(tx.amount)
                ),
            );
        }
    }
    Ok(())
}

fn line(tx: &Transaction) -> String {
    format!(
        "{}  {:<10}  {:<11}  {:>12}  {}  {}",
        tx.created_at,
        tx.status.as_str(),
        tx.product.service(),
        tx.amount.to_string(),
        tx.code,
        tx.reference
    )
}
