//! Settings, resolved once at start: built-in defaults < TOML file
//! (`--config`) < `BILLPAY_*` environment variables < flags, merged by
//! figment ([`layers`]) into one [`Settings`], which `serve` checks once with
//! [`Settings::validate`] (naming every problem, not just the first).
//!
//! General settings are top-level keys; each outside system has a section
//! whose struct its adapter owns (`[sandbox]`; each registered supplier's,
//! `[vtpass]`, `[clubkonnect]`, gathered in `SupplierSections`; each
//! registered gateway's, `[monnify]`, `[paystack]`, in `GatewaySections`;
//! and `[funding]` for the fee and the reconciler; the notification
//! channels', `[email]`, `[smtp]`, `[termii]`, in `ChannelSections`). Secrets are
//! `SecretString`s and connection URLs print without their password, so the
//! settings' `Debug` is safe to log.

mod layers;

use super::http_server::ConnectionLimits;
use anyhow::Context;
use billpay_dashboard::policy::SignUpSettings;
use billpay_domain::sealed::SecretBox;
use billpay_domain::supplier_health::HealthRules;
use billpay_funding::FundingSettings;
use billpay_funding::registry::GatewaySections;
use billpay_notify::registry::ChannelSections;
use billpay_store::SharedStore;
use billpay_supplier::registry::{SupplierSections, Wanted};
use billpay_supplier::sandbox::SandboxSettings;
use billpay_worker::fulfilment::DEFAULT_NEEDS_REVIEW_AFTER;
use billpay_worker::held::DEFAULT_HELD_REVIEW;
use billpay_worker::{AlertSettings, DeliverySettings};
use figment::Figment;
use figment::value::Value;
use layers::{Layer, ignored};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every setting (the README's configuration table). Keys are named like the
/// environment variables without `BILLPAY_`, in lower case.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// `sqlite://relative.db`, `sqlite:///absolute.db` or `postgres://…`.
    pub database_url: ConnectionUrl,
    /// 64 hex characters; without it, a key file beside the SQLite database.
    pub master_key: Option<SecretString>,
    /// Log filter; `info` for `serve`, `warn` for the other commands.
    pub log: Option<String>,
    pub log_format: LogFormat,
    pub listen: String,
    /// `GET /metrics` on this address instead of `listen`.
    pub metrics_listen: Option<String>,
    pub header_timeout_secs: u64,
    pub body_timeout_secs: u64,
    pub body_deadline_secs: u64,
    pub max_connections: usize,
    pub rate_limit_per_second: u32,
    pub rate_limit_burst: u32,
    /// Webhooks to private addresses: `false`, or `true` with `--demo`.
    pub webhook_allow_private: Option<bool>,
    /// Rate limits shared by every node through this Redis.
    pub redis_url: Option<ConnectionUrl>,
    pub delivery_lease_secs: u64,
    pub webhook_concurrency: usize,
    pub webhook_concurrency_per_key: usize,
    /// A purchase unknown for longer needs the operator's review.
    pub needs_review_after_secs: u64,
    /// A purchase held for review that no owner decides within this long is
    /// refunded (the customer is told so when it is held).
    pub held_review_secs: u64,
    /// Between two requeries of one purchase caused by its supplier's
    /// callbacks (those in between are coalesced into one after it).
    pub callback_interval_ms: u64,
    /// When successful purchases are requeried for a reversal, for every
    /// supplier, in ms after the success, comma-separated (`60000,300000`);
    /// unset: each supplier's own watch (docs/suppliers.md).
    pub reversal_watch_ms: Option<String>,
    /// Who fulfils purchases unless `routes` says otherwise.
    pub supplier: String,
    /// Naira; a warning when the supplier's float is under it.
    pub supplier_low_balance: Option<f64>,
    /// Between two checks of the operators' alerts (docs/notifications-operators.md).
    pub alert_interval_secs: u64,
    /// More purchases needing review than this is an alert.
    pub alert_review_count: u64,
    /// The oldest processing purchase older than this (minutes) is an alert.
    pub alert_processing_mins: u64,
    /// The Lagos hour (0–23) from which owners get yesterday's summary.
    pub daily_summary_hour: u8,
    /// `airtime = ["vtpass", "sandbox"]`, `"airtime.glo" = ["sandbox"]`.
    pub routes: HashMap<String, Vec<String>>,
    /// `[routing]`: how each route is ordered (`data = "cheapest"`) and when
    /// a supplier failing in a row is skipped (docs/suppliers.md).
    pub routing: RoutingSettings,
    pub sandbox: SandboxSettings,
    /// Each registered supplier's section (`vtpass`, …), read from the same
    /// layers by [`Settings::load`].
    #[serde(skip)]
    pub suppliers: SupplierSections,
    /// Each registered gateway's section (`monnify`, …), read likewise:
    /// funding by bank transfer, on when its credentials are set.
    #[serde(skip)]
    pub gateways: GatewaySections,
    /// The funding fee and the reconciler's interval.
    pub funding: FundingSettings,
    /// The notification channels' settings (`mail_dir`, `[email]`, each
    /// provider's section), read likewise.
    #[serde(skip)]
    pub channels: ChannelSections,
    /// Who notices come from: named in every email and SMS.
    pub business_name: String,
    /// How customers reach the operator (an email address or a phone
    /// number), in every notice.
    pub support_contact: Option<String>,
    /// A WhatsApp number customers can chat with (`0803…`, `+234…`): a
    /// `https://wa.me/…` link on the storefront and every customer page.
    pub support_whatsapp: Option<String>,
    /// `[brand]`: the logo, the colour and the "powered by billpay" credit
    /// (with `business_name` and the support contacts: what buyers see).
    pub brand: BrandSettings,
    /// The first wait after a notice's failed send, in ms (later waits are
    /// multiples of it: docs/notifications.md).
    pub notice_retry_base_ms: u64,
    /// How long a notice being sent is held (a crashed node's is sent
    /// again after it).
    pub notice_lease_secs: u64,
    /// `[signup]`: whether anyone may open an account on the dashboard, the
    /// tier they get, and an invite code (docs/shop.md).
    pub signup: SignUpSettings,
    /// The address customers reach the dashboard at (`https://shop.example.com`),
    /// the start of emailed links; unset: `http://` + `listen`.
    pub public_url: Option<String>,
}

