//! Inbound callbacks: a supplier that notifies us over HTTP
//! (`POST` or `GET /callbacks/{name}`) of a change to one of our purchases. A notice is
//! never trusted alone (anyone can post one): at most it names a purchase to
//! recheck with the supplier now. Each supplier that sends callbacks reads
//! its own format here; `billpay-callbacks` serves them all and guards the
//! rechecks they cause.

use std::sync::Arc;

/// A callback as received.
pub struct CallbackRequest<'a> {
    /// For a supplier that signs its callbacks.
    pub headers: &'a reqwest::header::HeaderMap,
    pub body: &'a [u8],
    /// The query string (a supplier that calls back with a GET), undecoded.
    pub query: &'a str,
}

/// What a callback asks of us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Ask the supplier about this purchase now (our reference_code).
    Recheck { reference_code: String },
    /// Nothing of ours, or unreadable: answered and ignored (why, for the log).
    Ignore(String),
}

/// A supplier that sends callbacks, served at `/callbacks/{name}`.
pub trait Callbacks: Send + Sync + 'static {
    /// The `{name}` of its endpoint.
    fn name(&self) -> &'static str;
    /// Checks (its signature, if it signs them) and reads one callback.
    fn read(&self, request: &CallbackRequest) -> Notice;
    /// The JSON body the supplier expects in answer, whatever the notice said.
    fn answer(&self) -> serde_json::Value;
}

/// Every supplier whose callbacks billpay serves (those of the registry,
/// [`crate::registry::SUPPLIERS`], with a callback reader).
pub fn all() -> Vec<Arc<dyn Callbacks>> {
    let registry = crate::registry::SUPPLIERS.iter();
    registry
        .filter_map(|r| r.callbacks)
        .map(|reader| reader())
        .collect()
}
