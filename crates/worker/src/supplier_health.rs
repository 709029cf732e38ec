//! What the fulfilment worker knows of its suppliers' health and costs
//! (issue 47): the store's records (`SupplierHealthStore`, every node's),
//! read at most once a second, and what this node just wrote. It orders a
//! purchase's suppliers (`Routes::pick`) and records each answer — a
//! definite failure, a timeout or no answer counts against the supplier; a
//! delivery clears it — writing only when something changes (a healthy
//! supplier's delivery at the cost already known writes nothing).

use billpay_domain::Kobo;
use billpay_domain::catalogue::Catalogue;
use billpay_domain::supplier_health::{
    Answer, HealthRules, HealthState, SupplierHealth, Transition, expected_cost,
};
use billpay_store::clock::now_ms;
use billpay_store::{HealthOutcome, SharedStore, StoreResult, SupplierCost, Transaction};
use billpay_supplier::Supplier;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How old the view may be before it is read again.
const FRESH: Duration = Duration::from_secs(1);

/// (supplier, product, provider, plan or "") → (cost, face value).
type Costs = HashMap<(String, String, String, String), (Kobo, Kobo)>;

#[derive(Default, Clone)]
pub struct View {
    health: HashMap<String, SupplierHealth>,
    costs: Costs,
}

impl View {
    pub fn state(&self, supplier: &str, now_ms: i64) -> HealthState {
        self.health
            .get(supplier)
            .map_or(HealthState::Healthy, |h| h.state(now_ms))
    }

    /// `supplier`'s known cost of `tx`: the plan's expected cost there from
    /// the catalogue's codes, else the last real cost of a delivery (for a
    /// product without plans, scaled to this face value).
    pub fn cost(&self, supplier: &str, tx: &Transaction, catalogue: &Catalogue) -> Option<Kobo> {
        if let Some(plan) = tx.plan_id.as_deref() {
            let codes = catalogue.supplier_codes(supplier, &tx.provider, Some(plan));
            if let Some(expected) = expected_cost(&codes) {
                return Some(expected);
            }
        }
        let (cost, face) = self.costs.get(&key(supplier, tx))?;
        if tx.plan_id.is_some() || face.0 == tx.face_value.0 {
            return Some(*cost);
        }
        let scaled = i128::from(cost.0) * i128::from(tx.face_value.0) / i128::from(face.0.max(1));
        i64::try_from(scaled).ok().map(Kobo)
    }
}

fn key(supplier: &str, tx: &Transaction) -> (String, String, String, String) {
    (
        supplier.to_owned(),
        tx.product.service().to_owned(),
        tx.provider.clone(),
        tx.plan_id.clone().unwrap_or_default(),
    )
}

pub struct HealthCache {
    store: SharedStore,
    rules: HealthRules,
    view: Mutex<(Option<Instant>, Arc<View>)>,
    reading: tokio::sync::Mutex<()>,
}

