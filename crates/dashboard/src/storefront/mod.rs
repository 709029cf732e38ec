//! The storefront: `/` for a browser (an API client asking for JSON still
//! gets the API's index: [`for_browsers`] sends only `Accept: text/html` here).
//! What a stranger meets: the business's name and logo, each product on sale
//! with its "from ₦…" price, the data plans per network, how to fund,
//! support contacts, sign up and sign in; the API documentation for
//! resellers in the footer. Prices are the sign-up tier's (what a new
//! account pays; list prices when there is none), read through the
//! catalogue and price caches, so a change shows within their second.
//!
//! Also what makes the shop installable, at the root: the web manifest,
//! the service worker (`/sw.js`, scope `/`: the shell cached, an offline
//! page), the logo and the icons made from it.

use crate::DashboardState;
use crate::brand::current;
use crate::format::naira;
use askama::Template;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use billpay_domain::Kobo;
use billpay_domain::brand::Brand;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::order::MIN_CHARGE;
use billpay_domain::pricing::{PriceBook, denomination_key};
use billpay_domain::product::Product;
use billpay_webkit::{PageError, PageResult, render};
use std::sync::Arc;

/// The storefront's other routes (the manifest, the service worker, the
/// offline page, the logo and icons, its stylesheet and script); `/` itself
/// is [`home`], reached through [`for_browsers`].
pub fn routes() -> Router<DashboardState> {
    Router::new()
        .route("/manifest.webmanifest", get(manifest))
        .route("/sw.js", get(service_worker))
        .route("/offline", get(offline))
        .route("/brand/logo.png", get(logo))
        .route("/brand/logo.svg", get(logo))
        .route("/brand/icon.svg", get(icon_svg))
        .route("/brand/icon-192.png", get(icon_192))
        .route("/brand/icon-512.png", get(icon_512))
        .route("/dashboard/assets/storefront.css", get(stylesheet))
        .route("/dashboard/assets/install.js", get(install_script))
}

/// `GET /` with `Accept: text/html` answered by `front` (the storefront's
/// router); every other request goes on (`/` as JSON: the API's index).
pub async fn for_browsers(State(front): State<Router>, request: Request, next: Next) -> Response {
    let browser = request.uri().path() == "/"
        && matches!(*request.method(), Method::GET | Method::HEAD)
        && request
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"));
    if !browser {
        return next.run(request).await;
    }
    use tower::ServiceExt;
    match front.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// A product on the storefront: its form's path, its name, a line, the lowest price.
struct Tile {
    slug: &'static str,
    title: &'static str,
    blurb: &'static str,
    from: String,
}

/// A network's data plans.
struct Network {
    name: String,
    slug: String,
    plans: Vec<PlanRow>,
}

struct PlanRow {
    name: String,
    kind: String,
    validity: String,
    price: String,
}

#[derive(Template)]
#[template(path = "storefront/home.html")]
struct HomePage {
    brand: Arc<Brand>,
    tiles: Vec<Tile>,
    networks: Vec<Network>,
    signup_open: bool,
    /// Money in: a bank account number of one's own; a card.
    transfer: bool,
    card: bool,
}

/// What a product is called on the storefront and where its form is.
fn described(product: Product) -> (&'static str, &'static str, &'static str) {
    match product {
        Product::Data => ("data", "Data", "Bundles for MTN, Airtel, Glo and 9mobile"),
        Product::Airtime => ("airtime", "Airtime", "Top up any Nigerian number"),
        Product::Electricity => (
            "electricity",
            "Electricity",
            "Prepaid tokens and postpaid bills",
        ),
        Product::Cable => ("cable", "Cable TV", "DStv, GOtv and StarTimes"),
        Product::Epin => ("epin", "Recharge cards", "Printable airtime e-pins"),
        Product::Education => ("exam", "Exam pins", "Result checker and registration pins"),
        Product::Betting => ("betting", "Betting", "Fund a betting account"),
    }
}

/// What a new account pays: the sign-up tier's price of one `unit`
/// (list price without a tier or rule), never under the floor.
struct Pricer<'a> {
    book: &'a PriceBook,
    tier: Option<&'a str>,
}

impl Pricer<'_> {
    fn price(&self, product: Product, provider: &str, plan: Option<&str>, unit: Kobo) -> Kobo {
        let rule = self
            .tier
            .and_then(|t| self.book.tiers.get(t))
            .and_then(|t| t.rule_for(product, provider, plan));
        let price = rule.and_then(|r| r.apply(unit, 1)).unwrap_or(unit);
        price.max(MIN_CHARGE)
    }
}

