//! The start-up check of a real supplier: one harmless call (its balance)
//! that tells a working setup from refused credentials or a base URL that
//! points elsewhere, before the first customer's purchase finds out.

use crate::{Kobo, Supplier, SupplierError};

/// What the check found.
#[derive(Debug, Clone)]
pub enum Health {
    /// It answered like itself: our float there (`None`: it keeps none).
    Ready(Option<Kobo>),
    /// It cannot serve purchases as configured; the message says what to fix.
    Broken(String),
}

/// Asks `supplier` for its balance. `base_url` and `settings` (e.g.
/// `BILLPAY_VTPASS_`) only shape the message.
pub async fn check(supplier: &dyn Supplier, base_url: &str, settings: &str) -> Health {
    let name = supplier.name();
    match supplier.balance().await {
        None => Health::Ready(None),
        Some(Ok(balance)) => Health::Ready(Some(balance)),
        Some(Err(SupplierError::Refused(why))) => Health::Broken(format!(
            "{name} refused the credentials ({why}): check {settings}* (keys of the live and \
             sandbox sites differ, and some suppliers also require your server's IP address \
             to be allowed)"
        )),
        Some(Err(SupplierError::NotThisSupplier(why))) => Health::Broken(format!(
            "{base_url} does not answer like {name} ({why}): check {settings}BASE_URL"
        )),
        Some(Err(SupplierError::Unavailable(why) | SupplierError::NeedsReview(why))) => {
            Health::Broken(format!(
                "{name} at {base_url} cannot be reached ({why}): check {settings}BASE_URL, or \
             start with --skip-supplier-check if {name} is down right now"
            ))
        }
    }
}

/// What `billpay serve`'s start-up check found for one real supplier, kept
/// for the console's suppliers page.
#[derive(Debug, Clone)]
pub struct StartCheck {
    pub supplier: String,
    /// RFC 3339.
    pub at: String,
    /// `None`: not checked (`--skip-supplier-check`).
    pub health: Option<Health>,
}

/// A supplier's float now, against the low-balance level: what `billpay
/// supplier balance`, the float watcher and the console show.
#[derive(Debug, Clone)]
pub struct Float {
    pub balance: Result<Kobo, String>,
    /// Under the level (`false` without a level or a balance).
    pub low: bool,
}

/// The float of `supplier`; `None`: it keeps none (the sandbox).
pub async fn float(supplier: &dyn Supplier, threshold: Option<Kobo>) -> Option<Float> {
    let balance = supplier.balance().await?.map_err(|e| e.to_string());
    let low = match (&balance, threshold) {
        (Ok(balance), Some(threshold)) => *balance < threshold,
        _ => false,
    };
    Some(Float { balance, low })
}
