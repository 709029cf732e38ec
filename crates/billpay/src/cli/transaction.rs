//! `billpay transaction …`

use super::Output;
use billpay_domain::{AccountId, TxStatus};
use billpay_store::{SharedStore, Transaction, TxFilter, TxLookup};
use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum TransactionCommand {
    /// One transaction by reference_code or client reference.
    Show { reference_or_code: String },
    /// An account's transactions, newest first.
    List {
        #[arg(long)]
        account: AccountId,
        /// processing, successful or failed.
        #[arg(long)]
        status: Option<TxStatus>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
}

pub async fn run(cmd: TransactionCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    match cmd {
        TransactionCommand::Show { reference_or_code } => {
            let tx = match store
                .transaction(None, TxLookup::Code(reference_or_code.clone()))
                .await?
            {
                Some(tx) => Some(tx),
                None => {
                    store
                        .transaction(None, TxLookup::Reference(reference_or_code.clone()))
                        .await?
                }
            };
            let tx = tx.ok_or_else(|| {
                anyhow::anyhow!("no transaction with reference or code {reference_or_code}")
            })?;
            let text = format!(
                "{}\n  reference  {}\n  account    {}\n  product    {} ({})\n  item/plan  {}\n  recipient  {}\n  amount     {}\n  status     {}: {}\n  result     {}\n  created    {}\n  completed  {}",
                tx.code,
                tx.reference,
                tx.account_id,
                tx.product,
                tx.provider,
                tx.label,
                tx.recipient,
                tx.amount,
                tx.status,
                tx.message,
                tx.result,
                tx.created_at,
                tx.completed_at.as_deref().unwrap_or("-")
            );
            out.emit(json!({ "transaction": tx }), text);
        }
        TransactionCommand::List {
            account,
            status,
            limit,
        } => {
            let list = store
                .transactions(TxFilter {
                    account_id: Some(account),
                    status,
                    limit,
                    ..TxFilter::default()
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
