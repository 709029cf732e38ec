//! The command line: one module per command group. Every command takes
//! `--database-url` and `--json`; with `--json` exactly one JSON object is
//! printed on stdout (an `{"error": …}` object on failure, exit code 1).

mod account;
mod audit;
mod backup;
mod catalogue;
mod config;
mod flags;
mod funding_command;
mod http_server;
mod key;
mod limits;
mod metrics;
mod notify;
mod operator;
mod output;
mod referrals;
mod report;
mod serve;
mod supplier;
mod sync;
mod tier;
mod transaction;
mod wallet;
mod webhook;

use clap::{Parser, Subcommand};
pub use config::Settings;
use output::Output;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "billpay",
    version,
    about = "Self-hostable bill-payment service and its operator CLI"
)]
pub struct Cli {
    /// TOML configuration file (lowest precedence: env vars and flags win).
    #[arg(long, global = true, env = "BILLPAY_CONFIG")]
    pub config: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub global: GlobalSettings,
    /// Print exactly one JSON object on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// The settings every command takes as flags.
#[derive(clap::Args, Debug, serde::Serialize)]
pub struct GlobalSettings {
    /// Database: sqlite://billpay.db (relative), sqlite:///abs/path.db, or
    /// postgres://user:password@host:5432/dbname.
    #[arg(long, global = true)]
    database_url: Option<String>,
}

const SETTINGS_HELP: &str = "Every setting flag is also an environment variable \
(--sandbox-latency-ms: BILLPAY_SANDBOX_LATENCY_MS) and a key of the --config file \
(sandbox_latency_ms, or latency_ms under [sandbox]). A flag wins over the environment, \
which wins over the file.";

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the HTTP API and the background workers.
    #[command(after_help = SETTINGS_HELP)]
    Serve(Box<serve::ServeArgs>),
    /// Create or upgrade the database schema.
    Migrate,
    /// Accounts: create, show, suspend, reactivate, set-password, set-tier, developer-access,
    /// schedules, pause-schedules, close, erase.
    #[command(subcommand)]
    Account(account::AccountCommand),
    /// API keys: create, suspend, reactivate, revoke, set-rate-limit, webhook,
    /// webhook-security, webhook-retries.
    #[command(subcommand)]
    Key(key::KeyCommand),
    /// Wallets: credit, debit, statement.
    #[command(subcommand)]
    Wallet(wallet::WalletCommand),
    /// Enable or disable a provider.
    #[command(subcommand)]
    Provider(catalogue::ToggleCommand),
    /// Enable or disable a data or cable plan.
    #[command(subcommand)]
    Plan(catalogue::ToggleCommand),
    /// Import or export the product catalogue (TOML).
    #[command(subcommand)]
    Catalogue(catalogue::CatalogueCommand),
    /// Transactions: show, list, resolve, held, release, reject.
    #[command(subcommand)]
    Transaction(transaction::TransactionCommand),
    /// KYC levels of accounts: set-level, show (docs/limits.md).
    #[command(subcommand)]
    Kyc(limits::KycCommand),
    /// Limits per KYC level and per account, and the levels' names: show, set, rename.
    #[command(subcommand)]
    Limits(limits::LimitsCommand),
    /// Recipients and accounts refused at purchase: add, list, remove.
    #[command(subcommand)]
    Blocklist(limits::BlocklistCommand),
    /// Price tiers: create, list, show, rule, developer-access, offer, offers, downgrade.
    #[command(subcommand)]
    Tier(tier::TierCommand),
    /// Referrals: set (commission per product), settings, show, void.
    #[command(subcommand)]
    Referrals(referrals::ReferralsCommand),
    /// Reports: sales (face value, charged, cost, profit).
    #[command(subcommand)]
    Report(report::ReportCommand),
    /// Suppliers: balance (each float), health (back-off, last errors, costs).
    #[command(subcommand)]
    Supplier(supplier::SupplierCommand),
    /// Inspect and resend webhook events.
    #[command(subcommand)]
    Webhook(webhook::WebhookCommand),
    /// Wallet funding by bank transfer (Monnify, Paystack): reserve accounts,
    /// list, show and assign payments, reconcile with the gateways.
    #[command(after_help = SETTINGS_HELP)]
    Funding(funding_command::FundingArgs),
    /// Console operators: create, list, disable, enable, set-password, totp,
    /// and log (the operator log).
    #[command(subcommand)]
    Operator(operator::OperatorCommand),
    /// Notifications: test (one email or SMS through the configured channel).
    #[command(subcommand, after_help = SETTINGS_HELP)]
    Notify(notify::NotifyCommand),
    /// Prove the money invariants (balances = ledger, refunds, events,
    /// references); exit 1 naming the offending rows on any violation.
    Audit,
    /// Copy the SQLite database to FILE while the server runs (a consistent
    /// point in time); for PostgreSQL, says how to use pg_dump.
    Backup {
        /// The new backup file (must not exist).
        file: std::path::PathBuf,
    },
}

pub fn run(cli: Cli) -> ExitCode {
    let out = Output { json: cli.json };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let result = runtime.block_on(dispatch(cli, &out));
    match result {
        Ok(code) => code,
        Err(e) => {
            out.error(&e);
            output::exit_code(&e)
        }
    }
}