/// The config file's `[routing]` (issue 47): `"cheapest"` or `"order"` per
/// product or `product.provider`, and the suppliers' health rules.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RoutingSettings {
    /// Definite failures or timeouts in a row that make a supplier skipped.
    pub failures: u32,
    /// Its first back-off (seconds); doubled after each failed probe…
    pub backoff_secs: u64,
    /// … up to this (seconds).
    pub backoff_max_secs: u64,
    /// `data = "cheapest"`, `"data.glo" = "order"`.
    #[serde(flatten)]
    pub order: HashMap<String, String>,
}

impl Default for RoutingSettings {
    fn default() -> Self {
        let rules = HealthRules::default();
        RoutingSettings {
            failures: rules.failures,
            backoff_secs: rules.backoff.as_secs(),
            backoff_max_secs: rules.backoff_max.as_secs(),
            order: HashMap::new(),
        }
    }
}

impl RoutingSettings {
    /// The health rules, or what is wrong with them.
    pub fn rules(&self) -> Result<HealthRules, String> {
        if self.failures == 0 || self.backoff_secs == 0 {
            return Err("[routing] failures and backoff_secs must be at least 1".into());
        }
        if self.backoff_max_secs < self.backoff_secs {
            return Err("[routing] backoff_max_secs must be at least backoff_secs".into());
        }
        Ok(HealthRules {
            failures: self.failures,
            backoff: Duration::from_secs(self.backoff_secs),
            backoff_max: Duration::from_secs(self.backoff_max_secs),
            ..HealthRules::default()
        })
    }
}

