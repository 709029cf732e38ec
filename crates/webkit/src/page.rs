//! What a page answers: its rendered template, or a [`PageError`] — a ready
//! response (a redirect to sign in, 400, 403, 404…) or a failure logged and
//! answered 500 without detail.

use crate::Scope;
use askama::Template;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use billpay_store::StoreError;

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
