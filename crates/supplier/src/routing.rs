//! Which suppliers may fulfil a purchase, in order: per product, optionally
//! per product and provider (`"airtime.glo"`), else the default list.
//!
//! The fulfilment worker sends a purchase to the first supplier of its chain
//! that sells it and moves to the next only when that one answered `Failed`
//! (definitely not delivered, so not kept charged), never on an unknown
//! outcome. A verification asks the first supplier of the chain.
//!
//! `[routing]` (issue 47) may order a route by cost instead
//! (`data = "cheapest"`, or per provider `"data.mtn"`): the lowest known cost
//! first ([`Routes::pick`]). Either way a supplier backing off after failures
//! in a row (`billpay_domain::supplier_health`) is skipped, unless no other
//! supplier of the route sells the purchase.

use crate::*;
use billpay_domain::supplier_health::HealthState;
use std::collections::HashMap;
use std::sync::Arc;

pub struct Routes {
    suppliers: Vec<Arc<dyn Supplier>>,
    /// `product` or `product.provider` → supplier names, in order.
    routes: HashMap<String, Vec<String>>,
    default: Vec<String>,
    /// `product` or `product.provider` → how its route is ordered.
    orders: HashMap<String, Ordering>,
}

/// How a route's suppliers are ordered (`[routing]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// As `[routes]` lists them (the default).
    Listed,
    /// The lowest known cost first; unknown costs last, as listed.
    Cheapest,
}

impl std::str::FromStr for Ordering {
    type Err = ();
    fn from_str(text: &str) -> Result<Ordering, ()> {
        match text {
            "cheapest" => Ok(Ordering::Cheapest),
            "order" | "listed" => Ok(Ordering::Listed),
            _ => Err(()),
        }
    }
}

/// One supplier a purchase may go to, in the order to try them.
#[derive(Clone)]
pub struct Pick<'a> {
    pub supplier: &'a Arc<dyn Supplier>,
    /// Its back-off is over: this purchase must take the probe first (one
    /// at a time, every node's), else skip it.
    pub probe: bool,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RoutesError(String);

impl Routes {
    /// Every purchase to one supplier.
    pub fn single(supplier: Arc<dyn Supplier>) -> Routes {
        Routes {
            default: vec![supplier.name().to_owned()],
            suppliers: vec![supplier],
            routes: HashMap::new(),
            orders: HashMap::new(),
        }
    }

    /// `routes` keys are a product (`airtime`) or a product and provider
    /// (`airtime.glo`); each names suppliers of `suppliers`.
    pub fn new(
        suppliers: Vec<Arc<dyn Supplier>>,
        default: Vec<String>,
        routes: HashMap<String, Vec<String>>,
    ) -> Result<Routes, RoutesError> {
        let known = |name: &String| suppliers.iter().any(|s| s.name() == name);
        for (key, names) in routes.iter().chain([(&"default".to_owned(), &default)]) {
            let product = key.split('.').next().unwrap_or_default();
            if key != "default" && product.parse::<Product>().is_err() {
                return Err(RoutesError(format!(
                    "routes: {key:?} is not a product (airtime, data, epin, cable, electricity, education, betting), optionally .provider"
                )));
            }
            if names.is_empty() {
                return Err(RoutesError(format!("routes: {key} names no supplier")));
            }
            if let Some(unknown) = names.iter().find(|n| !known(n)) {
                let configured: Vec<_> = suppliers.iter().map(|s| s.name()).collect();
                return Err(RoutesError(format!(
                    "routes: {key} names {unknown:?}, not a configured supplier ({})",
                    configured.join(", ")
                )));
            }
        }
        Ok(Routes {
            suppliers,
            routes,
            default,
            orders: HashMap::new(),
        })
    }

