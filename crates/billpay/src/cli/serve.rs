//! `billpay serve`: the HTTP API plus the fulfilment, webhook and notice workers, with
//! graceful shutdown on SIGINT/SIGTERM.

use super::Settings;
use super::http_server::{self, ConnectionLimits};
use anyhow::Context;
use billpay_api::AppState;
use billpay_notify::templates::Brand;
use billpay_store::{NewAccount, RateLimit, SharedStore};
use billpay_supplier::sandbox::SandboxSupplier;
use billpay_webhooks::DeliveryConfig;
use billpay_worker::{
    Delivery, DeliverySettings, Fulfilment, FulfilmentSettings, NoticeSettings, Notices,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// `serve`'s flags. Those that are settings are also `BILLPAY_<FLAG>` and keys
/// of the config file; they reach `run` resolved, in [`Settings`].
#[derive(clap::Args, Debug, serde::Serialize)]
pub struct ServeArgs {
    /// Address to listen on (default 127.0.0.1:8080).
    #[arg(long)]
    listen: Option<String>,
    /// Serve `GET /metrics` (Prometheus) on this separate address instead of
    /// the public one, e.g. 127.0.0.1:9090, so it is not exposed.
    #[arg(long)]
    metrics_listen: Option<String>,
    /// Create a funded demo account on first start and print its API key.
    #[arg(long)]
    #[serde(skip)]
    demo: bool,
    /// Simulated latency of the sandbox supplier, milliseconds (default 500).
    #[arg(long)]
    sandbox_latency_ms: Option<u64>,
    /// Rehearse a supplier outage: every sandbox call fails as unreachable
    /// (a switch; `--sandbox-unreachable=false` turns off a file's `true`).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    sandbox_unreachable: Option<bool>,
    /// The sandbox supplier's commission in percent (default 3): it charges
    /// the face value less this, recorded as each purchase's cost.
    #[arg(long)]
    sandbox_commission_percent: Option<f64>,
    /// Default requests per second per API key (default 50).
    #[arg(long)]
    rate_limit_per_second: Option<u32>,
    /// Default burst per API key (default 100).
    #[arg(long)]
    rate_limit_burst: Option<u32>,
    /// Allow webhooks to loopback/private addresses (default false; true
    /// with --demo; a switch, `=false` turns it off).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    webhook_allow_private: Option<bool>,
    /// Share per-key rate limits between nodes through this Redis
    /// (redis://host:6379/0); without it, limits are per node.
    #[arg(long)]
    redis_url: Option<String>,
    /// Run the HTTP API only: no fulfilment or webhook worker on this node.
    #[arg(long, conflicts_with = "worker_only")]
    #[serde(skip)]
    no_worker: bool,
    /// Run the workers only: no API (the listener answers GET /health only).
    #[arg(long)]
    #[serde(skip)]
    worker_only: bool,
    /// Seconds a webhook delivery is leased to this node before another node
    /// may take it over (default 20; keep it well above the 10 s send timeout).
    #[arg(long)]
    delivery_lease_secs: Option<u64>,
    /// Webhook deliveries in flight at once (default 512).
    #[arg(long)]
    webhook_concurrency: Option<usize>,
    /// Webhook deliveries in flight at once to one API key's receiver
    /// (default 32), so one slow receiver cannot take every slot.
    #[arg(long)]
    webhook_concurrency_per_key: Option<usize>,
    /// Close a connection whose request headers do not arrive within this
    /// many seconds; also how long an idle keep-alive connection stays open
    /// (default 15).
    #[arg(long)]
    header_timeout_secs: Option<u64>,
    /// Answer 408 when a request body stalls this many seconds (default 30).
    #[arg(long)]
    body_timeout_secs: Option<u64>,
    /// Answer 408 when a request body is not complete this many seconds
    /// after its headers, however it trickles (default 60).
    #[arg(long)]
    body_deadline_secs: Option<u64>,
    /// Open connections at most (default 4096); more wait to be accepted.
    #[arg(long)]
    max_connections: Option<usize>,
    /// Start even when a real supplier fails the start-up check (its
    /// balance: refused credentials, a base URL that is not the supplier's,
    /// an outage), with a warning.
    #[arg(long)]
    #[serde(skip)]
    skip_supplier_check: bool,
    /// Who may open an account on the dashboard: `open` or `closed`
    /// (default closed; open with --demo).
    #[arg(long, value_parser = ["open", "closed"])]
    signup_mode: Option<String>,
    /// The address customers reach the dashboard at, the start of emailed
    /// links (default http:// + the listen address).
    #[arg(long)]
    public_url: Option<String>,
    #[command(flatten)]
    #[serde(flatten)]
    supplier: super::supplier::SupplierArgs,
    #[command(flatten)]
    #[serde(flatten)]
    funding: super::flags::GatewayFlags,
    #[command(flatten)]
    #[serde(flatten)]
    notify: super::flags::ChannelFlags,
}

const DEMO_EMAIL: &str = "demo@billpay.local";

pub async fn run(settings: Settings, args: ServeArgs) -> anyhow::Result<()> {
    settings.validate()?;
    // what buyers see: the settings' brand (checked by `validate`)
    let brand = settings.brand().map_err(anyhow::Error::msg)?;
    let listen_address = settings.listen.as_str();
    tracing::debug!(?settings, "settings");
    let limits = connection_limits(&settings);
    let rate_limit = RateLimit {
        per_second: settings.rate_limit_per_second,
        burst: settings.rate_limit_burst,
    };
    let allow_private = settings.webhook_allow_private.unwrap_or(args.demo);

    // The notification worker (notify-outbox) sends through these.
    let channels = super::notify::channels_from_settings(&settings)?;
    let (email, sms) = super::notify::describe(&channels);
    tracing::info!(email, sms, "notification channels");
    let store = settings.open_store().await?;
    canonical_addresses(&store).await?;
    let metrics = super::metrics::Metrics::install(store.clone())?;
    let secrets = settings.secret_box()?;
    if settings.sandbox.unreachable {
        tracing::warn!("the sandbox supplier is set unreachable: purchases stay processing");
    }
    let sandbox = SandboxSupplier::from_settings(&settings.sandbox);
    let routes = Arc::new(super::supplier::build(&settings, sandbox)?);
    let start_checks =
        super::supplier::check_at_start(&settings, &routes, args.skip_supplier_check).await?;
    let mut state = AppState::new(store.clone(), routes.clone(), rate_limit);
    if let Some(url) = settings.redis_url.as_deref().filter(|u| !u.is_empty()) {
        let limiter = billpay_operations::rate_limit::RateLimiter::with_redis(url)
            .await
            .map_err(|e| anyhow::anyhow!("{e} ({})", super::config::redact(url)))?;
        state = state.with_limiter(Arc::new(limiter));
    }
    let shutdown = Arc::new(Notify::new());
    let role = match (args.no_worker, args.worker_only) {
        (true, _) => "api",
        (_, true) => "worker",
        _ => "api+worker",
    };
    let mut workers = Vec::new();

    let fulfilment_settings = FulfilmentSettings {
        needs_review_after: settings.needs_review_after(),
        reversal_watch: settings.reversal_watch().map_err(anyhow::Error::msg)?,
        health: settings.routing.rules().map_err(anyhow::Error::msg)?,
        ..FulfilmentSettings::default()
    };
    // Not a worker: it has nothing to finish at shutdown (aborted there).
    let float_watch =
        super::supplier::float_watch(&settings, &routes).map(|float| tokio::spawn(float.watch()));
    if !args.no_worker {
        let alerts = billpay_worker::Alerts::new(
            store.clone(),
            routes.suppliers().to_vec(),
            Arc::new(start_checks.clone()),
            settings.alerts(super::supplier::low_balance(&settings)),
        );
        workers.push(tokio::spawn(alerts.run(shutdown.clone())));
        // the customers' low-balance watch runs as often as the alerts' check
        let every = settings.alerts(None).every;
        let low_balance = billpay_worker::LowBalance::new(store.clone());
        workers.push(tokio::spawn(low_balance.run(every, shutdown.clone())));
        // and so does the held purchases' (their customers told, the unreviewed refunded)
        let held = billpay_worker::HeldReview::new(store.clone(), settings.held_review());
        workers.push(tokio::spawn(held.run(every, shutdown.clone())));
    }
    let fulfilment = Fulfilment::new(store.clone(), routes, fulfilment_settings);
    let funding = super::funding_command::service(&settings, store.clone())?;
    // `POST /v1/account/identity` asks the gateway that offers identity checks
    state = state.with_identity(funding.gateways());
    let console_funding = funding.clone();
    let dashboard_funding = funding.clone();
    let console_fulfilment = fulfilment.clone();
    let callbacks = billpay_callbacks::router(
        billpay_supplier::callback::all(),
        fulfilment.clone(),
        funding.clone(),
        billpay_callbacks::guard::Limits {
            min_interval: Duration::from_millis(settings.callback_interval_ms),
            ..Default::default()
        },
    );
    if !args.no_worker && !funding.gateways().is_empty() {
        let every = Duration::from_secs(settings.funding.reconcile_secs.max(1));
        let node = format!(
            "{}-{}",
            std::process::id(),
            billpay_domain::keys::random_hex(4)
        );
        workers.push(tokio::spawn(funding.run(every, node, shutdown.clone())));
    }
    if !args.no_worker {
        workers.push(tokio::spawn(
            fulfilment.run(state.purchasing.purchases_waiting.clone(), shutdown.clone()),
        ));
        // batches: each item placed through the same purchase operation
        workers.push(tokio::spawn(state.batches.clone().run(shutdown.clone())));
        let node = format!(
            "{}-{}",
            std::process::id(),
            billpay_domain::keys::random_hex(4)
        );
        let prune = billpay_worker::prune::PruneUnverified::new(store.clone());
        workers.push(tokio::spawn(prune.run(node.clone(), shutdown.clone())));
        let prune_usage = billpay_worker::prune::PruneUsage::new(store.clone());
        workers.push(tokio::spawn(prune_usage.run(node, shutdown.clone())));
        // schedules' runs, placed through the API's own purchase operation
        let scheduler = billpay_operations::schedules::Scheduler::new(state.purchasing.clone());
        workers.push(tokio::spawn(scheduler.run_until(shutdown.clone())));
    }
    let delivery_config = DeliveryConfig {
        allow_private,
        ..DeliveryConfig::default()
    };
    if !args.no_worker {
        let notices = Notices::new(
            store.clone(),
            channels.clone(),
            notice_settings(&settings, &brand, &public_url(&settings, listen_address)),
        );
        workers.push(tokio::spawn(notices.run(shutdown.clone())));
    }
    if !args.no_worker {
        let delivery = delivery_settings(&settings, delivery_config);
        workers.push(tokio::spawn(
            Delivery::new(store.clone(), secrets.clone(), delivery).run(shutdown.clone()),
        ));
    }

    let listen = &settings.listen;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let address = listener.local_addr()?;
    if args.demo && !args.worker_only {
        demo(&store, address).await?;
    }
    println!("billpay listening on http://{address}");
    tracing::info!(%address, role, shared_rate_limits = state.purchasing.limiter.is_shared(), database = %super::config::redact(&settings.database_url), sandbox_latency_ms = settings.sandbox.latency_ms, "billpay started");
    let public_url = public_url(&settings, &address.to_string());
    let dashboard =
        billpay_dashboard::DashboardState::new(store.clone(), secrets.clone(), delivery_config)
            .with_funding(dashboard_funding, card_return_url(&settings))
            .with_account_care(settings.signup.policy(args.demo), &public_url)
            // the shop buys through the API's own purchase operation (one
            // rate budget per key, the same caches and worker wake-up)
            .with_shop(state.purchasing.clone())
            .with_bulk(state.batches.clone())
            .with_sms(channels.sms.is_some())
            .with_held_review(settings.held_review())
            .with_brand(billpay_dashboard::brand::BrandSource::new(
                brand.clone(),
                store.clone(),
            ));
    // `/` for a browser is the storefront; for an API client, the API's index
    let storefront = billpay_dashboard::storefront(dashboard.clone());
    let console = billpay_console::ConsoleState::new(
        store.clone(),
        secrets.clone(),
        console_fulfilment,
        settings.needs_review_after(),
    )
    .with_funding(console_funding)
    .with_public_url(&public_url)
    .with_brand(brand.clone())
    .with_sms(channels.sms.is_some())
    .with_suppliers(
        super::supplier::configured(&settings)?,
        super::supplier::low_balance(&settings),
        start_checks,
    );
    let app = billpay_api::router(state.with_public_url(&public_url))
        .merge(billpay_dashboard::router(dashboard))
        .merge(billpay_console::router(console))
        .merge(callbacks)
        .layer(axum::middleware::from_fn_with_state(
            storefront,
            billpay_dashboard::storefront::for_browsers,
        ));
    let app = if args.worker_only {
        health_only(role)
    } else {
        app
    };
    let app = match &settings.metrics_listen {
        Some(address) => {
            serve_metrics_apart(address, metrics, limits).await?;
            app
        }
        None => app.merge(metrics.router()),
    }
    .layer(axum::middleware::from_fn(super::metrics::track_requests));
    http_server::serve(listener, app, limits, shutdown_signal()).await?;
    tracing::info!("shutting down: finishing in-flight work");
    shutdown.notify_waiters();
    if let Some(watch) = float_watch {
        watch.abort();
    }
    for worker in workers {
        let _ = worker.await;
    }
    Ok(())
}

/// The webhook delivery worker's settings (a lease or concurrency of 0 counts as 1).
fn delivery_settings(settings: &Settings, client: DeliveryConfig) -> DeliverySettings {
    DeliverySettings {
        client,
        lease: Duration::from_secs(settings.delivery_lease_secs.max(1)),
        concurrency: settings.webhook_concurrency.max(1),
        per_key: settings.webhook_concurrency_per_key.max(1),
        ..DeliverySettings::default()
    }
}

/// The notice worker's settings: the brand every message wears (the owner's
/// console edits laid over it as they are made), and its retry schedule.
fn notice_settings(
    settings: &Settings,
    brand: &billpay_domain::brand::Brand,
    public_url: &str,
) -> NoticeSettings {
    if brand.support.is_none() {
        tracing::warn!("BILLPAY_SUPPORT_CONTACT is not set: notices ask customers to reply");
    }
    let email_brand = Brand::of(brand, public_url, "reply to this message");
    NoticeSettings {
        retry_base: Duration::from_millis(settings.notice_retry_base_ms.max(1)),
        lease: Duration::from_secs(settings.notice_lease_secs.max(1)),
        edited_from: Some(brand.clone()),
        ..NoticeSettings::new(email_brand)
    }
}

/// Where customers reach the server: `public_url`, else `http://` + the
/// listen address.
fn public_url(settings: &Settings, listen_address: &str) -> String {
    settings
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{listen_address}"))
}

/// `--metrics-listen`: `GET /metrics` on its own listener (nothing else there).
async fn serve_metrics_apart(
    address: &str,
    metrics: super::metrics::Metrics,
    limits: ConnectionLimits,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {address} (--metrics-listen)"))?;
    println!(
        "billpay metrics on http://{}/metrics",
        listener.local_addr()?
    );
    tokio::spawn(async move {
        let never = std::future::pending();
        if let Err(e) = http_server::serve(listener, metrics.router(), limits, never).await {
            tracing::error!(error = %e, "the metrics listener stopped");
        }
    });
    Ok(())
}

/// The connection limits (checked by `Settings::validate`).
fn connection_limits(settings: &Settings) -> ConnectionLimits {
    ConnectionLimits {
        header_timeout: Duration::from_secs(settings.header_timeout_secs),
        body_timeout: Duration::from_secs(settings.body_timeout_secs),
        body_deadline: Duration::from_secs(settings.body_deadline_secs),
        max_connections: settings.max_connections,
    }
}

/// `--worker-only`: the listener answers `GET /health` (for a load balancer's
/// or orchestrator's checks) and nothing else.
fn health_only(role: &'static str) -> axum::Router {
    axum::Router::new()
        .route(
            "/health",
            axum::routing::get(move || async move {
                axum::Json(serde_json::json!({"status": "ok", "role": role}))
            }),
        )
        .fallback(|| async {
            (
                axum::http::StatusCode::NOT_FOUND,
                axum::Json(serde_json::json!({"code": 404, "status": "error",
                    "message": "This node runs workers only (--worker-only)", "error": "not_found"})),
            )
        })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut sig) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            sig.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
}

