//! Settings: built-in defaults < TOML file (`--config`) < `BILLPAY_*`
//! environment variables < flags. (clap merges env and flags; the file fills
//! in what neither gave.)

use anyhow::Context;
use billpay_domain::sealed::SecretBox;
use billpay_store::SharedStore;
use billpay_store::sealing::SealedStore;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub const DEFAULT_DATABASE_URL: &str = "sqlite://billpay.db";
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// The TOML file's keys (all optional), named like the env vars without `BILLPAY_`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<String>,
    pub metrics_listen: Option<String>,
    pub header_timeout_secs: Option<u64>,
    pub body_timeout_secs: Option<u64>,
    pub body_deadline_secs: Option<u64>,
    pub max_connections: Option<usize>,
    pub database_url: Option<String>,
    pub master_key: Option<String>,
    pub sandbox_latency_ms: Option<u64>,
    pub sandbox_unreachable: Option<bool>,
    pub rate_limit_per_second: Option<u32>,
    pub rate_limit_burst: Option<u32>,
    pub webhook_allow_private: Option<bool>,
    pub redis_url: Option<String>,
    pub delivery_lease_secs: Option<u64>,
    pub webhook_concurrency: Option<usize>,
    pub webhook_concurrency_per_key: Option<usize>,
    pub log_format: Option<String>,
    pub log: Option<String>,
    pub supplier: Option<String>,
    pub vtpass_base_url: Option<String>,
    pub vtpass_api_key: Option<String>,
    pub vtpass_secret_key: Option<String>,
    pub vtpass_public_key: Option<String>,
    pub vtpass_timeout_ms: Option<u64>,
    pub supplier_low_balance: Option<f64>,
    pub needs_review_after_secs: Option<u64>,
    /// `airtime = ["vtpass", "sandbox"]`, `"airtime.glo" = ["sandbox"]`.
    pub routes: Option<std::collections::HashMap<String, Vec<String>>>,
}

pub struct Settings {
    pub database_url: String,
    pub file: FileConfig,
}

impl Settings {
    pub fn load(config: Option<&Path>, database_url: Option<String>) -> anyhow::Result<Settings> {
        let file = match config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read config file {}", path.display()))?;
                toml::from_str(&text)
                    .with_context(|| format!("invalid config file {}", path.display()))?
            }
            None => FileConfig::default(),
        };
        let database_url = database_url
            .or_else(|| file.database_url.clone())
            .unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        Ok(Settings { database_url, file })
    }

    /// The database, sealing what purchases deliver under the master key
    /// (a command that never reads a pin works without one).
    pub async fn open_store(&self) -> anyhow::Result<SharedStore> {
        let store = billpay_store::open(&self.database_url)
            .await
            .with_context(|| format!("cannot open database {}", redact(&self.database_url)))?;
        let secrets = self.secret_box().map_err(|e| format!("{e:#}"));
        Ok(SealedStore::wrap(store, secrets))
    }

    /// The master key that seals webhook secrets: `BILLPAY_MASTER_KEY` or the
    /// config file, else (SQLite) a key file beside the database, created once.
    /// PostgreSQL has no such file: the key must be configured.
    pub fn secret_box(&self) -> anyhow::Result<SecretBox> {
        if let Some(hex) = self.configured_master_key() {
            return SecretBox::from_hex(&hex).context("BILLPAY_MASTER_KEY");
        }
        anyhow::ensure!(
            !billpay_store::is_postgres_url(&self.database_url),
            "BILLPAY_MASTER_KEY is required with PostgreSQL: set it (64 hex characters, e.g. \
             from `openssl rand -hex 32`) to the same value on every node and CLI host; \
             there is no key file beside a PostgreSQL database"
        );
        let path = self.master_key_file()?;
        if let Ok(hex) = std::fs::read_to_string(&path) {
            return SecretBox::from_hex(&hex)
                .with_context(|| format!("master key file {}", path.display()));
        }
        let hex = SecretBox::generate_master_key();
        write_private(&path, &hex)
            .with_context(|| format!("cannot create master key file {}", path.display()))?;
        tracing::info!(path = %path.display(), "created the master key file; back it up with the database");
        Ok(SecretBox::from_hex(&hex)?)
    }

    /// How long a purchase may stay unknown before it needs the operator's
    /// review: `BILLPAY_NEEDS_REVIEW_AFTER_SECS` or the file, default 24 h.
    pub fn needs_review_after(&self) -> anyhow::Result<std::time::Duration> {
        let secs = match std::env::var("BILLPAY_NEEDS_REVIEW_AFTER_SECS") {
            Ok(text) => Some(
                text.parse()
                    .context("BILLPAY_NEEDS_REVIEW_AFTER_SECS must be a number of seconds")?,
            ),
            Err(_) => self.file.needs_review_after_secs,
        };
        Ok(secs.map_or(
            billpay_worker::fulfilment::DEFAULT_NEEDS_REVIEW_AFTER,
            std::time::Duration::from_secs,
        ))
    }

    /// Whether the master key comes from the environment or the file (not a key file).
    pub fn master_key_configured(&self) -> bool {
        self.configured_master_key().is_some()
    }

    fn configured_master_key(&self) -> Option<String> {
        std::env::var("BILLPAY_MASTER_KEY")
            .ok()
            .or_else(|| self.file.master_key.clone())
    }

    pub fn master_key_file(&self) -> anyhow::Result<PathBuf> {
        let db = billpay_store::sqlite::path_from_url(&self.database_url)
            .context("set BILLPAY_MASTER_KEY (64 hex characters) for this database")?;
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".key");
        Ok(db.with_file_name(name))
    }
}

fn write_private(path: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(content.as_bytes())
}

/// A database URL without its password, for messages.
pub use billpay_store::redact_url as redact;

/// Logs go to stderr (stdout is for command output). `BILLPAY_LOG` filters;
/// `BILLPAY_LOG_FORMAT=json` for JSON lines. CLI commands log warnings only.
pub fn init_logging(settings: &Settings, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let default = if quiet { "warn" } else { "info" };
    let filter = std::env::var("BILLPAY_LOG")
        .ok()
        .or_else(|| settings.file.log.clone())
        .unwrap_or_else(|| default.to_owned());
    let json = std::env::var("BILLPAY_LOG_FORMAT")
        .ok()
        .or_else(|| settings.file.log_format.clone())
        .is_some_and(|f| f == "json");
    let builder = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(filter))
        .with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}
