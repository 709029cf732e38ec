//! Purchases fulfilled by ClubKonnect, alone and beside VTpass, against the
//! test kit's fake ClubKonnect (support/clubkonnect.rs) and fake VTpass;
//! the start-up check of both suppliers.

mod fulfilment;
mod health;
mod reversals;
mod routes;

pub use crate::support::clubkonnect::FakeClubkonnect;
pub use crate::support::vtpass::FakeVtpass;
pub use crate::support::{Options, TestServer};
pub use crate::vtpass::{buy, until};
pub use serde_json::{Value, json};
pub use std::time::Duration;

/// `billpay serve` with ClubKonnect configured (and the default supplier),
/// plus `extra`; ClubKonnect's calls time out after 1 s.
pub async fn server_with(fake: &FakeClubkonnect, extra: &[(&str, &str)]) -> TestServer {
    let env = fake.env();
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.push(("BILLPAY_SUPPLIER", "clubkonnect"));
    all.push(("BILLPAY_CLUBKONNECT_TIMEOUT_MS", "1000"));
    all.extend_from_slice(extra);
    TestServer::spawn_with_env(Options::default(), &all).await
}

pub fn airtime(phone: &str) -> Value {
    json!({ "provider_id": "mtn", "amount": 500, "phone": phone })
}

/// Who served a transaction and its reference there (`transaction show`).
pub fn served_by(server: &TestServer, code: &str) -> (String, String) {
    let shown = &server.cli(&["transaction", "show", code])["transaction"];
    let text = |key: &str| shown[key].as_str().unwrap_or_default().to_owned();
    (text("supplier"), text("supplier_reference"))
}
