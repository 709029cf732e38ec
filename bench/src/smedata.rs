//! Data purchases through fake SME-data sites (issue 47: "routing by cost
//! adds nothing measurable"). The sites are `billpay-fakes`' `FakeSmedata`,
//! the integration tests' own fake, served from this process (each on a
//! thread and runtime of its own, no added latency). Two rows on fresh
//! SQLite databases, one hot wallet (16 keys), API + workers: every data
//! purchase through ONE site (routes' fixed order); then through TWO sites
//! with `[routing] data = "cheapest"`, the dearer listed first so that only
//! routing by cost sends the purchases to the cheaper one. The second is
//! compared with the first (target ≥ 0.95 ×). After each run the backlog
//! must drain and the sites' orders must be the purchases paid for, one
//! each: a purchase that never reached a site would not count.

use super::*;
use billpay_fakes::smedata::{FakeSmedata, TOKEN};

const DATA: &str = "/v1/data/purchase";
/// What bench/wrk/billpay.lua's `data` kind buys, and for whom.
const PLAN: &str = "mtn-sme-1gb";
const PHONE: &str = "08031234567";
/// The site's plan id of our 1 GB SME plan (the fake lists it as `6`).
const SITE_PLAN: &str = "6";

/// A site: its name in the config file, its fake, and what the 1 GB SME
/// plan costs there (the expected cost routing reads, in naira).
struct Site {
    name: &'static str,
    fake: FakeSmedata,
    cost: &'static str,
}

/// A fake site listing only the 1 GB SME plan, at `listed` naira, charging
/// `charged`; its wallet funded for any run (₦10 bn).
async fn site(name: &'static str, listed: &'static str, charged: &'static str) -> Site {
    let fake = FakeSmedata::start().await;
    fake.set_plans(vec![(6, 1, "SME", "1.0GB", listed, charged)]);
    fake.set_balance(1_000_000_000_000);
    Site {
        name,
        fake,
        cost: charged,
    }
}

/// The pair of rows: one site, then two routed by cost (against one).
/// With `rounds` > 1 the pair is run that many times, alternated (one, two;
/// two, one; …, each on fresh servers and sites), every round's rows kept,
/// and a last row compares the two's mean rates: on a machine whose runs
/// scatter by more than the 5 % asked about, one pair cannot tell.
pub(crate) async fn smedata_rows(
    bench: &mut Bench,
    rows: &mut Vec<Row>,
    peak_rss: &mut PeakRss,
    rounds: usize,
) {
    let (mut ones, mut twos) = (Vec::new(), Vec::new());
    // The server's CPU µs a purchase, each run.
    let (mut ones_cpu, mut twos_cpu) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let label = if rounds > 1 {
            format!(", round {}", round + 1)
        } else {
            String::new()
        };
        let ((alone, one_cpu), (mut routed, two_cpu)) = if round % 2 == 0 {
            let alone = one_site(bench, &label, peak_rss).await;
            (alone, two_sites(bench, &label, peak_rss).await)
        } else {
            let routed = two_sites(bench, &label, peak_rss).await;
            (one_site(bench, &label, peak_rss).await, routed)
        };
        routed.ceiling = Some(("one site".into(), alone.rate));
        routed.target = Some("≥ 0.95".into());
        ones.push(alone.rate);
        twos.push(routed.rate);
        ones_cpu.push(one_cpu);
        twos_cpu.push(two_cpu);
        rows.push(alone);
        rows.push(routed);
    }
    if rounds > 1 {
        let mean = |rates: &[f64]| rates.iter().sum::<f64>() / rates.len() as f64;
        let each: Vec<String> = ones
            .iter()
            .zip(&twos)
            .map(|(one, two)| format!("{:.2}", two / one))
            .collect();
        rows.push(Row {
            what: format!(
                "SQLite live data purchase, two SME-data sites routed by cost against one, {rounds} alternated rounds (mean rates)"
            ),
            rate: mean(&twos),
            p50_ms: None,
            p99_ms: None,
            max_ms: None,
            errors: 0,
            ceiling: Some(("one site".into(), mean(&ones))),
            target: Some("≥ 0.95".into()),
            note: format!(
                "each round's ratio: {}; server CPU a purchase, means: {:.0} µs through two, {:.0} µs through one",
                each.join(", "),
                mean(&twos_cpu),
                mean(&ones_cpu)
            ),
        });
    }
}

async fn one_site(bench: &mut Bench, label: &str, peak_rss: &mut PeakRss) -> (Row, f64) {
    let one = [site("one", "280", "230").await];
    let what = format!(
        "SQLite live data purchase, one SME-data site (fake), hot wallet, API + workers{label}"
    );
    through(bench, &one, false, &what, peak_rss).await
}