/// The built-in defaults, all here. Those a library also uses (connection
/// limits, delivery, review) are read from that library's own default, so
/// each is written once.
impl Default for Settings {
    fn default() -> Self {
        let limits = ConnectionLimits::default();
        let delivery = DeliverySettings::default();
        let alerts = AlertSettings::default();
        Settings {
            database_url: ConnectionUrl("sqlite://billpay.db".into()),
            master_key: None,
            log: None,
            log_format: LogFormat::Text,
            listen: "127.0.0.1:8080".into(),
            metrics_listen: None,
            header_timeout_secs: limits.header_timeout.as_secs(),
            body_timeout_secs: limits.body_timeout.as_secs(),
            body_deadline_secs: limits.body_deadline.as_secs(),
            max_connections: limits.max_connections,
            rate_limit_per_second: 50,
            rate_limit_burst: 100,
            webhook_allow_private: None,
            redis_url: None,
            delivery_lease_secs: delivery.lease.as_secs(),
            webhook_concurrency: delivery.concurrency,
            webhook_concurrency_per_key: delivery.per_key,
            needs_review_after_secs: DEFAULT_NEEDS_REVIEW_AFTER.as_secs(),
            held_review_secs: DEFAULT_HELD_REVIEW.as_secs(),
            callback_interval_ms: billpay_callbacks::guard::Limits::default()
                .min_interval
                .as_millis() as u64,
            reversal_watch_ms: None,
            supplier: "sandbox".into(),
            supplier_low_balance: None,
            alert_interval_secs: alerts.every.as_secs(),
            alert_review_count: alerts.review_count,
            alert_processing_mins: alerts.oldest_processing.as_secs() / 60,
            daily_summary_hour: alerts.summary_hour,
            routes: HashMap::new(),
            routing: RoutingSettings::default(),
            sandbox: SandboxSettings::default(),
            suppliers: SupplierSections::default(),
            gateways: GatewaySections::default(),
            funding: FundingSettings::default(),
            channels: ChannelSections::default(),
            business_name: "billpay".into(),
            support_contact: None,
            support_whatsapp: None,
            brand: BrandSettings::default(),
            notice_retry_base_ms: 30_000,
            notice_lease_secs: 60,
            signup: SignUpSettings::default(),
            public_url: None,
        }
    }
}

/// `[brand]` (`BILLPAY_BRAND_LOGO`, `BILLPAY_BRAND_COLOUR`,
/// `BILLPAY_BRAND_CREDIT`): the owner may change the colour and the credit
/// in the console too (their edits win); the logo is this file's.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct BrandSettings {
    /// A PNG or SVG file, at most 512 KiB, read once at start.
    pub logo: Option<PathBuf>,
    /// `#rrggbb`; unset: the kit's teal.
    pub colour: Option<String>,
    /// The small "powered by billpay" credit in the footer.
    pub credit: bool,
}

