//! `POST /callbacks/vtpass`: VTpass's transaction-update notification. Never
//! trusted alone (anyone can post to it): it only makes us requery VTpass
//! about that purchase, now. Whatever it says, VTpass gets the answer it
//! expects, `{"response":"success"}` — once the recheck is done, or after
//! [`WAIT`] while it carries on in the background. A duplicate changes
//! nothing, because the requery's answer is what counts.

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use billpay_worker::Fulfilment;
use serde_json::{Value, json};

/// The longest a callback waits for its recheck before it is answered.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

pub fn router(fulfilment: Fulfilment) -> Router {
    Router::new()
        .route("/callbacks/vtpass", post(vtpass))
        .with_state(fulfilment)
}

async fn vtpass(State(fulfilment): State<Fulfilment>, body: Bytes) -> Json<Value> {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let data = &body["data"];
    let request_id = data["requestId"]
        .as_str()
        .or(data["request_id"].as_str())
        .unwrap_or_default();
    match billpay_supplier::vtpass::reference_code(request_id) {
        Some(code) => {
            let recheck = tokio::spawn(async move {
                if let Err(e) = fulfilment.recheck(&code).await {
                    tracing::error!(code, error = %e, "recheck after a VTpass callback failed");
                }
            });
            let _ = tokio::time::timeout(WAIT, recheck).await;
        }
        None => tracing::warn!(
            request_id,
            "VTpass callback for no purchase of ours; ignored"
        ),
    }
    Json(json!({ "response": "success" }))
}
