//! `billpay serve`: the HTTP API plus the fulfilment and webhook workers, with
//! graceful shutdown on SIGINT/SIGTERM.

use super::Settings;
use super::config::FileConfig;
use super::http_server::{self, ConnectionLimits};
use anyhow::Context;
use billpay_api::AppState;
use billpay_store::{NewAccount, RateLimit, SharedStore};
use billpay_supplier::sandbox::SandboxSupplier;
use billpay_webhooks::DeliveryConfig;
use billpay_worker::{Delivery, DeliverySettings, Fulfilment, FulfilmentSettings};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "BILLPAY_LISTEN")]
    listen: Option<String>,
    /// Serve `GET /metrics` (Prometheus) on this separate address instead of
    /// the public one, e.g. 127.0.0.1:9090, so it is not exposed.
    #[arg(long, env = "BILLPAY_METRICS_LISTEN")]
    metrics_listen: Option<String>,
    /// Create a funded demo account on first start and print its API key.
    #[arg(long)]
    demo: bool,
    /// Simulated latency of the sandbox supplier, milliseconds (default 500).
    #[arg(long, env = "BILLPAY_SANDBOX_LATENCY_MS")]
    sandbox_latency_ms: Option<u64>,
    /// Rehearse a supplier outage: every sandbox call fails as unreachable.
    #[arg(long, env = "BILLPAY_SANDBOX_UNREACHABLE")]
    sandbox_unreachable: Option<bool>,
    /// Default requests per second per API key (default 50).
    #[arg(long, env = "BILLPAY_RATE_LIMIT_PER_SECOND")]
    rate_limit_per_second: Option<u32>,
    /// Default burst per API key (default 100).
    #[arg(long, env = "BILLPAY_RATE_LIMIT_BURST")]
    rate_limit_burst: Option<u32>,
    /// Allow webhooks to loopback/private addresses (default false; true with --demo).
    #[arg(long, env = "BILLPAY_WEBHOOK_ALLOW_PRIVATE")]
    webhook_allow_private: Option<bool>,
    /// Share per-key rate limits between nodes through this Redis
    /// (redis://host:6379/0); without it, limits are per node.
    #[arg(long, env = "BILLPAY_REDIS_URL")]
    redis_url: Option<String>,
    /// Run the HTTP API only: no fulfilment or webhook worker on this node.
    #[arg(long, conflicts_with = "worker_only")]
    no_worker: bool,
    /// Run the workers only: no API (the listener answers GET /health only).
    #[arg(long)]
    worker_only: bool,
    /// Seconds a webhook delivery is leased to this node before another node
    /// may take it over (default 20; keep it well above the 10 s send timeout).
    #[arg(long, env = "BILLPAY_DELIVERY_LEASE_SECS")]
    delivery_lease_secs: Option<u64>,
    /// Webhook deliveries in flight at once (default 512).
    #[arg(long, env = "BILLPAY_WEBHOOK_CONCURRENCY")]
    webhook_concurrency: Option<usize>,
    /// Webhook deliveries in flight at once to one API key's receiver
    /// (default 32), so one slow receiver cannot take every slot.
    #[arg(long, env = "BILLPAY_WEBHOOK_CONCURRENCY_PER_KEY")]
    webhook_concurrency_per_key: Option<usize>,
    /// Close a connection whose request headers do not arrive within this
    /// many seconds; also how long an idle keep-alive connection stays open
    /// (default 15).
    #[arg(long, env = "BILLPAY_HEADER_TIMEOUT_SECS")]
    header_timeout_secs: Option<u64>,
    /// Answer 408 when a request body stalls this many seconds (default 30).
    #[arg(long, env = "BILLPAY_BODY_TIMEOUT_SECS")]
    body_timeout_secs: Option<u64>,
    /// Answer 408 when a request body is not complete this many seconds
    /// after its headers, however it trickles (default 60).
    #[arg(long, env = "BILLPAY_BODY_DEADLINE_SECS")]
    body_deadline_secs: Option<u64>,
    /// Open connections at most (default 4096); more wait to be accepted.
    #[arg(long, env = "BILLPAY_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    #[command(flatten)]
    supplier: super::supplier::SupplierArgs,
}

const DEMO_EMAIL: &str = "demo@billpay.local";