fn validity(days: u32) -> String {
    match days {
        1 => "1 day".to_owned(),
        d => format!("{d} days"),
    }
}

/// The lowest price of each product on sale and the data plans by network.
fn offer(
    catalogue: &Catalogue,
    pricer: &Pricer,
    sells: impl Fn(Product, &str) -> bool,
) -> (Vec<Tile>, Vec<Network>) {
    let sells = &sells;
    let on_sale = |product: Product| {
        catalogue
            .providers
            .iter()
            .filter(move |p| p.active && p.services.contains(&product) && sells(product, &p.slug))
            .collect::<Vec<_>>()
    };
    let mut networks = Vec::new();
    for provider in on_sale(Product::Data) {
        let mut plans: Vec<_> = catalogue
            .data_plans
            .iter()
            .filter(|plan| plan.active && plan.provider == provider.slug)
            .map(|plan| {
                let price = pricer.price(
                    Product::Data,
                    &provider.slug,
                    Some(&plan.plan_id),
                    plan.price,
                );
                (price, plan)
            })
            .collect();
        plans.sort_by_key(|(price, plan)| (*price, plan.duration));
        if plans.is_empty() {
            continue;
        }
        networks.push((
            plans[0].0,
            Network {
                name: provider.name.clone(),
                slug: provider.slug.clone(),
                plans: plans
                    .into_iter()
                    .map(|(price, plan)| PlanRow {
                        name: plan.name.clone(),
                        kind: catalogue.data_plan_type(plan).to_owned(),
                        validity: validity(plan.duration),
                        price: naira(price),
                    })
                    .collect(),
            },
        ));
    }
    let mut tiles = Vec::new();
    for product in [
        Product::Data,
        Product::Airtime,
        Product::Electricity,
        Product::Cable,
        Product::Education,
        Product::Epin,
        Product::Betting,
    ] {
        let providers = on_sale(product);
        let lowest = match product {
            Product::Data => networks.iter().map(|(price, _)| *price).min(),
            Product::Airtime | Product::Electricity | Product::Betting => {
                let least = product
                    .amount_limits()
                    .map_or(Kobo::ZERO, |l| Kobo::from_naira(l.min_naira));
                providers
                    .iter()
                    .map(|p| pricer.price(product, &p.slug, None, least))
                    .min()
            }
            Product::Cable => catalogue
                .cable_plans
                .iter()
                .filter(|plan| plan.active && providers.iter().any(|p| p.slug == plan.provider))
                .map(|plan| pricer.price(product, &plan.provider, Some(&plan.plan_id), plan.price))
                .min(),
            Product::Epin => catalogue
                .epin_denominations
                .iter()
                .filter(|d| providers.iter().any(|p| p.slug == d.provider))
                .map(|d| {
                    let key = denomination_key(d.denomination);
                    pricer.price(product, &d.provider, Some(&key), d.denomination)
                })
                .min(),
            Product::Education => providers
                .iter()
                .filter_map(|p| Some(pricer.price(product, &p.slug, None, p.price?)))
                .min(),
        };
        let Some(lowest) = lowest else { continue };
        let (slug, title, blurb) = described(product);
        tiles.push(Tile {
            slug,
            title,
            blurb,
            from: naira(lowest),
        });
    }
    (tiles, networks.into_iter().map(|(_, n)| n).collect())
}

/// What the storefront is made of: the brand, the catalogue and the price
/// book, each an `Arc` its cache replaces when it changes (the rest — the
/// sign-up tier, the routes, the gateways — is fixed at start).
struct MadeOf {
    brand: Arc<Brand>,
    shop: Option<(Arc<Catalogue>, Arc<PriceBook>)>,
}

impl MadeOf {
    fn same(&self, other: &MadeOf) -> bool {
        Arc::ptr_eq(&self.brand, &other.brand)
            && match (&self.shop, &other.shop) {
                (Some((c, b)), Some((oc, ob))) => Arc::ptr_eq(c, oc) && Arc::ptr_eq(b, ob),
                (None, None) => true,
                _ => false,
            }
    }
}

/// The storefront as last rendered. Every stranger and every crawler opens
/// `/`, and it changes only with what it is made of ([`MadeOf`]): it is
/// rendered once per change, not once per visit (issue 46's speed target).
#[derive(Default)]
pub struct LastFront(std::sync::Mutex<Option<(MadeOf, Bytes)>>);

impl LastFront {
    fn page_of(&self, made_of: &MadeOf) -> Option<Bytes> {
        let last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        last.as_ref()
            .filter(|(seen, _)| seen.same(made_of))
            .map(|(_, page)| page.clone())
    }