async fn dispatch(cli: Cli, out: &Output) -> anyhow::Result<ExitCode> {
    let settings = Settings::load(cli.config.as_deref(), cli.setting_flags()?)?;
    if let Command::Serve(args) = cli.command {
        config::init_logging(&settings, false);
        return serve::run(settings, *args)
            .await
            .map(|()| ExitCode::SUCCESS);
    }
    config::init_logging(&settings, true);
    if let Command::Backup { file } = &cli.command {
        return backup::run(&settings, file, out).map(|()| ExitCode::SUCCESS);
    }
    if let Command::Notify(cmd) = cli.command {
        return notify::run(cmd, &settings, out)
            .await
            .map(|()| ExitCode::SUCCESS);
    }
    let store = settings.open_store().await?;
    match cli.command {
        Command::Serve(_) | Command::Backup { .. } | Command::Notify(_) => {
            unreachable!("handled above")
        }
        Command::Migrate => out.emit(
            serde_json::json!({ "migrated": true, "database_url": config::redact(&settings.database_url) }),
            format!("Database is up to date: {}", config::redact(&settings.database_url)),
        ),
        Command::Account(cmd) => account::run(cmd, &store, out).await?,
        Command::Key(cmd) => key::run(cmd, &store, &settings, out).await?,
        Command::Wallet(cmd) => wallet::run(cmd, &store, out).await?,
        Command::Provider(cmd) => catalogue::toggle(cmd, "provider", &store, out).await?,
        Command::Plan(cmd) => catalogue::toggle(cmd, "plan", &store, out).await?,
        Command::Catalogue(cmd) => catalogue::run(cmd, &store, &settings, out).await?,
        Command::Transaction(cmd) => {
            transaction::run(cmd, &store, settings.needs_review_after(), out).await?
        }
        Command::Tier(cmd) => tier::run(cmd, &store, out).await?,
        Command::Kyc(cmd) => limits::kyc(cmd, &store, out).await?,
        Command::Limits(cmd) => limits::limits(cmd, &store, out).await?,
        Command::Blocklist(cmd) => limits::blocklist(cmd, &store, out).await?,
        Command::Referrals(cmd) => referrals::run(cmd, &store, out).await?,
        Command::Report(cmd) => report::run(cmd, &store, out).await?,
        Command::Supplier(cmd) => supplier::run(cmd, &settings, &store, out).await?,
        Command::Webhook(cmd) => webhook::run(cmd, &store, out).await?,
        Command::Funding(args) => funding_command::run(args, &store, &settings, out).await?,
        Command::Operator(cmd) => operator::run(cmd, &store, &settings, out).await?,
        Command::Audit => return audit::run(&store, out).await,
    }
    Ok(ExitCode::SUCCESS)
}

impl Cli {
    /// The settings given as flags: the global ones and the command's (the
    /// supplier's for the commands that call one).
    fn setting_flags(&self) -> anyhow::Result<Vec<figment::value::Value>> {
        use figment::value::Value;
        let command = match &self.command {
            Command::Serve(args) => Value::serialize(args),
            Command::Supplier(supplier::SupplierCommand::Balance(args)) => Value::serialize(args),
            Command::Catalogue(command) => match command.supplier_args() {
                Some(args) => Value::serialize(args),
                None => Value::serialize(()),
            },
            Command::Funding(args) => Value::serialize(&args.flags),
            Command::Notify(notify::NotifyCommand::Test(args)) => Value::serialize(&args.flags),
            _ => Value::serialize(()),
        };
        Ok(vec![Value::serialize(&self.global)?, command?])
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        super::Cli::command().debug_assert();
    }

    /// A group whose summary lists its commands ("Wallets: credit, debit,
    /// statement.") lists every one of them.
    #[test]
    fn a_group_summary_names_each_of_its_commands() {
        let cli = super::Cli::command();
        let mut checked = 0;
        for group in cli.get_subcommands() {
            let about = group.get_about().map(|a| a.to_string()).unwrap_or_default();
            let Some((_, listed)) = about.split_once(": ") else {
                continue;
            };
            let listed: Vec<&str> = listed
                .split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .filter(|w| !w.is_empty())
                .collect();
            for command in group.get_subcommands() {
                let name = command.get_name();
                assert!(
                    listed.contains(&name),
                    "`billpay {}`'s summary \"{about}\" omits {name}",
                    group.get_name()
                );
                checked += 1;
            }
        }
        assert!(checked > 10, "only {checked} commands checked");
    }

    /// Every `catalogue sync` spelling passes its supplier flags on to the
    /// settings (`sync-clubkonnect` used to drop them).
    #[test]
    fn every_catalogue_sync_passes_its_supplier_flags_on() {
        use clap::Parser;
        for sync in ["sync", "sync-vtpass", "sync-clubkonnect"] {
            let args = [
                "billpay",
                "catalogue",
                sync,
                "--supplier-low-balance",
                "2500",
            ];
            let cli = super::Cli::try_parse_from(args).unwrap();
            let flags = serde_json::to_value(cli.setting_flags().unwrap()).unwrap();
            let given = flags[1]["supplier_low_balance"].clone();
            assert_eq!(given, serde_json::json!(2500.0), "{sync}: {flags}");
        }
    }

    /// `--sandbox-unreachable` is a switch, as the README writes it.
    #[test]
    fn sandbox_unreachable_is_a_switch() {
        use clap::Parser;
        let parse = |args: &[&str]| {
            let cli = super::Cli::try_parse_from(args).unwrap();
            let super::Command::Serve(serve) = cli.command else {
                panic!("not serve");
            };
            serde_json::to_value(&serve).unwrap()["sandbox_unreachable"].clone()
        };
        let on = parse(&["billpay", "serve", "--sandbox-unreachable"]);
        assert_eq!(on, serde_json::json!(true));
        let off = parse(&["billpay", "serve", "--sandbox-unreachable=false"]);
        assert_eq!(off, serde_json::json!(false));
        assert_eq!(parse(&["billpay", "serve"]), serde_json::Value::Null);
    }
}
