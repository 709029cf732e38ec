//! Inbound notifications, one home: `/callbacks/{name}` (a POST with a body,
//! as VTpass sends, or a GET with a query, as ClubKonnect does). The supplier
//! named (later, a payment gateway) checks and reads its own request
//! ([`billpay_supplier::callback::Callbacks`]) into "recheck this purchase",
//! which is handed to the fulfilment worker's [`Fulfilment::recheck`].
//!
//! Anyone can post here, so a callback is never trusted and never costs more
//! than the [`guard`] allows: the caller is answered at once (the recheck runs
//! in the background), only a request id that names a purchase sent to that
//! supplier is admitted (one indexed read, a bounded number at once), a
//! purchase is rechecked at most once at a time and once per interval (more
//! callbacks are coalesced into one pending recheck after it, so the last
//! word is never lost), the endpoint has a bound on rechecks in flight and on
//! the memory it keeps, and bodies are capped.
//!
//! A funding gateway's webhooks (`/callbacks/monnify`, `/callbacks/paystack`)
//! come here too ([`funding`]): checked, read, and handed to the worker's
//! `Funding`, which verifies and credits them once.
//!
//! A crate of its own rather than a module of `billpay-api`: the API serves
//! `/v1` to key holders and never calls a supplier about a purchase, while
//! this calls the worker; the binary only mounts [`router`].

pub mod gateway_webhook;
pub mod guard;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router, middleware};
use billpay_api::envelope::ensure_json_errors;
use billpay_api::error::ApiError;
use billpay_domain::json::{MAX_NESTING, check_nesting};
use billpay_supplier::callback::{CallbackRequest, Callbacks, Notice};
use billpay_worker::{Fulfilment, Funding};
use guard::{Admitted, Limits, RecheckGuard, Refused};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Callbacks whose purchase is being looked up at once (each one indexed
/// read); more wait up to [`LOOKUP_WAIT`], then are dropped.
pub const MAX_LOOKUPS: usize = 8;
const LOOKUP_WAIT: Duration = Duration::from_secs(1);

/// The largest callback body read (VTpass's are under 2 KiB); larger is `413`.
pub const MAX_BODY: usize = 64 * 1024;

struct Inbound {
    senders: Vec<Arc<dyn Callbacks>>,
    fulfilment: Fulfilment,
    /// The funding gateways (none when no gateway is configured).
    funding: Funding,
    guard: Arc<RecheckGuard>,
    lookups: Semaphore,
}

/// `/callbacks/{name}` for each of `senders` and each funding gateway;
/// anything else there is `404`.
pub fn router(
    senders: Vec<Arc<dyn Callbacks>>,
    fulfilment: Fulfilment,
    funding: Funding,
    limits: Limits,
) -> Router {
    let inbound = Arc::new(Inbound {
        senders,
        fulfilment,
        funding,
        guard: Arc::new(RecheckGuard::new(limits)),
        lookups: Semaphore::new(MAX_LOOKUPS),
    });
    Router::new()
        .route("/callbacks/{name}", post(receive).merge(get(receive)))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::map_response(ensure_json_errors))
        .with_state(inbound)
}

async fn receive(
    State(inbound): State<Arc<Inbound>>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(gateway) = inbound.funding.gateway(&name) {
        return gateway_webhook::receive(&inbound.funding, gateway, &headers, &body).await;
    }
    let Some(sender) = inbound.senders.iter().find(|s| s.name() == name) else {
        return ApiError::NotFound("No such endpoint".into()).into_response();
    };
    // Nesting is bounded before any adapter parses the body (a few KiB of
    // `[[[[…` must not cost a stack); too deep is a body we do not understand.
    if let Err(too_deep) = check_nesting(&body, MAX_NESTING) {
        tracing::warn!(sender = sender.name(), %too_deep, "callback ignored");
        return Json(sender.answer()).into_response();
    }
    let request = CallbackRequest {
        headers: &headers,
        body: &body,
        query: query.as_deref().unwrap_or(""),
    };
    match sender.read(&request) {
        Notice::Recheck { reference_code } => {
            inbound.recheck_soon(sender.name(), reference_code).await
        }
        Notice::Ignore(why) => tracing::warn!(sender = sender.name(), why, "callback ignored"),
    }
    Json(sender.answer()).into_response()
}

impl Inbound {
    /// Starts the recheck of `code` in the background, if it names a purchase
    /// sent to `sender` and the guard lets it (now, or pending after the
    /// current one's interval).
    async fn recheck_soon(&self, sender: &'static str, code: String) {
        if !self.names_purchase(sender, &code).await {
            return;
        }
        let fulfilment = self.fulfilment.clone();
        let recheck_code = code.clone();
        let recheck = move || {
            let (fulfilment, code) = (fulfilment.clone(), recheck_code.clone());
            async move {
                if let Err(e) = fulfilment.recheck(&code).await {
                    tracing::error!(sender, code, error = %e, "recheck after a callback failed");
                }
            }
        };
        match self.guard.request(&code, recheck) {
            Ok(Admitted::Now) => {}
            Ok(Admitted::Pending) => tracing::debug!(
                sender,
                code,
                "callback during a recheck or its interval: one more recheck after it"
            ),
            Err(Refused::Coalesced) => {
                tracing::debug!(sender, code, "callback coalesced: {}", Refused::Coalesced)
            }
            Err(refused) => tracing::warn!(sender, code, %refused, "callback dropped: no recheck"),
        }
    }

    /// Whether `code` names a purchase sent to `sender`: one indexed read,
    /// at most [`MAX_LOOKUPS`] at once (a caller waits up to a second for
    /// one), so ids of nothing never take a place in the guard's table.
    async fn names_purchase(&self, sender: &'static str, code: &str) -> bool {
        let wait = tokio::time::timeout(LOOKUP_WAIT, self.lookups.acquire()).await;
        let Ok(Ok(_slot)) = wait else {
            tracing::warn!(
                sender,
                code,
                "callback dropped: too many callbacks being looked up"
            );
            return false;
        };
        match self.fulfilment.sent_to(code, sender).await {
            Ok(true) => true,
            Ok(false) => {
                tracing::warn!(
                    sender,
                    code,
                    "callback ignored: no purchase of ours sent there"
                );
                false
            }
            Err(e) => {
                tracing::error!(sender, code, error = %e, "callback dropped: its purchase could not be looked up");
                false
            }
        }
    }
}
