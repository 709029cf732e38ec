//! `billpay catalogue …`, `billpay provider …`, `billpay plan …`

use super::Output;
use super::output::action_error;
use anyhow::Context;
use billpay_domain::catalogue::Catalogue;
use billpay_operations::Actor;
use billpay_operations::catalogue::{Sellable, set_on_sale};
use billpay_store::SharedStore;
use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum CatalogueCommand {
    /// Replace the catalogue with a TOML file (validated first; running servers reload within a second).
    Import { file: std::path::PathBuf },
    /// Print the current catalogue as TOML (with --json, as JSON).
    Export,
    /// Compare the data and cable plans with a supplier's (`--supplier`,
    /// else BILLPAY_SUPPLIER): new plans, price changes, plans it no longer
    /// sells; --apply takes its prices and disables the missing plans.
    Sync {
        #[arg(long)]
        apply: bool,
        #[command(flatten)]
        supplier: super::supplier::SupplierArgs,
    },
    /// `sync --supplier vtpass`.
    SyncVtpass {
        #[arg(long)]
        apply: bool,
        #[command(flatten)]
        supplier: super::supplier::SupplierArgs,
    },
    /// `sync --supplier clubkonnect`.
    SyncClubkonnect {
        #[arg(long)]
        apply: bool,
        #[command(flatten)]
        supplier: super::supplier::SupplierArgs,
    },
}

impl CatalogueCommand {
    /// The supplier flags of a command that calls a supplier (every sync
    /// and its aliases: one match, so an alias cannot drop its flags).
    pub fn supplier_args(&self) -> Option<&super::supplier::SupplierArgs> {
        match self {
            CatalogueCommand::Sync { supplier, .. }
            | CatalogueCommand::SyncVtpass { supplier, .. }
            | CatalogueCommand::SyncClubkonnect { supplier, .. } => Some(supplier),
            CatalogueCommand::Import { .. } | CatalogueCommand::Export => None,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum ToggleCommand {
    /// Put it on sale.
    Enable { target: String },
    /// Take it off sale (purchases answer invalid_provider / invalid_plan).
    Disable { target: String },
}

pub async fn run(
    cmd: CatalogueCommand,
    store: &SharedStore,
    settings: &super::Settings,
    out: &Output,
) -> anyhow::Result<()> {
    match cmd {
        CatalogueCommand::Sync { apply, .. } => {
            super::sync::run(None, apply, settings, store, out).await?
        }
        CatalogueCommand::SyncVtpass { apply, .. } => {
            super::sync::run(Some("vtpass"), apply, settings, store, out).await?
        }
        CatalogueCommand::SyncClubkonnect { apply, .. } => {
            super::sync::run(Some("clubkonnect"), apply, settings, store, out).await?
        }
        CatalogueCommand::Import { file } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let catalogue = Catalogue::from_toml(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            billpay_operations::pricing::check_catalogue_floor(store.as_ref(), &catalogue)
                .await
                .map_err(action_error)?;
            store.replace_catalogue(&catalogue).await?;
            out.emit(
                json!({ "imported": true, "providers": catalogue.providers.len(), "data_plans": catalogue.data_plans.len(), "cable_plans": catalogue.cable_plans.len() }),
                format!("Imported {} providers, {} data plans, {} cable plans", catalogue.providers.len(), catalogue.data_plans.len(), catalogue.cable_plans.len()),
            );
        }
        CatalogueCommand::Export => {
            let (version, catalogue) = store.catalogue().await?;
            if out.json {
                out.emit(json!({ "version": version, "catalogue": catalogue }), "");
            } else {
                print!("{}", catalogue.to_toml());
            }
        }
    }
    Ok(())
}

pub async fn toggle(
    cmd: ToggleCommand,
    kind: &str,
    store: &SharedStore,
    out: &Output,
) -> anyhow::Result<()> {
    let (target, active) = match cmd {
        ToggleCommand::Enable { target } => (target, true),
        ToggleCommand::Disable { target } => (target, false),
    };
    let kind = if kind == "provider" {
        Sellable::Provider
    } else {
        Sellable::Plan
    };
    let what = set_on_sale(store.as_ref(), Actor::Cli, kind, &target, active)
        .await
        .map_err(super::output::action_error)?;
    let state = if active { "enabled" } else { "disabled" };
    out.emit(
        json!({ "target": target, "active": active, "changed": what }),
        format!("{what} {state}"),
    );
    Ok(())
}
