//! The OpenAPI document is committed as `docs/openapi.json`, so an API change
//! shows up in review. Regenerate with `BILLPAY_UPDATE_OPENAPI=1 cargo test -p billpay-api`.

#[test]
fn openapi_document_matches_the_committed_copy() {
    let generated = serde_json::to_string_pretty(&billpay_api::openapi::document()).unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    if std::env::var_os("BILLPAY_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json is out of date: run BILLPAY_UPDATE_OPENAPI=1 cargo test -p billpay-api"
    );
}
