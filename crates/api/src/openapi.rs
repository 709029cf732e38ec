//! The OpenAPI document. Every endpoint is annotated where it is defined;
//! the `/test` twins are derived here from their live operations.

use crate::routes::{catalogue, purchases, transactions, verify, wallet};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "billpay", description = "Self-hostable bill-payment API: airtime, data, cable TV, electricity, exam pins, e-pins and betting top-ups from a prepaid wallet. Every success is `{code: 200, status: \"success\", data}`; every error `{code, status: \"error\", message, error}` with `code` equal to the HTTP status. Amounts are Naira with at most 2 decimal places."),
    paths(
        wallet::balance,
        catalogue::providers, catalogue::providers_by_service, catalogue::data_categories,
        catalogue::data_plans, catalogue::cable_plans, catalogue::epin_denominations,
        purchases::airtime, purchases::data, purchases::epin, purchases::cable,
        purchases::electricity, purchases::education, purchases::bet,
        verify::cable, verify::electricity, verify::bet,
        transactions::status, transactions::epin_batch,
    ),
    components(schemas(purchases::TestPurchaseOut)),
    modifiers(&BearerAuth, &TestTwins),
    security(("bearer" = [])),
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Adds `/v1/test/...` for every purchase and verification endpoint.
struct TestTwins;

impl Modify for TestTwins {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let twins: Vec<_> = openapi
            .paths
            .paths
            .iter()
            .filter(|(path, _)| path.ends_with("/purchase") || path.ends_with("/verify"))
            .map(|(path, item)| {
                let mut item = item.clone();
                if let Some(op) = item.post.as_mut() {
                    op.operation_id = op.operation_id.as_ref().map(|id| format!("test_{id}"));
                    op.tags = Some(vec!["test mode".into()]);
                    op.summary = Some(format!(
                        "Test twin of {path}: same checks and errors, nothing debited, recorded or sent"
                    ));
                }
                (path.replacen("/v1/", "/v1/test/", 1), item)
            })
            .collect();
        openapi.paths.paths.extend(twins);
    }
}

pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