impl Default for BrandSettings {
    fn default() -> Self {
        BrandSettings {
            logo: None,
            colour: None,
            credit: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// A site's settings may also come, flat, from the environment (or the
/// file's top level): `BILLPAY_HUSMODATA_TOKEN` is `[suppliers.husmodata]`'s
/// `token` (so the token need not be in the file), likewise `_BASE_URL`
/// and `_TIMEOUT_MS`; given, they win over the section.
fn sites_from_layers(
    figment: &Figment,
    sections: &mut billpay_supplier::registry::SupplierSections,
) -> anyhow::Result<()> {
    for (name, site) in sections.sites.iter_mut() {
        let flat = |key: &str| format!("{name}_{key}");
        if let Ok(token) = figment.extract_inner::<String>(&flat("token")) {
            site.token = Some(SecretString::from(token));
        }
        if let Ok(base_url) = figment.extract_inner::<String>(&flat("base_url")) {
            site.base_url = Some(base_url);
        }
        if figment.find_value(&flat("timeout_ms")).is_ok() {
            let timeout: u64 = figment
                .extract_inner_lossy(&flat("timeout_ms"))
                .map_err(describe)?;
            site.timeout_ms = Some(timeout);
        }
    }
    Ok(())
}

/// A database or Redis URL: it may hold a password, so it prints without.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct ConnectionUrl(String);

impl std::ops::Deref for ConnectionUrl {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ConnectionUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", redact(&self.0))
    }
}

impl Settings {
    /// The settings from their layers: the file (`--config`), the
    /// environment, then `flags` (clap's parsed arguments, serialized).
    pub fn load(config: Option<&Path>, flags: Vec<Value>) -> anyhow::Result<Settings> {
        let mut figment = Figment::new();
        if let Some(path) = config {
            let file = Layer::file(path)?;
            let unknown = file.unknown_keys(&[
                ignored::<Settings>,
                ignored::<SupplierSections>,
                ignored::<GatewaySections>,
                ignored::<ChannelSections>,
            ]);
            anyhow::ensure!(
                unknown.is_empty(),
                "config file {}: no such setting: {}",
                path.display(),
                unknown.join(", ")
            );
            figment = figment.merge(file);
        }
        let figment = figment
            .merge(Layer::environment()?)
            .merge(Layer::flags(flags)?);
        // Lossy: a number or boolean given as text (every environment value) is read as one.
        let mut settings: Settings = figment.extract_lossy().map_err(describe)?;
        settings.suppliers = figment.extract_lossy().map_err(describe)?;
        sites_from_layers(&figment, &mut settings.suppliers)?;
        settings.gateways = figment.extract_lossy().map_err(describe)?;
        settings.channels = figment.extract_lossy().map_err(describe)?;
        Ok(settings)
    }

    /// The suppliers the settings name: the default and those on routes.
    pub fn wanted(&self) -> Wanted<'_> {
        Wanted {
            default: &self.supplier,
            routes: &self.routes,
        }
    }

    /// Every problem that would stop `serve`, named at once.
    pub fn validate(&self) -> anyhow::Result<()> {
        let mut problems = Vec::new();
        problems.extend(address_problem("--listen", &self.listen));
        if let Some(address) = &self.metrics_listen {
            problems.extend(address_problem("--metrics-listen", address));
        }
        for (name, secs) in [
            ("--header-timeout-secs", self.header_timeout_secs),
            ("--body-timeout-secs", self.body_timeout_secs),
            ("--body-deadline-secs", self.body_deadline_secs),
        ] {
            if secs == 0 {
                problems.push(format!("{name} must be at least 1 second"));
            }
        }
        if self.max_connections == 0 {
            problems.push("--max-connections must be at least 1".into());
        }
        if self.callback_interval_ms == 0 {
            problems.push("BILLPAY_CALLBACK_INTERVAL_MS must be at least 1 ms".into());
        }
        if self.alert_interval_secs == 0 {
            problems.push("BILLPAY_ALERT_INTERVAL_SECS must be at least 1 second".into());
        }
        if self.daily_summary_hour > 23 {
            problems.push("BILLPAY_DAILY_SUMMARY_HOUR must be a Lagos hour, 0 to 23".into());
        }
        problems.extend(self.reversal_watch().err());
        problems.extend(self.routing.rules().err());
        problems.extend(self.master_key_problem());
        problems.extend(self.sandbox.commission().err());
        problems.extend(self.wanted().problems(&self.suppliers));
        problems.extend(billpay_funding::registry::problems(&self.gateways));
        problems.extend(self.funding.fee_rule().err().into_iter().flatten());
        problems.extend(billpay_notify::registry::problems(&self.channels));
        problems.extend(self.brand().err());
        match problems.as_slice() {
            [] => Ok(()),
            [one] => anyhow::bail!("{one}"),
            all => anyhow::bail!(
                "{} problems with the settings:\n- {}",
                all.len(),
                all.join("\n- ")
            ),
        }
    }

    /// The brand of the settings (the owner's console edits are laid over
    /// it while serving): the logo file read and checked, the colour and the
    /// WhatsApp number read.
    pub fn brand(&self) -> Result<billpay_domain::brand::Brand, String> {
        use billpay_domain::brand::{Brand, Colour, Logo, business_name, whatsapp_number};
        let name = business_name(&self.business_name)
            .map_err(|e| format!("BILLPAY_BUSINESS_NAME: {e}"))?;
        let colour = match self
            .brand
            .colour
            .as_deref()
            .filter(|c| !c.trim().is_empty())
        {
            Some(text) => Colour::parse(text).map_err(|e| format!("BILLPAY_BRAND_COLOUR: {e}"))?,
            None => Colour::default(),
        };
        let logo = match &self.brand.logo {
            Some(path) => {
                let bytes = std::fs::read(path).map_err(|e| {
                    format!("BILLPAY_BRAND_LOGO: cannot read {}: {e}", path.display())
                })?;
                Some(
                    Logo::read(bytes)
                        .map_err(|e| format!("BILLPAY_BRAND_LOGO ({}): {e}", path.display()))?,
                )
            }
            None => None,
        };
        let whatsapp = match self
            .support_whatsapp
            .as_deref()
            .filter(|w| !w.trim().is_empty())
        {
            Some(text) => {
                Some(whatsapp_number(text).map_err(|e| format!("BILLPAY_SUPPORT_WHATSAPP: {e}"))?)
            }
            None => None,
        };
        Ok(Brand {
            name,
            colour,
            logo,
            support: self
                .support_contact
                .clone()
                .filter(|s| !s.trim().is_empty()),
            whatsapp,
            credit: self.brand.credit,
        })
    }

    pub fn needs_review_after(&self) -> Duration {
        Duration::from_secs(self.needs_review_after_secs)
    }

    /// How long a held purchase waits for an owner before it is refunded.
    pub fn held_review(&self) -> Duration {
        Duration::from_secs(self.held_review_secs.max(1))
    }

    /// When the operators' alerts fire; `float_low` is the floats' low-balance level.
    pub fn alerts(&self, float_low: Option<billpay_domain::Kobo>) -> AlertSettings {
        AlertSettings {
            every: Duration::from_secs(self.alert_interval_secs.max(1)),
            float_low,
            needs_review_after: self.needs_review_after(),
            held_review: self.held_review(),
            review_count: self.alert_review_count,
            oldest_processing: Duration::from_secs(self.alert_processing_mins * 60),
            summary_hour: self.daily_summary_hour,
        }
    }

    /// The reversal watch for every supplier, if set: ascending times in ms.
    pub fn reversal_watch(&self) -> Result<Option<Vec<Duration>>, String> {
        let Some(text) = self
            .reversal_watch_ms
            .as_deref()
            .filter(|t| !t.trim().is_empty())
        else {
            return Ok(None);
        };
        let problem = || {
            format!(
                "BILLPAY_REVERSAL_WATCH_MS must be ascending whole milliseconds separated by commas, like 60000,300000 (got {text:?})"
            )
        };
        let times = text
            .split(',')
            .map(|t| t.trim().parse::<u64>().map(Duration::from_millis))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| problem())?;
        if times.windows(2).any(|w| w[0] >= w[1]) {
            return Err(problem());
        }
        Ok(Some(times))
    }