    /// With `[routing]`: `product` or `product.provider` → `"cheapest"` or
    /// `"order"` (the listed order, the default).
    pub fn with_ordering(
        mut self,
        orders: &HashMap<String, String>,
    ) -> Result<Routes, RoutesError> {
        for (key, value) in orders {
            let product = key.split('.').next().unwrap_or_default();
            if product.parse::<Product>().is_err() {
                return Err(RoutesError(format!(
                    "routing: {key:?} is not a product (airtime, data, epin, cable, electricity, education, betting), optionally .provider"
                )));
            }
            let ordering = value.parse().map_err(|()| {
                RoutesError(format!(
                    "routing: {key} = {value:?}: say \"cheapest\" (the lowest known cost first) or \"order\" (as [routes] lists them)"
                ))
            })?;
            self.orders.insert(key.clone(), ordering);
        }
        Ok(self)
    }

    /// How the route of this product and provider is ordered: the
    /// provider's own `[routing]` key, else the product's, else as listed.
    pub fn ordering(&self, product: Product, provider: &str) -> Ordering {
        self.orders
            .get(&format!("{product}.{provider}"))
            .or_else(|| self.orders.get(product.service()))
            .copied()
            .unwrap_or(Ordering::Listed)
    }

    /// `[routing]` as configured, by key.
    pub fn orderings(&self) -> Vec<(String, Ordering)> {
        let mut keyed: Vec<_> = self.orders.iter().map(|(k, o)| (k.clone(), *o)).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed
    }

