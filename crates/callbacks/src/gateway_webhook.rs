//! `POST /callbacks/{gateway}` for a funding gateway (`monnify`, `paystack`):
//! the gateway checks its signature over the raw bytes (`401` in the
//! envelope when missing or wrong, nothing recorded), reads the event, and
//! the payment is handed to the worker's [`Funding`], which verifies it with
//! the gateway and credits it once. The caller is answered within
//! [`ANSWER_WITHIN`]: `200` once the payment is recorded (credited,
//! unmatched or rejected) or the event is not a payment; non-2xx when the
//! gateway could not verify it, so the gateway sends it again.

use axum::Json;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use billpay_api::envelope::{ErrorBody, Failure};
use billpay_funding::{SharedGateway, Webhook};
use billpay_worker::CheckoutOutcome;
use billpay_worker::payment_settlement::{Funding, FundingError};
use serde_json::json;
use std::time::Duration;

/// Gateways give up on a webhook after a few seconds (Monnify, Paystack):
/// answer before, whatever the verify call does.
pub const ANSWER_WITHIN: Duration = Duration::from_millis(4_500);

pub(crate) async fn receive(
    funding: &Funding,
    gateway: &SharedGateway,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let name = gateway.name();
    let webhook = match gateway.read_webhook(headers, body) {
        Ok(webhook) => webhook,
        Err(refused) => {
            tracing::warn!(gateway = name, %refused, "funding webhook refused");
            return error(
                StatusCode::UNAUTHORIZED,
                "invalid_signature",
                refused.to_string(),
            );
        }
    };
    match webhook {
        Webhook::Ignore(why) => {
            tracing::info!(gateway = name, why, "funding webhook ignored");
            received("ignored")
        }
        Webhook::Assigned(reservation) => match funding.take_assignment(name, reservation).await {
            Ok(_) => received("accounts_saved"),
            Err(e) => internal(name, e.to_string()),
        },
        Webhook::Checkout(notice) => checkout_paid(funding, name, notice.reference).await,
        Webhook::Payment(notice) => {
            let reference = notice.reference.clone();
            // Its own task: a gateway that hangs up (or gives up) does not
            // cancel a payment half settled; it finishes and is recorded.
            let (funding, gateway) = (funding.clone(), gateway.clone());
            let settling = tokio::spawn(async move { funding.take_notice(&gateway, notice).await });
            match tokio::time::timeout(ANSWER_WITHIN, settling).await {
                Ok(Ok(Ok(recorded))) => received(recorded.event.status.as_str()),
                Ok(Ok(Err(FundingError::Unverified { why, .. }))) => error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "verification_pending",
                    format!("payment {reference} could not be verified yet ({why}); send it again"),
                ),
                Ok(Ok(Err(FundingError::Store(e)))) => internal(name, e.to_string()),
                Ok(Err(panicked)) => internal(name, panicked.to_string()),
                Err(_) => {
                    tracing::warn!(
                        gateway = name,
                        reference,
                        "funding webhook not settled in time"
                    );
                    error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "verification_pending",
                        format!("payment {reference} could not be verified in time; send it again"),
                    )
                }
            }
        }
    }
}

/// A hosted checkout's `charge.success`: verified and credited once by the
/// worker (in its own task, like a transfer), whoever else saw it first.
async fn checkout_paid(funding: &Funding, name: &str, reference: String) -> Response {
    let settling = {
        let (funding, reference) = (funding.clone(), reference.clone());
        tokio::spawn(async move { funding.take_checkout(&reference).await })
    };
    match tokio::time::timeout(ANSWER_WITHIN, settling).await {
        Ok(Ok(Ok(outcome))) => received(match outcome {
            CheckoutOutcome::Credited { .. } => "credited",
            CheckoutOutcome::NotPaid(_)
            | CheckoutOutcome::Failed(_)
            | CheckoutOutcome::Abandoned(_) => "rejected",
            CheckoutOutcome::NotOurs => "ignored",
        }),
        Ok(Ok(Err(FundingError::Store(e)))) => internal(name, e.to_string()),
        Ok(Ok(Err(FundingError::Unverified { why, .. }))) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "verification_pending",
            format!("payment {reference} could not be verified yet ({why}); send it again"),
        ),
        Ok(Err(panicked)) => internal(name, panicked.to_string()),
        Err(_) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "verification_pending",
            format!("payment {reference} could not be verified in time; send it again"),
        ),
    }
}

fn received(outcome: &str) -> Response {
    Json(json!({"code": 200, "status": "success", "data": {"received": true, "outcome": outcome}}))
        .into_response()
}

fn error(status: StatusCode, slug: &'static str, message: String) -> Response {
    let body = ErrorBody {
        code: status.as_u16(),
        status: Failure::Error,
        message,
        error: slug,
        reference_code: None,
    };
    (status, Json(body)).into_response()
}

fn internal(gateway: &str, cause: String) -> Response {
    tracing::error!(gateway, cause, "funding webhook: internal error");
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal_error",
        "Internal error".into(),
    )
}