    /// The database, sealing what purchases deliver under the master key
    /// (a command that never reads a pin works without one).
    pub async fn open_store(&self) -> anyhow::Result<SharedStore> {
        let secrets = self.secret_box().map_err(|e| format!("{e:#}"));
        billpay_store::open_sealed(&self.database_url, secrets)
            .await
            .with_context(|| format!("cannot open database {}", redact(&self.database_url)))
    }

    /// The master key that seals webhook secrets: `BILLPAY_MASTER_KEY` or the
    /// config file, else (SQLite) a key file beside the database, created once.
    /// PostgreSQL has no such file: the key must be configured.
    pub fn secret_box(&self) -> anyhow::Result<SecretBox> {
        if let Some(key) = &self.master_key {
            return SecretBox::from_hex(key.expose_secret()).context("BILLPAY_MASTER_KEY");
        }
        anyhow::ensure!(!self.is_postgres(), POSTGRES_NEEDS_A_MASTER_KEY);
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

    /// A configured master key that is malformed, or none with PostgreSQL.
    fn master_key_problem(&self) -> Option<String> {
        match &self.master_key {
            Some(key) => SecretBox::from_hex(key.expose_secret()).err().map(|_| {
                "BILLPAY_MASTER_KEY must be 64 hex characters (e.g. from `openssl rand -hex 32`)"
                    .into()
            }),
            None => self
                .is_postgres()
                .then(|| POSTGRES_NEEDS_A_MASTER_KEY.into()),
        }
    }

    fn is_postgres(&self) -> bool {
        billpay_store::is_postgres_url(&self.database_url)
    }

    /// Whether the master key comes from the environment or the file (not a key file).
    pub fn master_key_configured(&self) -> bool {
        self.master_key.is_some()
    }

    pub fn master_key_file(&self) -> anyhow::Result<PathBuf> {
        let db = billpay_store::sqlite::path_from_url(&self.database_url)
            .context("set BILLPAY_MASTER_KEY (64 hex characters) for this database")?;
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".key");
        Ok(db.with_file_name(name))
    }
}

