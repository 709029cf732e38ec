//! Purchases at SME-data sites (support/smedata.rs, a fake written from
//! the family's facts), each site a supplier named by its config section:
//! every outcome through a real `billpay serve`, the money exact, never two
//! orders at the sites for one purchase; the settings' refusals.

mod fulfilment;
mod lost;
mod routing;
mod settings;

pub use crate::support::clubkonnect::FakeClubkonnect;
pub use crate::support::smedata::{FakeSmedata, SCRIPT_NETWORKS};
pub use crate::support::{Options, TestServer};
pub use crate::vtpass::{buy, until};
pub use serde_json::{Value, json};
pub use std::time::Duration;

/// A `billpay serve` with a config file of `sites` (name, fake, extra keys
/// of its section) and `routes`, the first site the default supplier, plus
/// `env`; the data plan `mtn-sme-1gb` is mapped to each site's plan `6`
/// and the cable plan `gotv-max` to its plan `2`. `postgres`: on
/// PostgreSQL whatever the test backend (`None`: skipped without one).
pub struct Sites {
    pub server: TestServer,
    /// Outlives the server (its last audit reads the config file).
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for Sites {
    type Target = TestServer;
    fn deref(&self) -> &TestServer {
        &self.server
    }
}

pub async fn sites(
    sites: &[(&str, &FakeSmedata, &str)],
    routes: &str,
    env: &[(&str, &str)],
) -> Sites {
    start(sites, routes, env, None).await.expect("a server")
}

/// [`sites`] on PostgreSQL (`None`: no `BILLPAY_TEST_POSTGRES_URL`, skipped).
pub async fn sites_on_postgres(
    test: &str,
    sites: &[(&str, &FakeSmedata, &str)],
    routes: &str,
    env: &[(&str, &str)],
) -> Option<Sites> {
    start(sites, routes, env, Some(test)).await
}

async fn start(
    sites: &[(&str, &FakeSmedata, &str)],
    routes: &str,
    env: &[(&str, &str)],
    postgres: Option<&str>,
) -> Option<Sites> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("billpay.toml");
    let sections: String = sites
        .iter()
        .map(|(name, fake, extra)| fake.section(name, extra))
        .collect();
    std::fs::write(
        &config,
        format!(
            "supplier = \"{}\"\n[routes]\n{routes}\n{sections}",
            sites[0].0
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap().to_owned();
    let mut all: Vec<(&str, &str)> = vec![("BILLPAY_CONFIG", &config)];
    all.extend_from_slice(env);
    let server = match postgres {
        Some(test) => TestServer::spawn_postgres(test, Options::default(), &all).await?,
        None => TestServer::spawn_with_env(Options::default(), &all).await,
    };
    for (name, _, _) in sites {
        map_plan(&server, "data_plans", "mtn-sme-1gb", name, "6");
        map_plan(&server, "cable_plans", "gotv-max", name, "2");
    }
    Some(Sites { server, _dir: dir })
}

/// The catalogue's `codes.<site>.plan` of one plan, set by importing the
/// exported catalogue with it.
pub fn map_plan(server: &TestServer, table: &str, plan_id: &str, site: &str, code: &str) {
    let (ok, toml, _) = crate::cli::run_text(server, &["catalogue", "export"]);
    assert!(ok);
    let marker = format!("plan_id = \"{plan_id}\"\n");
    let at = toml.find(&marker).expect("the plan is in the catalogue");
    let end = at + toml[at..].find("\n\n").expect("the plan's block ends");
    let edited = format!(
        "{}\n\n[{table}.codes.{site}]\nplan = \"{code}\"{}",
        &toml[..end],
        &toml[end..]
    );
    let file = server
        .path()
        .join(format!("catalogue-{site}-{plan_id}.toml"));
    std::fs::write(&file, edited).unwrap();
    server.cli(&["catalogue", "import", file.to_str().unwrap()]);
}

pub fn data(phone: &str) -> Value {
    json!({ "provider_id": "mtn", "plan_id": "mtn-sme-1gb", "phone": phone })
}

/// A transaction as `transaction show --json` gives it.
pub fn shown(server: &TestServer, code: &str) -> Value {
    server.cli(&["transaction", "show", code])
}

/// Who served a transaction and its reference there.
pub fn served_by(server: &TestServer, code: &str) -> (String, String) {
    let shown = &shown(server, code)["transaction"];
    let text = |key: &str| shown[key].as_str().unwrap_or_default().to_owned();
    (text("supplier"), text("supplier_reference"))
}

/// The price of the catalogue's `mtn-sme-1gb` (what the customer pays).
pub fn sme_1gb_price(server: &TestServer) -> f64 {
    server.cli(&["catalogue", "export"])["catalogue"]["data_plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_id"] == "mtn-sme-1gb")
        .unwrap()["price"]
        .as_f64()
        .unwrap()
}