pub async fn run(settings: Settings, args: ServeArgs) -> anyhow::Result<()> {
    let file = &settings.file;
    let limits = connection_limits(&args, file)?;
    let listen = args
        .listen
        .or(file.listen.clone())
        .unwrap_or_else(|| super::config::DEFAULT_LISTEN.into());
    let latency = args
        .sandbox_latency_ms
        .or(file.sandbox_latency_ms)
        .unwrap_or(500);
    let rate_limit = RateLimit {
        per_second: args
            .rate_limit_per_second
            .or(file.rate_limit_per_second)
            .unwrap_or(50),
        burst: args
            .rate_limit_burst
            .or(file.rate_limit_burst)
            .unwrap_or(100),
    };
    let allow_private = args
        .webhook_allow_private
        .or(file.webhook_allow_private)
        .unwrap_or(args.demo);

    let store = settings.open_store().await?;
    let metrics = super::metrics::Metrics::install(store.clone())?;
    let secrets = settings.secret_box()?;
    let latency = Duration::from_millis(latency);
    let unreachable = args
        .sandbox_unreachable
        .or(file.sandbox_unreachable)
        .unwrap_or(false);
    let sandbox = if unreachable {
        tracing::warn!("the sandbox supplier is set unreachable: purchases stay processing");
        SandboxSupplier::unreachable(latency)
    } else {
        SandboxSupplier::new(latency)
    };
    let routes = Arc::new(args.supplier.build(file, sandbox)?);
    let supplier = routes.clone();
    let mut state = AppState::new(store.clone(), supplier.clone(), rate_limit);
    let redis_url = args.redis_url.or(file.redis_url.clone());
    if let Some(url) = redis_url.as_deref().filter(|u| !u.is_empty()) {
        let limiter = billpay_api::rate_limit::RateLimiter::with_redis(url)
            .await
            .map_err(|e| anyhow::anyhow!("{e} ({})", super::config::redact(url)))?;
        state.limiter = Arc::new(limiter);
    }
    let shutdown = Arc::new(Notify::new());
    let role = match (args.no_worker, args.worker_only) {
        (true, _) => "api",
        (_, true) => "worker",
        _ => "api+worker",
    };
    let mut workers = Vec::new();

    let fulfilment_settings = FulfilmentSettings {
        needs_review_after: settings.needs_review_after()?,
        ..FulfilmentSettings::default()
    };
    let fulfilment = Fulfilment::new(store.clone(), routes, fulfilment_settings);
    // Not a worker: it has nothing to finish at shutdown (aborted there).
    let float_watch = args
        .supplier
        .float_watch(file)?
        .map(|float| tokio::spawn(float.watch()));
    let callbacks = billpay_callbacks::router(
        billpay_supplier::callback::all(),
        fulfilment.clone(),
        Default::default(),
    );
    if !args.no_worker {
        workers.push(tokio::spawn(
            fulfilment.run(state.purchases_waiting.clone(), shutdown.clone()),
        ));
    }
    let delivery_config = DeliveryConfig {
        allow_private,
        ..DeliveryConfig::default()
    };
    let mut delivery_settings = DeliverySettings {
        client: delivery_config,
        ..DeliverySettings::default()
    };
    if let Some(secs) = args.delivery_lease_secs.or(file.delivery_lease_secs) {
        delivery_settings.lease = Duration::from_secs(secs.max(1));
    }
    if let Some(n) = args.webhook_concurrency.or(file.webhook_concurrency) {
        delivery_settings.concurrency = n.max(1);
    }
    let per_key = args.webhook_concurrency_per_key;
    if let Some(n) = per_key.or(file.webhook_concurrency_per_key) {
        delivery_settings.per_key = n.max(1);
    }
    if !args.no_worker {
        workers.push(tokio::spawn(
            Delivery::new(store.clone(), secrets.clone(), delivery_settings).run(shutdown.clone()),
        ));
    }

    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let address = listener.local_addr()?;
    if args.demo && !args.worker_only {
        demo(&store, address).await?;
    }
    println!("billpay listening on http://{address}");
    tracing::info!(%address, role, shared_rate_limits = state.limiter.is_shared(), database = %super::config::redact(&settings.database_url), sandbox_latency_ms = latency.as_millis(), "billpay started");
    let dashboard =
        billpay_dashboard::DashboardState::new(store.clone(), secrets.clone(), delivery_config);
    let app = billpay_api::router(state)
        .merge(billpay_dashboard::router(dashboard))
        .merge(callbacks);
    let app = if args.worker_only {
        health_only(role)
    } else {
        app
    };
    let app = match args.metrics_listen.or(file.metrics_listen.clone()) {
        Some(address) => {
            serve_metrics_apart(&address, metrics, limits).await?;
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

/// The connection limits from flags, environment or file, else the defaults.
fn connection_limits(args: &ServeArgs, file: &FileConfig) -> anyhow::Result<ConnectionLimits> {
    let defaults = ConnectionLimits::default();
    let seconds =
        |flag: Option<u64>, file: Option<u64>, default: Duration, name: &str| match flag.or(file) {
            Some(0) => anyhow::bail!("{name} must be at least 1 second"),
            Some(secs) => Ok(Duration::from_secs(secs)),
            None => Ok(default),
        };
    let limits = ConnectionLimits {
        header_timeout: seconds(
            args.header_timeout_secs,
            file.header_timeout_secs,
            defaults.header_timeout,
            "--header-timeout-secs",
        )?,
        body_timeout: seconds(
            args.body_timeout_secs,
            file.body_timeout_secs,
            defaults.body_timeout,
            "--body-timeout-secs",
        )?,
        body_deadline: seconds(
            args.body_deadline_secs,
            file.body_deadline_secs,
            defaults.body_deadline,
            "--body-deadline-secs",
        )?,
        max_connections: args
            .max_connections
            .or(file.max_connections)
            .unwrap_or(defaults.max_connections),
    };
    anyhow::ensure!(
        limits.max_connections > 0,
        "--max-connections must be at least 1"
    );
    Ok(limits)
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