/// First start with `--demo`: a demo account funded with ₦100,000 and a key.
/// Addresses stored before every address was canonical: each lone one
/// rewritten in its canonical form; a warning for each group of accounts
/// whose addresses reach one mailbox: never merged, the operator
/// resolves them (`billpay audit` lists them with their addresses; the log
/// names only the accounts).
async fn canonical_addresses(store: &SharedStore) -> anyhow::Result<()> {
    use billpay_store::audit::EMAILS_RESOLVE;
    match store.canonicalize_emails().await {
        Ok(0) => {}
        Ok(rewritten) => {
            tracing::info!(rewritten, "email addresses stored in their canonical form")
        }
        // Another node's sign-up in between: the next start finishes it.
        Err(e) => tracing::warn!(error = %e, "email addresses not made canonical this time"),
    }
    for collision in store.email_collisions().await? {
        let ids: Vec<&str> = collision
            .accounts
            .iter()
            .map(|(id, _)| id.as_str())
            .collect();
        tracing::warn!(
            accounts = %ids.join(", "),
            resolve = EMAILS_RESOLVE,
            "these accounts' email addresses are one address (one mailbox): run `billpay audit` to see them"
        );
    }
    Ok(())
}

async fn demo(store: &SharedStore, address: std::net::SocketAddr) -> anyhow::Result<()> {
    if let Some(account) = store.account_by_email(DEMO_EMAIL).await? {
        println!(
            "Demo account {} already exists (its API key was printed when it was created).",
            account.id
        );
        println!(
            "Make another key with: billpay key create --account {}",
            account.id
        );
        println!(
            "Dashboard: http://{address}/dashboard (email {DEMO_EMAIL}; set a password with: billpay account set-password {} --password …)",
            account.id
        );
        return Ok(());
    }
    let password = billpay_domain::keys::random_hex(8);
    let account = store
        .create_account(NewAccount {
            name: "Demo Business".into(),
            email: DEMO_EMAIL.into(),
            password_hash: Some(billpay_domain::password::hash(&password)?),
            kyc_level: billpay_store::limits::OPERATOR_CREATED_LEVEL,
        })
        .await?;
    store
        .credit(
            account.id,
            billpay_domain::Kobo::from_naira(100_000),
            "demo-initial-funding",
        )
        .await?;
    let key = billpay_store::issue::issue_api_key(store.as_ref(), account.id, Some("demo".into()))
        .await?;
    println!(
        "Demo account {} created with a balance of ₦100,000.00",
        account.id
    );
    println!("Demo API key (shown once): {}", key.secret);
    println!(
        "Dashboard: http://{address}/dashboard  (email {DEMO_EMAIL}, password {password}; shown once)"
    );
    println!(
        "Try: curl -H 'Authorization: Bearer {}' http://{address}/v1/wallet/balance",
        key.secret
    );
    Ok(())
}

/// Where a card payment sends the customer back: `[funding] public_url`, else
/// the shop's `public_url`, else the address the customer's browser used.
fn card_return_url(settings: &Settings) -> Option<String> {
    let funding = settings.funding.public_url.clone();
    funding.or_else(|| settings.public_url.clone())
}
