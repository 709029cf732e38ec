//! `billpay operator …`: the console's operators (not customers) and the
//! operator log. The CLI acts as `cli` and may do everything.

use super::Output;
use super::config::Settings;
use super::output::action_error;
use billpay_operations::{Actor, operators};
use billpay_store::{LogFilter, Operator, OperatorRole, OperatorStatus, SharedStore};
use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum OperatorCommand {
    /// Create a console operator. Without --password one is generated and shown once.
    Create {
        #[arg(long)]
        email: String,
        /// owner (everything) or support (reads; requery/resolve purchases; resend webhooks).
        #[arg(long, value_parser = parse_role)]
        role: OperatorRole,
        /// At least 8 characters (hashed with argon2id).
        #[arg(long)]
        password: Option<String>,
    },
    /// List the operators.
    List,
    /// Disable an operator: its console sessions end at once.
    Disable { email: String },
    /// Enable a disabled operator again.
    Enable { email: String },
    /// Set an operator's password (its sessions end). Without --password one
    /// is generated and shown once.
    SetPassword {
        email: String,
        #[arg(long)]
        password: Option<String>,
    },
    /// Turn on the TOTP second factor: the secret and otpauth URI are shown once.
    Totp {
        email: String,
        /// Required: a new secret replaces any earlier one.
        #[arg(long)]
        enable: bool,
    },
    /// The operator log (who, when, what, before → after, why), newest first.
    Log {
        /// Only lines about this subject (an account id, a reference_code, an email).
        #[arg(long)]
        subject: Option<String>,
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
}

fn parse_role(text: &str) -> Result<OperatorRole, String> {
    text.parse()
        .map_err(|_| format!("{text} is not a role: owner or support"))
}

pub async fn run(
    cmd: OperatorCommand,
    store: &SharedStore,
    settings: &Settings,
    out: &Output,
) -> anyhow::Result<()> {
    let store_ref = store.as_ref();
    match cmd {
        OperatorCommand::Create {
            email,
            role,
            password,
        } => {
            let (password, generated) = password_or_generated(password);
            let operator = operators::create(store_ref, Actor::Cli, &email, role, &password)
                .await
                .map_err(action_error)?;
            let shown = generated.then_some(password.as_str());
            let mut text = format!("Created operator {} ({})", operator.email, operator.role);
            if let Some(password) = shown {
                text.push_str(&format!("\nPassword (shown once): {password}"));
            }
            out.emit(
                json!({ "operator": operator, "generated_password": shown }),
                text,
            );
        }
        OperatorCommand::List => {
            let all = operators::list(store_ref, &Actor::Cli)
                .await
                .map_err(action_error)?;
            let text = all.iter().map(describe).collect::<Vec<_>>().join("\n");
            out.emit(json!({ "operators": all }), text);
        }
        OperatorCommand::Disable { email } => {
            set_status(store, out, &email, OperatorStatus::Disabled).await?
        }
        OperatorCommand::Enable { email } => {
            set_status(store, out, &email, OperatorStatus::Active).await?
        }
        OperatorCommand::SetPassword { email, password } => {
            let (password, generated) = password_or_generated(password);
            let operator = operators::set_password(store_ref, Actor::Cli, &email, &password)
                .await
                .map_err(action_error)?;
            let shown = generated.then_some(password.as_str());
            let mut text = format!("Password set for {}; its sessions ended", operator.email);
            if let Some(password) = shown {
                text.push_str(&format!("\nPassword (shown once): {password}"));
            }
            out.emit(
                json!({ "operator": operator, "generated_password": shown }),
                text,
            );
        }
        OperatorCommand::Totp { email, enable } => {
            if !enable {
                anyhow::bail!(
                    "say --enable to turn TOTP on (a new secret replaces any earlier one)"
                );
            }
            let secrets = settings.secret_box()?;
            let enabled = operators::enable_totp(store_ref, Actor::Cli, &email, &secrets)
                .await
                .map_err(action_error)?;
            out.emit(
                json!({ "email": enabled.operator.email, "totp_secret": enabled.secret, "otpauth_uri": enabled.uri }),
                format!(
                    "TOTP enabled for {}\nSecret (shown once): {}\notpauth URI (shown once): {}",
                    enabled.operator.email, enabled.secret, enabled.uri
                ),
            );
        }
        OperatorCommand::Log { subject, limit } => {
            let filter = LogFilter {
                subject,
                limit: limit.clamp(1, 10_000),
                ..LogFilter::default()
            };
            let lines = operators::log(store_ref, &Actor::Cli, filter)
                .await
                .map_err(action_error)?;
            let text = lines
                .iter()
                .map(|l| {
                    let who = l.operator_email.as_deref().unwrap_or(&l.actor);
                    let before = l.before.as_deref().unwrap_or("-");
                    let after = l.after.as_deref().unwrap_or("-");
                    let reason = l.reason.as_deref().unwrap_or("");
                    format!(
                        "{}  {who}  {}  {}  {before} -> {after}  {reason}",
                        l.at, l.action, l.subject
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            out.emit(json!({ "entries": lines }), text);
        }
    }
    Ok(())
}

async fn set_status(
    store: &SharedStore,
    out: &Output,
    email: &str,
    status: OperatorStatus,
) -> anyhow::Result<()> {
    let operator = operators::set_status(store.as_ref(), Actor::Cli, email, status)
        .await
        .map_err(action_error)?;
    out.emit(
        json!({ "operator": operator }),
        format!("Operator {} is now {}", operator.email, operator.status),
    );
    Ok(())
}

/// The given password, or a new random one (and `true`: show it once).
fn password_or_generated(password: Option<String>) -> (String, bool) {
    match password {
        Some(password) => (password, false),
        None => (billpay_domain::keys::random_hex(12), true),
    }
}

fn describe(o: &Operator) -> String {
    let totp = if o.totp_enabled() {
        "TOTP on"
    } else {
        "TOTP off"
    };
    format!("{}  {}  {}  {}  {totp}", o.id, o.email, o.role, o.status)
}
