//! `billpay account …`

use super::Output;
use billpay_domain::AccountId;
use billpay_store::{AccountStatus, NewAccount, SharedStore};
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
    },
    /// Suspend an account: its keys stop working within a request.
    Suspend { account_id: AccountId },
    /// Reactivate a suspended account.
    Reactivate { account_id: AccountId },
    /// Set the dashboard password.
    SetPassword {
        account_id: AccountId,
        #[arg(long)]
        password: String,
    },
}

pub async fn run(cmd: AccountCommand, store: &SharedStore, out: &Output) -> anyhow::Result<()> {
    match cmd {
        AccountCommand::Create {
            name,
            email,
            password,
        } => {
            let name = name.trim().to_owned();
            anyhow::ensure!(!name.is_empty(), "--name must not be empty");
            anyhow::ensure!(
                valid_email(&email),
                "--email is not an email address: {email}"
            );
            let password_hash = password.as_deref().map(hash_password).transpose()?;
            let account = store
                .create_account(NewAccount {
                    name,
                    email,
                    password_hash,
                })
                .await?;
            out.emit(
                json!({ "account_id": account.id, "name": account.name, "email": account.email, "status": account.status }),
                format!("Created account {} ({})", account.id, account.email),
            );
        }
        AccountCommand::Suspend { account_id } => {
            set_status(store, out, account_id, AccountStatus::Suspended).await?
        }
        AccountCommand::Reactivate { account_id } => {
            set_status(store, out, account_id, AccountStatus::Active).await?
        }
        AccountCommand::SetPassword {
            account_id,
            password,
        } => {
            store
                .set_account_password(account_id, hash_password(&password)?)
                .await?;
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
    store.set_account_status(id, status).await?;
    out.emit(
        json!({ "account_id": id, "status": status }),
        format!("Account {id} is now {}", status.as_str()),
    );
    Ok(())
}

fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !email.contains(char::is_whitespace)
}

fn hash_password(password: &str) -> anyhow::Result<String> {
    Ok(billpay_domain::password::hash(password)?)
}
