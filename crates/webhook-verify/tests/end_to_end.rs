//! A real sender (`billpay-webhooks`) posting to a real receiver that
//! verifies with this crate, as in the Rust example of docs/webhooks.md.

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use billpay_webhook_verify::verify_now;
use billpay_webhooks::{DeliveryClient, DeliveryConfig, DeliveryRequest};

const SECRET: &str = "whsec_end_to_end";

// The handler from docs/webhooks.md, with the secret as a constant.
async fn billpay_webhook(headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let (Some(timestamp), Some(signature)) =
        (header("x-service-timestamp"), header("x-service-signature"))
    else {
        return StatusCode::UNAUTHORIZED;
    };
    if verify_now(SECRET, timestamp, signature, &body).is_err() {
        return StatusCode::UNAUTHORIZED;
    }
    StatusCode::OK
}

#[tokio::test]
async fn signed_webhook_verifies_over_http() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/billpay/webhook", listener.local_addr().unwrap());
    let app = Router::new().route("/billpay/webhook", post(billpay_webhook));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let client = DeliveryClient::new(DeliveryConfig {
        allow_private: true,
        ..DeliveryConfig::default()
    });
    let body = br#"{"event":"data.purchase","reference_code":"data-000123"}"#;
    let send = |secret| {
        let client = client.clone();
        let url = url.clone();
        async move {
            client
                .deliver(&DeliveryRequest {
                    url: &url,
                    body,
                    secret,
                })
                .await
        }
    };

    let signed = send(Some(SECRET)).await;
    assert!(signed.delivered, "{signed:?}");
    assert_eq!(signed.http_status, Some(200));

    let wrong_secret = send(Some("whsec_someone_else")).await;
    assert_eq!(wrong_secret.http_status, Some(401));
    assert!(!wrong_secret.delivered);

    let unsigned = send(None).await;
    assert_eq!(unsigned.http_status, Some(401));
}
