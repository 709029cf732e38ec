mod support;
use serde_json::json;
use support::*;

#[tokio::test]
async fn smoke_electricity_end_to_end() {
    let server = TestServer::spawn().await;
    let c = server.customer("10000");
    let r = server
        .post(
            &c.api_key,
            "/v1/electricity/purchase",
            electricity(&reference(), "12345678901", 1500.0),
        )
        .await;
    let code = r.assert_ok()["reference_code"].as_str().unwrap().to_owned();
    let done = server.wait_final(&c.api_key, &code).await;
    assert_eq!(done["status"], "successful");
    let _ = json!({});
}
