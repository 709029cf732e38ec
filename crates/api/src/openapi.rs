//! The OpenAPI document. Every endpoint is annotated where it is defined, with
//! the types its handler returns, and its paths come from the routes
//! themselves (`routes::v1`); the error answers every route shares (auth,
//! rate limit, body checks) and what sets the `/test` twins apart are added here.

use crate::envelope::{Envelope, ErrorBody};
use crate::routes::purchases::TestPurchaseOut;
use crate::routes::{self, transactions};
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, RefOr};
use utoipa::{Modify, OpenApi, PartialSchema};

#[derive(OpenApi)]
#[openapi(
    info(title = "billpay", description = "Self-hostable bill-payment API: airtime, data, cable TV, electricity, exam pins, e-pins and betting top-ups from a prepaid wallet. Every success is `{code: 200, status: \"success\", data}`; every error `{code, status: \"error\", message, error}` with `code` equal to the HTTP status. Amounts are Naira with at most 2 decimal places."),
    components(schemas(ErrorBody, TestPurchaseOut, transactions::StatusLookup, billpay_webhooks::BatchCompleted)),
    modifiers(&BearerAuth),
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

/// Documents on every operation each error status it can answer, all with the
/// `ErrorBody` envelope: 401/403/429 from the auth middleware, 400/408/413/415/422
/// from the JSON body extractor, 422 from the query extractor, 400 from the
/// path extractor; statuses an
/// endpoint annotates itself (404, 422, 503) keep their description.
struct ErrorAnswers;

impl Modify for ErrorAnswers {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            for operation in [item.get.as_mut(), item.post.as_mut(), item.delete.as_mut()]
                .into_iter()
                .flatten()
            {
                let annotated = operation.responses.responses.keys().cloned();
                let mut statuses: Vec<(String, &str)> = annotated.map(|s| (s, "")).collect();
                statuses.extend(error_statuses(operation).map(|(s, d)| (s.to_owned(), d)));
                for (status, description) in
                    statuses.into_iter().filter(|(s, _)| !s.starts_with('2'))
                {
                    let responses = &mut operation.responses.responses;
                    let description = match responses.remove(&status) {
                        Some(RefOr::T(annotated)) => annotated.description,
                        _ => description.to_owned(),
                    };
                    let answer = error_response(&status, description);
                    responses.insert(status, RefOr::T(answer));
                }
            }
        }
    }
}

fn error_statuses(operation: &Operation) -> impl Iterator<Item = (&'static str, &'static str)> {
    let mut statuses = vec![
        ("401", "missing_api_key, invalid_api_key"),
        ("403", "suspended: the key or its account"),
        ("429", "rate_limited: retry after `Retry-After` seconds"),
    ];
    if operation.request_body.is_some() {
        statuses.extend([
            ("400", "invalid_json: the body is not JSON"),
            (
                "408",
                "request_timeout: the body stalled past the server's body timeout",
            ),
            ("413", "payload_too_large: the body is over 64 KiB"),
            (
                "415",
                "unsupported_media_type: Content-Type must be application/json",
            ),
            ("422", "validation_error"),
        ]);
    }
    let has = |place: ParameterIn| {
        let mut parameters = operation.parameters.iter().flatten();
        parameters.any(|p| p.parameter_in == place)
    };
    if has(ParameterIn::Query) {
        statuses.push((
            "422",
            "validation_error: a query parameter is missing or invalid",
        ));
    }
    if has(ParameterIn::Path) {
        statuses.push(("400", "bad_request: a path segment is not valid UTF-8"));
    }
    statuses.into_iter()
}

fn error_response(status: &str, description: String) -> Response {
    let mut response = ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ErrorBody")))
            .build(),
    );
    if status == "429" {
        let seconds = HeaderBuilder::new()
            .schema(u64::schema())
            .description(Some("Seconds to wait"))
            .build();
        response = response.header("Retry-After", seconds);
    }
    response.build()
}

/// Tells each `/v1/test/...` twin (routed under `/test`, so far documented
/// as its live endpoint) apart from the live one.
struct TestTwins;

impl Modify for TestTwins {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let twins = openapi.paths.paths.iter_mut();
        for (path, item) in twins.filter(|(path, _)| path.starts_with("/v1/test/")) {
            let Some(op) = item.post.as_mut() else {
                continue;
            };
            let live = path.replacen("/v1/test/", "/v1/", 1);
            op.operation_id = op.operation_id.as_ref().map(|id| format!("test_{id}"));
            op.tags = Some(vec!["test mode".into()]);
            op.summary = Some(format!(
                "Test twin of {live}: same checks and errors, nothing debited, recorded or sent"
            ));
            if path.ends_with("/purchase") {
                answer_test_purchase(op);
            }
        }
    }
}

/// A purchase twin answers what a live call would deduct, not an accepted purchase.
fn answer_test_purchase(operation: &mut Operation) {
    let ok = ResponseBuilder::new()
        .description("Checked: nothing was deducted, recorded or sent")
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Envelope::<TestPurchaseOut>::schema()))
                .build(),
        )
        .build();
    operation
        .responses
        .responses
        .insert("200".to_owned(), RefOr::T(ok));
}

/// The document of the `/v1` routes, built from the routes themselves.
pub fn document() -> utoipa::openapi::OpenApi {
    document_of(routes::v1().into_openapi())
}

/// The whole document around `v1`, the OpenAPI paths (relative to `/v1`) of
/// the routes served.
pub(crate) fn document_of(v1: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    let mut document = ApiDoc::openapi().nest("/v1", v1);
    ErrorAnswers.modify(&mut document);
    TestTwins.modify(&mut document);
    document
}