    /// The suppliers to try for one purchase, in order: its chain (those of
    /// its route that sell it), by `cost` (known cost, lowest first; unknown
    /// last, as listed) when its route is "cheapest"; those whose `health`
    /// says backing off (or probed by another purchase) left out, unless
    /// that leaves none: then every supplier of the chain, in that order
    /// (a purchase only they sell still goes to them).
    pub fn pick<'a>(
        &'a self,
        product: Product,
        provider: &str,
        cost: impl Fn(&dyn Supplier) -> Option<Kobo>,
        health: impl Fn(&str) -> HealthState,
    ) -> Vec<Pick<'a>> {
        let mut chain = self.chain(product, provider);
        if self.ordering(product, provider) == Ordering::Cheapest {
            // Stable: equal or unknown costs keep the listed order.
            chain.sort_by_cached_key(|s| match cost(s.as_ref()) {
                Some(kobo) => (false, kobo.0),
                None => (true, 0),
            });
        }
        let usable: Vec<Pick<'a>> = chain
            .iter()
            .filter_map(|supplier| {
                let state = health(supplier.name());
                state.usable().then_some(Pick {
                    supplier,
                    probe: state == HealthState::ProbeDue,
                })
            })
            .collect();
        if !usable.is_empty() {
            return usable;
        }
        chain
            .into_iter()
            .map(|supplier| Pick {
                supplier,
                probe: false,
            })
            .collect()
    }

    /// Every configured supplier.
    pub fn suppliers(&self) -> &[Arc<dyn Supplier>] {
        &self.suppliers
    }

    /// The route table as configured: `default` first, then each product
    /// (or `product.provider`) key in order, with its suppliers in order.
    pub fn table(&self) -> Vec<(String, Vec<String>)> {
        let mut keyed: Vec<_> = self.routes.clone().into_iter().collect();
        keyed.sort();
        let mut table = vec![("default".to_owned(), self.default.clone())];
        table.extend(keyed);
        table
    }

    pub fn by_name(&self, name: &str) -> Option<&Arc<dyn Supplier>> {
        self.suppliers.iter().find(|s| s.name() == name)
    }

    /// The suppliers that may fulfil this product from this provider, in order.
    pub fn chain(&self, product: Product, provider: &str) -> Vec<&Arc<dyn Supplier>> {
        let names = self
            .routes
            .get(&format!("{product}.{provider}"))
            .or_else(|| self.routes.get(product.service()))
            .unwrap_or(&self.default);
        names
            .iter()
            .filter_map(|name| self.by_name(name))
            .filter(|s| s.sells(product, provider))
            .collect()
    }

    /// Whether some supplier may fulfil it: a purchase none sells is
    /// refused before any money moves.
    pub fn sells(&self, product: Product, provider: &str) -> bool {
        !self.chain(product, provider).is_empty()
    }

    /// Who verifies a customer of this product and provider: the first
    /// supplier of its chain (the one a purchase goes to first).
    pub fn verifier(&self, product: Product, provider: &str) -> Option<&Arc<dyn Supplier>> {
        self.chain(product, provider).first().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SandboxSupplier;
    use std::time::Duration;

    /// A supplier named `real` that sells no betting.
    struct Real;

    #[async_trait]
    impl Supplier for Real {
        fn name(&self) -> &str {
            "real"
        }
        fn sells(&self, product: Product, _provider: &str) -> bool {
            product != Product::Betting
        }
        async fn verify(&self, _: &VerifyRequest) -> Result<Verification, SupplierError> {
            Ok(Verification::NotFound)
        }
        async fn purchase(&self, _: &Order) -> Result<SupplierStatus, SupplierError> {
            Ok(SupplierStatus::Pending)
        }
        async fn requery(&self, _: &Order) -> Result<SupplierStatus, SupplierError> {
            Ok(SupplierStatus::Pending)
        }
    }

    fn routes(routes: &[(&str, &[&str])]) -> Result<Routes, RoutesError> {
        let suppliers: Vec<Arc<dyn Supplier>> = vec![
            Arc::new(Real),
            Arc::new(SandboxSupplier::new(Duration::ZERO)),
        ];
        let routes = routes
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect();
        Routes::new(suppliers, vec!["real".into()], routes)
    }

    fn names(chain: Vec<&Arc<dyn Supplier>>) -> Vec<&str> {
        chain.into_iter().map(|s| s.name()).collect()
    }

    #[test]
    fn provider_routes_win_and_unsold_products_are_skipped() {
        let r = routes(&[
            ("airtime", &["real", "sandbox"]),
            ("airtime.glo", &["sandbox"]),
        ])
        .unwrap();
        assert_eq!(names(r.chain(Product::Airtime, "mtn")), ["real", "sandbox"]);
        assert_eq!(names(r.chain(Product::Airtime, "glo")), ["sandbox"]);
        assert_eq!(names(r.chain(Product::Data, "mtn")), ["real"]);
        assert_eq!(r.verifier(Product::Data, "mtn").unwrap().name(), "real");
        // `real` sells no betting and the default route has nothing else.
        assert!(names(r.chain(Product::Betting, "bet9ja")).is_empty());
        assert!(!r.sells(Product::Betting, "bet9ja"));
        assert!(r.verifier(Product::Betting, "bet9ja").is_none());
    }

    #[test]
    fn bad_routes_are_refused() {
        assert!(routes(&[("airtim", &["real"])]).is_err());
        let unknown = routes(&[("airtime", &["paystack"])]).err().unwrap();
        assert!(unknown.to_string().contains("(real, sandbox)"), "{unknown}");
        assert!(routes(&[("airtime", &[])]).is_err());
    }

    fn picked<'a>(picks: Vec<Pick<'a>>) -> Vec<(&'a str, bool)> {
        picks
            .into_iter()
            .map(|p| (p.supplier.name(), p.probe))
            .collect()
    }

    fn ordered(orders: &[(&str, &str)]) -> Routes {
        let orders = orders
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        routes(&[
            ("data", &["real", "sandbox"]),
            ("airtime", &["real", "sandbox"]),
        ])
        .unwrap()
        .with_ordering(&orders)
        .unwrap()
    }

    fn costs(real: Option<i64>, sandbox: Option<i64>) -> impl Fn(&dyn Supplier) -> Option<Kobo> {
        move |s| match s.name() {
            "real" => real.map(Kobo),
            _ => sandbox.map(Kobo),
        }
    }

    fn healthy(_: &str) -> HealthState {
        HealthState::Healthy
    }

    #[test]
    fn cheapest_goes_first_and_unknown_costs_last_as_listed() {
        let r = ordered(&[("data", "cheapest")]);
        let pick =
            |real, sandbox| picked(r.pick(Product::Data, "mtn", costs(real, sandbox), healthy));
        assert_eq!(
            pick(Some(300), Some(250)),
            [("sandbox", false), ("real", false)]
        );
        assert_eq!(
            pick(Some(250), Some(300)),
            [("real", false), ("sandbox", false)]
        );
        assert_eq!(
            pick(Some(250), Some(250)),
            [("real", false), ("sandbox", false)],
            "a tie keeps the listed order"
        );
        assert_eq!(
            pick(None, Some(300)),
            [("sandbox", false), ("real", false)],
            "known before unknown"
        );
        assert_eq!(pick(None, None), [("real", false), ("sandbox", false)]);
        // Airtime is not "cheapest": as listed, whatever the costs.
        let airtime = r.pick(
            Product::Airtime,
            "mtn",
            costs(Some(300), Some(250)),
            healthy,
        );
        assert_eq!(picked(airtime), [("real", false), ("sandbox", false)]);
    }

    #[test]
    fn a_providers_ordering_wins_over_its_products() {
        let r = ordered(&[("data", "cheapest"), ("data.glo", "order")]);
        assert_eq!(r.ordering(Product::Data, "mtn"), Ordering::Cheapest);
        assert_eq!(r.ordering(Product::Data, "glo"), Ordering::Listed);
        assert_eq!(r.ordering(Product::Cable, "dstv"), Ordering::Listed);
        let glo = r.pick(Product::Data, "glo", costs(Some(300), Some(250)), healthy);
        assert_eq!(picked(glo), [("real", false), ("sandbox", false)]);
        let bad = |k: &str, v: &str| {
            let orders = HashMap::from([(k.to_owned(), v.to_owned())]);
            routes(&[])
                .unwrap()
                .with_ordering(&orders)
                .err()
                .map(|e| e.to_string())
        };
        assert!(bad("data", "cheap").unwrap().contains("\"cheapest\""));
        assert!(bad("dta", "cheapest").unwrap().contains("not a product"));
        assert_eq!(bad("data.mtn", "order"), None);
    }

    #[test]
    fn a_supplier_backing_off_is_skipped_probed_after_and_used_when_alone() {
        let r = ordered(&[("data", "cheapest")]);
        let cheap_real = costs(Some(250), Some(300));
        let backing_off = |name: &str| match name {
            "real" => HealthState::BackingOff { until_ms: 1 },
            _ => HealthState::Healthy,
        };
        let pick = r.pick(Product::Data, "mtn", &cheap_real, backing_off);
        assert_eq!(
            picked(pick),
            [("sandbox", false)],
            "the cheapest is skipped"
        );
        let probing_elsewhere = |name: &str| match name {
            "real" => HealthState::Probing { until_ms: 1 },
            _ => HealthState::Healthy,
        };
        let pick = r.pick(Product::Data, "mtn", &cheap_real, probing_elsewhere);
        assert_eq!(
            picked(pick),
            [("sandbox", false)],
            "another purchase is its probe"
        );
        let probe_due = |name: &str| match name {
            "real" => HealthState::ProbeDue,
            _ => HealthState::Healthy,
        };
        let pick = r.pick(Product::Data, "mtn", &cheap_real, probe_due);
        assert_eq!(
            picked(pick),
            [("real", true), ("sandbox", false)],
            "this one probes it"
        );
        // Every supplier of the chain backing off: all of them, by cost.
        let all_down = |_: &str| HealthState::BackingOff { until_ms: 1 };
        let pick = r.pick(Product::Data, "mtn", &cheap_real, all_down);
        assert_eq!(picked(pick), [("real", false), ("sandbox", false)]);
        // Betting: only the sandbox sells it (`real` does not); backing off, still used.
        let r = routes(&[("betting", &["real", "sandbox"])]).unwrap();
        let sandbox_down = |name: &str| match name {
            "sandbox" => HealthState::BackingOff { until_ms: 1 },
            _ => HealthState::Healthy,
        };
        let pick = r.pick(Product::Betting, "bet9ja", costs(None, None), sandbox_down);
        assert_eq!(picked(pick), [("sandbox", false)]);
    }
}
