//! The HTTP client every outside system is called with — the suppliers, the
//! payment gateways and identity checks, the SMS provider — so they share
//! one policy instead of each writing its own (issue 45: three builders had
//! three, and Termii's had no connect timeout):
//!
//! - connecting takes at most [`CONNECT_AT_MOST`] (or the call's whole
//!   timeout, if shorter): a host that does not answer is known quickly;
//! - the whole call, and any wait for the next bytes, at most `timeout`
//!   (reqwest has no timeout by default: a stalled peer would hold a task
//!   for good);
//! - no redirects: none of these APIs redirects, and an answer from
//!   elsewhere is not theirs.
//!
//! Customers' webhook receivers are not outside systems of this kind: their
//! client (`billpay-webhooks`) also guards which addresses may be called.

use std::time::Duration;

/// The longest a connection to an outside system may take to open.
pub const CONNECT_AT_MOST: Duration = Duration::from_secs(5);

/// A client whose calls take at most `timeout` in all.
pub fn http_client(timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .connect_timeout(timeout.min(CONNECT_AT_MOST))
        .read_timeout(timeout)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
}
