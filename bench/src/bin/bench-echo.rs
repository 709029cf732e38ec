//! The HTTP ceiling of the benchmark: an axum server that answers a JSON
//! POST with the same JSON, on the same runtime settings billpay uses.
//!
//!   bench-echo [ADDRESS]     prints `echo listening on http://ADDRESS`

use axum::routing::post;
use axum::{Json, Router};
use serde_json::Value;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let listener = tokio::net::TcpListener::bind(address).await?;
    println!("echo listening on http://{}", listener.local_addr()?);
    let app = Router::new().route(
        "/echo",
        post(|Json(body): Json<Value>| async { Json(body) }),
    );
    axum::serve(listener, app).await
}