/// Figment's errors, without the value found where a string was expected:
/// that may be a key written unquoted in the file, and is never echoed.
fn describe(errors: figment::Error) -> anyhow::Error {
    let lines = errors.into_iter().map(|mut error| {
        if let figment::error::Kind::InvalidType(_, expected) = &error.kind
            && expected == "a string"
        {
            error.kind = figment::error::Kind::Message(
                "invalid type: expected a string (what was found is not shown)".into(),
            );
        }
        format!("invalid setting: {error}")
    });
    anyhow::anyhow!(lines.collect::<Vec<_>>().join("\n"))
}

const POSTGRES_NEEDS_A_MASTER_KEY: &str = "BILLPAY_MASTER_KEY is required with PostgreSQL: set \
    it (64 hex characters, e.g. from `openssl rand -hex 32`) to the same value on every node and \
    CLI host; there is no key file beside a PostgreSQL database";

/// `host:port` (a name or an IP address), else what is wrong with `address`.
fn address_problem(name: &str, address: &str) -> Option<String> {
    let valid = address.parse::<std::net::SocketAddr>().is_ok()
        || address.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && !host.contains(char::is_whitespace) && port.parse::<u16>().is_ok()
        });
    (!valid).then(|| {
        format!("{name} {address:?} is not an address: give host:port, e.g. 127.0.0.1:8080")
    })
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
    let filter = settings.log.as_deref().unwrap_or(default);
    let builder = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(filter))
        .with_writer(std::io::stderr);
    match settings.log_format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use billpay_funding::monnify::MonnifySettings;
    use billpay_funding::paystack::PaystackSettings;
    use billpay_funding::registry::problems as gateway_problems;
    use billpay_supplier::clubkonnect::ClubkonnectSettings;
    use billpay_supplier::vtpass::VtpassSettings;

    #[test]
    fn debug_output_holds_no_secret() {
        let settings = Settings {
            database_url: ConnectionUrl("postgres://billpay:db-password@db/billpay".into()),
            redis_url: Some(ConnectionUrl("redis://:redis-password@cache:6379/0".into())),
            master_key: Some("master-key-hex".into()),
            suppliers: SupplierSections {
                vtpass: VtpassSettings {
                    api_key: Some("vtpass-api-key".into()),
                    ..VtpassSettings::default()
                },
                clubkonnect: ClubkonnectSettings {
                    api_key: Some("clubkonnect-api-key".into()),
                    ..ClubkonnectSettings::default()
                },
                sites: [(
                    "husmodata".to_owned(),
                    billpay_supplier::smedata::SiteSettings {
                        token: Some("husmodata-site-token".into()),
                        ..Default::default()
                    },
                )]
                .into(),
            },
            gateways: GatewaySections {
                monnify: MonnifySettings {
                    secret_key: Some("monnify-secret-key".into()),
                    ..MonnifySettings::default()
                },
                paystack: PaystackSettings {
                    secret_key: Some("sk_live_paystack".into()),
                    ..PaystackSettings::default()
                },
            },
            channels: channel_secrets(),
            ..Settings::default()
        };
        let printed = format!("{settings:?}");
        for secret in [
            "db-password",
            "redis-password",
            "master-key-hex",
            "vtpass-api-key",
            "clubkonnect-api-key",
            "husmodata-site-token",
            "monnify-secret-key",
            "sk_live_paystack",
            "smtp-password",
            "termii-api-key",
        ] {
            assert!(!printed.contains(secret), "{printed}");
        }
        assert!(printed.contains("postgres://…@db/billpay"), "{printed}");
    }

    fn channel_secrets() -> ChannelSections {
        let mut channels = ChannelSections::default();
        channels.smtp.url = Some("smtps://user:smtp-password@mail.example.com".into());
        channels.termii.api_key = Some("termii-api-key".into());
        channels
    }

    #[test]
    fn channel_settings_are_read_from_variables_and_sections() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("billpay.toml");
        let text = "mail_dir = \"/var/mail/billpay\"\nemail_from = \"Shop <no-reply@shop.ng>\"\n\
                    [smtp]\nurl = \"smtps://u:p@mail.example.com\"\n\
                    [termii]\napi_key = \"TK\"\nsender_id = \"Shop\"\n";
        std::fs::write(&file, text).unwrap();
        let settings = Settings::load(Some(&file), vec![]).unwrap();
        let channels = &settings.channels;
        assert_eq!(channels.mail_dir, PathBuf::from("/var/mail/billpay"));
        assert_eq!(
            channels.email.from.as_deref(),
            Some("Shop <no-reply@shop.ng>")
        );
        assert_eq!(channels.termii.sender_id.as_deref(), Some("Shop"));
        assert!(billpay_notify::registry::problems(channels).is_empty());
        std::fs::write(&file, "[termii]\napi_key = \"TK-SECRET\"\n").unwrap();
        let half = Settings::load(Some(&file), vec![]).unwrap();
        let problem = half.validate().unwrap_err().to_string();
        assert!(problem.contains("BILLPAY_TERMII_SENDER_ID"), "{problem}");
        assert!(!problem.contains("TK-SECRET"), "{problem}");
    }

    #[test]
    fn a_key_of_the_wrong_type_is_not_echoed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("billpay.toml");
        std::fs::write(&file, "[vtpass]\napi_key = 9876543210\n").unwrap();
        let error = Settings::load(Some(&file), vec![]).unwrap_err().to_string();
        assert!(error.contains("expected a string"), "{error}");
        assert!(error.contains("vtpass.api_key"), "{error}");
        assert!(!error.contains("9876543210"), "{error}");
    }

    #[test]
    fn funding_sections_are_read_and_a_half_configured_gateway_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("billpay.toml");
        let whole = "paystack_secret_key = \"sk_test_x\"\n\
                     [monnify]\napi_key = \"MK_1\"\nsecret_key = \"S\"\ncontract_code = \"C\"\n\
                     [funding]\nfee_percent = 1.5\nfee_cap = 200\n";
        std::fs::write(&file, whole).unwrap();
        let settings = Settings::load(Some(&file), vec![]).unwrap();
        let gateways = &settings.gateways;
        assert!(gateways.monnify.enabled() && gateways.monnify.missing().is_empty());
        assert!(gateways.paystack.enabled() && gateways.paystack.missing().is_empty());
        assert_eq!(settings.funding.fee_rule().unwrap().basis_points, 150);
        assert!(gateway_problems(&settings.gateways).is_empty());
        std::fs::write(&file, "[monnify]\napi_key = \"MK_1\"\n").unwrap();
        let half = Settings::load(Some(&file), vec![]).unwrap();
        let problems = gateway_problems(&half.gateways).join("; ");
        assert!(
            problems.contains("BILLPAY_MONNIFY_SECRET_KEY"),
            "{problems}"
        );
        assert!(
            problems.contains("BILLPAY_MONNIFY_CONTRACT_CODE"),
            "{problems}"
        );
        assert!(!problems.contains("MK_1"), "{problems}");
    }

    #[test]
    fn addresses_are_host_and_port() {
        for good in ["127.0.0.1:0", "[::1]:8080", "localhost:8080", "0.0.0.0:80"] {
            assert_eq!(address_problem("--listen", good), None, "{good}");
        }
        for bad in ["", "8080", "localhost", "host:port", ":80", "a b:80"] {
            assert!(address_problem("--listen", bad).is_some(), "{bad:?}");
        }
    }
}
