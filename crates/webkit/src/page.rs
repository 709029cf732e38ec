//! What a page answers: its rendered template, or a [`PageError`] — a ready
//! response (a redirect to sign in, 400, 403, 404…) or a failure logged and
//! answered 500 without detail.

use crate::Scope;
use crate::chart::escape;
use askama::Template;
use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use billpay_store::StoreError;
use std::any::Any;
use tower_http::catch_panic::{CatchPanicLayer, ResponseForPanic};

pub type PageResult = Result<Response, PageError>;

/// A template as an HTML page; a template that fails is a 500.
pub fn render(template: &impl Template) -> Response {
    match template.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => PageError::internal(&e).into_response(),
    }
}

/// What a page answers instead of itself. A store error becomes one with `?`.
pub struct PageError(Box<Response>);

impl PageError {
    /// Logged with its cause; the visitor sees no detail.
    pub fn internal(error: &dyn std::fmt::Display) -> PageError {
        tracing::error!(%error, "web page error");
        let message = "Something went wrong. Please try again.";
        Self::status(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// A plain-text answer with this status.
    pub fn status(status: StatusCode, message: impl Into<String>) -> PageError {
        (status, message.into()).into_response().into()
    }

    pub fn bad_request(message: impl Into<String>) -> PageError {
        Self::status(StatusCode::BAD_REQUEST, message)
    }

    /// A 404 page with the way back to the UI's home.
    pub fn not_found(scope: &Scope) -> PageError {
        let page = Html(format!(
            "<h1>Not found</h1><p><a href=\"{}\">Back to the {}</a></p>",
            scope.home, scope.name
        ));
        (StatusCode::NOT_FOUND, page).into_response().into()
    }
}

impl From<Response> for PageError {
    fn from(response: Response) -> Self {
        PageError(Box::new(response))
    }
}

impl From<StoreError> for PageError {
    fn from(error: StoreError) -> Self {
        PageError::internal(&error)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        *self.0
    }
}

/// A page in the kit's style (its stylesheet at `{home}/assets/kit.css`): a
/// card with a heading, a message (escaped) and the way back to the UI's home.
pub fn error_page(scope: &Scope, status: StatusCode, heading: &str, message: &str) -> Response {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{heading}</title>\
         <link rel=\"stylesheet\" href=\"{home}/assets/kit.css\"></head>\
         <body><main><div class=\"card\"><h1>{heading}</h1>\
         <p class=\"error\" role=\"alert\" id=\"page-error\">{message}</p>\
         <p><a href=\"{home}\">Back to the {name}</a></p></div></main></body></html>",
        heading = escape(heading),
        message = escape(message),
        name = scope.name,
        home = scope.home,
    );
    (status, Html(page)).into_response()
}

/// The layer every UI's router has (as the API has its own): a handler that
/// panics answers a 500 page in the kit's style, never an empty reply; the
/// panic is logged, the visitor sees no detail.
pub fn catch_panics(scope: Scope) -> CatchPanicLayer<PanicPage> {
    CatchPanicLayer::custom(PanicPage(scope))
}

/// The answer to a panic, for [`catch_panics`].
#[derive(Clone)]
pub struct PanicPage(Scope);

impl ResponseForPanic for PanicPage {
    type ResponseBody = Body;

    fn response_for_panic(&mut self, panic: Box<dyn Any + Send + 'static>) -> Response {
        let detail = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tracing::error!(ui = self.0.name, panic = %detail, "web page handler panicked");
        let message = "Something went wrong on our side. Please try again, or go back.";
        error_page(
            &self.0,
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            message,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::get;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    const SCOPE: Scope = Scope {
        name: "console",
        home: "/admin",
        sign_in: "/admin/login",
        session_cookie: "s",
        sign_in_cookie: "l",
        lifetime: std::time::Duration::from_secs(60),
        users: billpay_domain::throttle::Kind::Operator,
    };

    #[tokio::test]
    async fn a_panicking_handler_answers_a_page_in_the_kits_style() {
        async fn boom() -> &'static str {
            panic!("secret detail <b>")
        }
        let app = Router::new()
            .route("/admin/boom", get(boom))
            .layer(catch_panics(SCOPE));
        let request = axum::http::Request::get("/admin/boom")
            .body(Body::empty())
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(kind.starts_with("text/html"), "{kind}");
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let html = String::from_utf8(body.to_vec()).unwrap();
        assert!(html.contains("<h1>Something went wrong</h1>"), "{html}");
        assert!(html.contains("href=\"/admin/assets/kit.css\""), "{html}");
        assert!(html.contains("Back to the console"), "{html}");
        assert!(!html.contains("secret detail"), "no detail shown: {html}");
        // a buyer's shop wears the business's brand: never ours
        assert!(!html.contains("billpay"), "{html}");
    }

    #[test]
    fn an_error_page_escapes_its_text() {
        let page = error_page(&SCOPE, StatusCode::BAD_REQUEST, "Not <done>", "a \"b\" & c");
        assert_eq!(page.status(), StatusCode::BAD_REQUEST);
    }
}
