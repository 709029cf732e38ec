//! Which suppliers may fulfil a purchase, in order: per product, optionally
//! per product and provider (`"airtime.glo"`), else the default list.
//!
//! The fulfilment worker sends a purchase to the first supplier of its chain
//! that sells it and moves to the next only when that one answered `Failed`
//! (definitely not delivered, so not kept charged), never on an unknown
//! outcome. A verification asks the first supplier of the chain.

use crate::*;
use std::collections::HashMap;
use std::sync::Arc;

pub struct Routes {
    suppliers: Vec<Arc<dyn Supplier>>,
    /// `product` or `product.provider` → supplier names, in order.
    routes: HashMap<String, Vec<String>>,
    default: Vec<String>,
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
        })
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
}