    fn keep(&self, made_of: MadeOf, page: Bytes) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((made_of, page));
    }
}

/// `GET /` (a browser): the storefront.
pub async fn home(State(state): State<DashboardState>) -> PageResult {
    let made_of = MadeOf {
        brand: current(),
        shop: match &state.shop {
            Some(shop) => Some((shop.catalogue.get().await?, shop.prices.get().await?)),
            None => None,
        },
    };
    if let Some(page) = state.front.page_of(&made_of) {
        return Ok(Html(page).into_response());
    }
    let (tiles, networks) = match (&state.shop, &made_of.shop) {
        (Some(shop), Some((catalogue, book))) => {
            let pricer = Pricer {
                book,
                tier: state.care.policy.tier.as_deref(),
            };
            offer(catalogue, &pricer, |product, slug| {
                shop.suppliers.sells(product, slug)
            })
        }
        _ => (Vec::new(), Vec::new()),
    };
    // every gateway reserves accounts of one's own to transfer to
    let transfer = !state.funding.gateways().is_empty();
    let card = state.funding.checkout_gateway().is_some();
    let page = HomePage {
        brand: made_of.brand.clone(),
        tiles,
        networks,
        signup_open: state.care.policy.open,
        transfer,
        card,
    };
    let page = Bytes::from(page.render().map_err(|e| PageError::internal(&e))?);
    state.front.keep(made_of, page.clone());
    Ok(Html(page).into_response())
}

#[derive(Template)]
#[template(path = "storefront/offline.html")]
struct OfflinePage {
    brand: Arc<Brand>,
}

/// `GET /offline`: what the service worker shows when the network is gone.
async fn offline() -> PageResult {
    Ok(render(&OfflinePage { brand: current() }))
}

/// A file of the brand, cached for an hour (an edit shows within it).
fn file(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            ),
            // an SVG opened by itself runs nothing
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; sandbox"),
            ),
        ],
        body.into(),
    )
        .into_response()
}

/// `GET /brand/logo.png` or `.svg`: the logo (404 without one).
async fn logo(request: Request) -> Response {
    let brand = current();
    match &brand.logo {
        Some(logo) if request.uri().path() == logo.path() => file(
            logo.content_type(),
            axum::body::Bytes::from(logo.bytes.to_vec()),
        ),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `GET /brand/icon.svg`: the SVG logo, else the initial on the colour.
async fn icon_svg() -> Response {
    let brand = current();
    match brand
        .logo
        .as_ref()
        .filter(|l| l.kind == billpay_domain::brand::LogoKind::Svg)
    {
        Some(logo) => file(
            "image/svg+xml",
            axum::body::Bytes::from(logo.bytes.to_vec()),
        ),
        None => file("image/svg+xml", brand.initial_icon_svg()),
    }
}

async fn icon_192(State(state): State<DashboardState>) -> Response {
    match &state.brand.icons.png_192 {
        Some(png) => file("image/png", axum::body::Bytes::from(png.to_vec())),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn icon_512(State(state): State<DashboardState>) -> Response {
    match &state.brand.icons.png_512 {
        Some(png) => file("image/png", axum::body::Bytes::from(png.to_vec())),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `GET /manifest.webmanifest`: the brand's name, icons and colour; the
/// installed app opens the buyer's home.
async fn manifest(State(state): State<DashboardState>) -> Response {
    let brand = current();
    let icons = if state.brand.icons.png_192.is_some() {
        serde_json::json!([
            {"src": "/brand/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
            {"src": "/brand/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
        ])
    } else {
        serde_json::json!([
            {"src": "/brand/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
        ])
    };
    let short: String = brand.name.chars().take(12).collect();
    let body = serde_json::json!({
        "name": brand.name,
        "short_name": short.trim(),
        "description": format!("Buy data, airtime, electricity and TV from {}", brand.name),
        "start_url": "/dashboard",
        "scope": "/",
        "display": "standalone",
        "background_color": "#ffffff",
        "theme_color": brand.colour.as_str(),
        "icons": icons,
    });
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/manifest+json"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body.to_string(),
    )
        .into_response()
}

/// `GET /sw.js`: the service worker (scope `/`).
async fn service_worker() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
            (
                header::HeaderName::from_static("service-worker-allowed"),
                "/",
            ),
        ],
        include_str!("../../assets/sw.js"),
    )
        .into_response()
}

async fn stylesheet() -> Response {
    billpay_webkit::asset("text/css", include_str!("../../assets/storefront.css")).await
}

async fn install_script() -> Response {
    billpay_webkit::asset("text/javascript", include_str!("../../assets/install.js")).await
}