async fn two_sites(bench: &mut Bench, label: &str, peak_rss: &mut PeakRss) -> (Row, f64) {
    let two = [
        site("dear", "300", "250").await,
        site("cheap", "280", "230").await,
    ];
    let what = format!(
        "SQLite live data purchase, two SME-data sites (fakes), `[routing] data = \"cheapest\"`, hot wallet, API + workers{label}"
    );
    through(bench, &two, true, &what, peak_rss).await
}

/// One wrk run of data purchases on a `billpay serve` configured with
/// `sites` (routed in their order, or by cost when `cheapest`), then the
/// checks: the backlog drained and each purchase paid for is one order at
/// one site. Answers the row and the server's CPU µs a purchase (the load
/// and the drain; the CPU is less moved by the machine's other work than
/// the rate).
async fn through(
    bench: &mut Bench,
    sites: &[Site],
    cheapest: bool,
    what: &str,
    peak_rss: &mut PeakRss,
) -> (Row, f64) {
    let names: Vec<String> = sites.iter().map(|s| format!("\"{}\"", s.name)).collect();
    let mut config = format!(
        "supplier = \"{}\"\n[routes]\ndata = [{}]\n",
        sites[0].name,
        names.join(", ")
    );
    if cheapest {
        config += "[routing]\ndata = \"cheapest\"\n";
    }
    for site in sites {
        config += &format!(
            "[suppliers.{}]\nkind = \"smedata\"\nbase_url = \"{}\"\ntoken = \"{TOKEN}\"\n",
            site.name,
            site.fake.api_url()
        );
    }
    let server = Billpay::start_configured(&config, &[]).await;
    for site in sites {
        map_plan(&server, site);
    }
    let keys = server.provision_keys(1, 16);
    let secrets: Vec<String> = keys.iter().map(|k| k.secret.clone()).collect();
    let load = Load {
        kind: "data",
        path: DATA,
        keys: &secrets,
        delay_ms: 0,
    };
    let cpu_before = server.cpu_us();
    let mut row = bench.wrk(&server.base, &load).row(what);
    let drained = server.drain();
    let cpu = (server.cpu_us() - cpu_before) as f64;
    assert!(
        drained.is_some(),
        "{what}: backlog NOT drained within 120 s"
    );
    let price = plan_price_kobo(&server);
    let spent = server.spent_kobo(&keys[0].account);
    assert_eq!(
        spent % price,
        0,
        "{what}: paid {spent} kobo at {price} each"
    );
    let paid = spent / price;
    let orders: Vec<usize> = sites.iter().map(|s| s.fake.orders_for(PHONE)).collect();
    let posts: Vec<usize> = sites
        .iter()
        .map(|s| s.fake.posts_for(PHONE).len())
        .collect();
    let total: usize = orders.iter().sum();
    assert!(total > 0, "{what}: no order reached a site");
    assert_eq!(
        (total as i64, posts.iter().sum::<usize>() as i64),
        (paid, paid),
        "{what}: each purchase paid for is one POST and one order at a site"
    );
    let at: Vec<String> = sites
        .iter()
        .zip(&orders)
        .map(|(s, n)| format!("{n} at {} (₦{})", s.name, s.cost))
        .collect();
    row.note = format!(
        "{paid} purchases paid, orders {}; backlog drained {:.1} s after the load; server CPU {:.0} µs a purchase",
        at.join(", "),
        drained.unwrap_or_default(),
        cpu / paid as f64
    );
    peak_rss.saw(&server, what);
    (row, cpu / paid as f64)
}

/// The catalogue's `codes.<site>` of the 1 GB SME plan: the site's plan id
/// and its expected cost, set by importing the exported catalogue with them
/// (as an owner maps a plan by hand).
fn map_plan(server: &Billpay, site: &Site) {
    let toml = server.cli_text(&["catalogue", "export"]);
    let marker = format!("plan_id = \"{PLAN}\"\n");
    let at = toml.find(&marker).expect("the plan is in the catalogue");
    let end = at + toml[at..].find("\n\n").expect("the plan's block ends");
    let edited = format!(
        "{}\n\n[data_plans.codes.{}]\nplan = \"{SITE_PLAN}\"\ncost = \"{}\"{}",
        &toml[..end],
        site.name,
        site.cost,
        &toml[end..]
    );
    let file = server
        ._dir
        .path()
        .join(format!("catalogue-{}.toml", site.name));
    std::fs::write(&file, edited).unwrap();
    server.cli(&["catalogue", "import", file.to_str().unwrap()]);
    let codes = &plan(server)["codes"][site.name];
    assert_eq!(codes["plan"], SITE_PLAN, "{}: {codes}", site.name);
}

fn plan(server: &Billpay) -> Value {
    server.cli(&["catalogue", "export"])["catalogue"]["data_plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_id"] == PLAN)
        .expect("the plan is in the catalogue")
        .clone()
}

/// What the customer pays for the plan, in kobo.
fn plan_price_kobo(server: &Billpay) -> i64 {
    (plan(server)["price"].as_f64().unwrap() * 100.0).round() as i64
}