impl HealthCache {
    pub fn new(store: SharedStore, rules: HealthRules) -> HealthCache {
        HealthCache {
            store,
            rules,
            view: Mutex::default(),
            reading: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Option<Instant>, Arc<View>)> {
        self.view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn fresh(&self) -> Option<Arc<View>> {
        let view = self.lock();
        view.0
            .is_some_and(|at| at.elapsed() < FRESH)
            .then(|| view.1.clone())
    }

    /// The view, read again when older than a second.
    pub async fn view(&self) -> StoreResult<Arc<View>> {
        if let Some(view) = self.fresh() {
            return Ok(view);
        }
        let _one_reader = self.reading.lock().await;
        if let Some(view) = self.fresh() {
            return Ok(view);
        }
        let health = self.store.supplier_health().await?;
        let costs = self.store.supplier_costs().await?;
        let view = Arc::new(View {
            health: health
                .into_iter()
                .map(|h| (h.supplier.clone(), h))
                .collect(),
            costs: costs
                .into_iter()
                .map(|c| {
                    let key = (c.supplier, c.product, c.provider, c.plan);
                    (key, (c.cost, c.face_value))
                })
                .collect(),
        });
        *self.lock() = (Some(Instant::now()), view.clone());
        Ok(view)
    }

    /// This purchase takes `supplier`'s probe (its back-off is over);
    /// `false`: another purchase (on any node) has it.
    pub async fn take_probe(&self, supplier: &str) -> StoreResult<bool> {
        let taken = self.store.take_supplier_probe(supplier, self.rules).await?;
        if taken {
            tracing::info!(supplier, "probing a supplier after its back-off");
        }
        Ok(taken)
    }

    /// Records `supplier`'s answer about `tx`: `delivered` with its cost, or
    /// a failure's message; written only when it changes something.
    pub async fn record(
        &self,
        supplier: &dyn Supplier,
        tx: &Transaction,
        answer: Answer,
        cost: Option<Kobo>,
    ) -> StoreResult<()> {
        let view = self.view().await?;
        let name = supplier.name();
        let learned = cost.filter(|cost| {
            let known = view.costs.get(&key(name, tx));
            // The same cost for the same face value (or the same rate) is known already.
            known.is_none_or(|(was, face)| {
                i128::from(was.0) * i128::from(tx.face_value.0)
                    != i128::from(cost.0) * i128::from(face.0)
            })
        });
        let clear = view
            .health
            .get(name)
            .is_none_or(|h| h.failures == 0 && h.backoff_until_ms.is_none());
        let answer = match answer {
            Answer::Delivered if clear => None,
            other => Some(other),
        };
        if answer.is_none() && learned.is_none() {
            return Ok(());
        }
        let at_ms = now_ms();
        let outcome = HealthOutcome {
            supplier: name.to_owned(),
            answer,
            cost: learned.map(|cost| SupplierCost {
                supplier: name.to_owned(),
                product: tx.product.service().to_owned(),
                provider: tx.provider.clone(),
                plan: tx.plan_id.clone().unwrap_or_default(),
                cost,
                face_value: tx.face_value,
                at_ms,
            }),
        };
        let learned_cost = outcome.cost.clone();
        let (health, transition) = self
            .store
            .record_supplier_outcome(outcome, self.rules)
            .await?;
        match transition {
            Some(Transition::Down { episode }) => tracing::warn!(
                supplier = name,
                failures = health.failures,
                episode,
                until = %utc(health.backoff_until_ms),
                "supplier unhealthy after failures in a row: skipped while it backs off"
            ),
            Some(Transition::Back { episode }) => {
                tracing::info!(supplier = name, episode, "supplier healthy again")
            }
            None => {}
        }
        let mut lock = self.lock();
        let mut view = (*lock.1).clone();
        view.health.insert(name.to_owned(), health);
        if let Some(c) = learned_cost {
            let key = (c.supplier, c.product, c.provider, c.plan);
            view.costs.insert(key, (c.cost, c.face_value));
        }
        lock.1 = Arc::new(view);
        Ok(())
    }
}

/// An instant (Unix ms) as RFC 3339 UTC, for a log line.
fn utc(at_ms: Option<i64>) -> String {
    at_ms.map_or_else(String::new, billpay_store::clock::rfc3339)
}

/// One supplier's health as people read it (`billpay supplier health`, the
/// console's Suppliers page).
#[derive(Debug, Clone)]
pub struct Report {
    pub supplier: String,
    pub state: HealthState,
    /// Definite failures and timeouts in a row.
    pub failures: u32,
    /// How many times it became unhealthy.
    pub episodes: u32,
    /// The last errors, newest first.
    pub last_errors: Vec<billpay_domain::supplier_health::HealthError>,
    /// Its last known real costs, newest first (at most [`COSTS_SHOWN`]).
    pub last_costs: Vec<SupplierCost>,
}

/// How many of a supplier's last known costs a report shows.
pub const COSTS_SHOWN: usize = 10;

/// Every supplier of `names` (those configured) and every other one the
/// store has a record of, by name: its state at `now_ms`, its failures and
/// last errors, its last known costs.
pub async fn report(
    store: &SharedStore,
    names: &[String],
    now_ms: i64,
) -> StoreResult<Vec<Report>> {
    let health = store.supplier_health().await?;
    let mut costs = store.supplier_costs().await?;
    costs.sort_by_key(|c| std::cmp::Reverse(c.at_ms));
    let mut all: Vec<String> = names.to_vec();
    all.extend(health.iter().map(|h| h.supplier.clone()));
    all.extend(costs.iter().map(|c| c.supplier.clone()));
    all.sort();
    all.dedup();
    Ok(all
        .into_iter()
        .map(|name| {
            let found = health.iter().find(|h| h.supplier == name);
            let record = found.cloned().unwrap_or_else(|| SupplierHealth::new(&name));
            let mut last_errors = record.last_errors.clone();
            last_errors.reverse();
            let last_costs = costs
                .iter()
                .filter(|c| c.supplier == name)
                .take(COSTS_SHOWN)
                .cloned()
                .collect();
            Report {
                state: record.state(now_ms),
                failures: record.failures,
                episodes: record.episodes,
                last_errors,
                last_costs,
                supplier: name,
            }
        })
        .collect())
}
